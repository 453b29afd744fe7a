"""Leader election for the controllers of ``pyocm hub`` replicas on one etcd.

Every replica serves the API; the controllers that write run in one replica at a time,
each set under a Lease as its upstream runs it:

- the server's own controllers (garbage collector, CSR signer and cleaner, namespace
  finalization, ClusterRole aggregation, event TTL) under ``kube-system/
  kube-controller-manager``, kube-controller-manager's Lease. A replica that does not
  hold it keeps their queues current and works them the moment it takes the Lease over.
- the OCM hub controllers under ``open-cluster-management-hub/pyocm-hub-controllers``,
  as ``pyocm controller`` runs them. A replica losing that Lease stops them and
  campaigns again with new ones (nothing of a term carries into the next).

The electors reach the API through the admin kubeconfig, as kube-controller-manager
reaches kube-apiserver, with client-go's timings (lease 15 s, renew 10 s, retry 2 s):
after a replica dies, another takes over within about 15 s.
"""

from __future__ import annotations

import logging
import socket
import uuid

from pyocm import hubmanager
from pyocm.apiserver.server import HubServer
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.registration.hub.manager import LEADER_LEASE, LEADER_NAMESPACE, HubOptions
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import ensure
from pyocm.runtime.leaderelection import LeaderElector
from pyocm.runtime.manager import LeadershipLost

log = logging.getLogger("pyocm.hub")

#: kube-controller-manager's Lease (its --leader-elect-resource-namespace and -name).
CONTROLLER_MANAGER_NAMESPACE = "kube-system"
CONTROLLER_MANAGER_LEASE = "kube-controller-manager"


def replica_identity() -> str:
    """``<hostname>_<uuid>``, as kube-controller-manager names its candidates: unique
    per process, and it says which host leads."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


async def run_server_controllers(server: HubServer, api: Api, *, identity: str) -> None:
    """Lead the server's controllers while holding kube-controller-manager's Lease, and
    campaign again whenever it is lost; until cancelled, then release the Lease."""
    elector = LeaderElector(
        api,
        namespace=CONTROLLER_MANAGER_NAMESPACE,
        name=CONTROLLER_MANAGER_LEASE,
        identity=identity,
    )
    try:
        while True:
            await elector.acquire()
            log.info(
                "leading the server's controllers (Lease %s/%s) as %s",
                CONTROLLER_MANAGER_NAMESPACE,
                CONTROLLER_MANAGER_LEASE,
                identity,
            )
            server.lead_controllers()
            await elector.hold()
            log.warning(
                "lost Lease %s/%s: following",
                CONTROLLER_MANAGER_NAMESPACE,
                CONTROLLER_MANAGER_LEASE,
            )
            await server.follow_controllers()
    finally:
        await server.follow_controllers()
        await elector.release()  # a successor need not wait the Lease out


async def run_hub_controllers(api: Api, options: HubOptions) -> None:
    """The OCM hub controllers under their Lease, campaigning again after a loss with
    controllers built anew; until cancelled."""
    try:
        await ensure(
            api, kinds.NAMESPACE, {"metadata": {"name": LEADER_NAMESPACE}}, create_only=True
        )
    except ApiError as err:
        if err.code != 409:
            raise  # 409: another replica starting with this one created it in between
    while True:
        elector = LeaderElector(
            api, namespace=LEADER_NAMESPACE, name=LEADER_LEASE, identity=options.identity
        )
        try:
            await hubmanager.build(api, options=options).run(elector=elector)
        except LeadershipLost as err:
            log.warning("hub controllers: %s; campaigning again", err)

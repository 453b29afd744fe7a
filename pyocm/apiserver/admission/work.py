"""ManifestWork admission, built into the hub as upstream runs its work webhook
(``pkg/work/webhook``) beside kube-apiserver: the rules are :mod:`pyocm.hooks.work`,
run by :class:`pyocm.apiserver.admission.ocm.HookPlugin`.

What a client reads: kube-apiserver turns a webhook's denial into a Status with the
webhook's code and reason (400 BadRequest for every rule here, as upstream's webhook
answers ``apierrors.NewBadRequest``) and the message
``admission webhook "<webhook name>" denied the request: <message>``. pyocm answers the
same, with upstream's webhook names, so tools matching upstream's text keep working.

Creating works needs RBAC upstream leaves to the hub admin: no default role grants a
user ``create`` on ``manifestworks`` (Kubernetes' ``admin`` and ``edit`` aggregate no
OCM kinds). A Role in the cluster namespace with ``create``/``update``/``patch``/
``delete`` on ``manifestworks`` (and ``execute-as`` with resourceNames
``system:serviceaccount:<ns>:<name>`` for works with an executor) is what a user needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyocm.apiserver.admission.chain import Plugin
from pyocm.apiserver.admission.ocm import HookPlugin, hook_config
from pyocm.hooks import webhooks

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState


def work_plugins(state: ServerState) -> list[Plugin]:
    """The work webhook's rules, with the server's manifest limit and hub gates."""
    return [
        HookPlugin(state, webhook)
        for webhook in webhooks.enabled(hook_config(state), webhooks.WORK)
    ]

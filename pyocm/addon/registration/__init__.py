"""Registration of add-on agents, hub side: the ManagedClusterAddOn's registrations and
install namespace, approval and signing of add-on agents' CSRs, and the agents' hub
permissions (upstream addon-framework's registration and certificate controllers)."""

from pyocm.addon.registration.approve import (
    AddonCsrApprover,
    default_csr_approver,
    kube_client_csr_approver,
)
from pyocm.addon.registration.manager import add_addon_registration_controllers
from pyocm.addon.registration.namespace import install_namespace_from_deployment_config
from pyocm.addon.registration.permissions import CurrentCluster, SingleNamespace, hub_permissions
from pyocm.addon.registration.sign import ca_secret_signer

__all__ = [
    "AddonCsrApprover",
    "CurrentCluster",
    "SingleNamespace",
    "add_addon_registration_controllers",
    "ca_secret_signer",
    "default_csr_approver",
    "hub_permissions",
    "install_namespace_from_deployment_config",
    "kube_client_csr_approver",
]

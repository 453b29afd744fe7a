"""What the registration controller writes into a ManagedClusterAddOn's status, computed
from the add-on's options (upstream's ``addonRegistrationController``, ocm-behaviour.md
4.9): ``status.registrations`` in the v1beta1 shape, ``status.namespace``,
``status.supportedConfigs``, and the ``RegistrationApplied`` condition's three outcomes.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Literal

from pyocm.addon.agent import (
    AgentAddonOptions,
    RegistrationConfig,
    default_groups,
    default_user,
)
from pyocm.api import wellknown
from pyocm.api.models.addon_v1beta1 import (
    ManagedClusterAddOn,
    ManagedClusterAddOnStatusRegistration,
    ManagedClusterAddOnStatusRegistrationCustomSignerSubject,
    ManagedClusterAddOnStatusRegistrationKubeClient,
    ManagedClusterAddOnStatusRegistrationKubeClientSubject,
    ManagedClusterAddOnStatusSupportedConfig,
)

KUBE_CLIENT = "kubeClient"
CUSTOM_SIGNER = "customSigner"
CONFIGURED = "Registration of the addon agent is configured"
SET_PERMISSION_APPLIED = "SetPermissionApplied"
SET_PERMISSION_FAILED = "SetPermissionFailed"
PERMISSION_CONFIG_PENDING = "PermissionConfigPending"
NIL_REGISTRATION = "NilRegistration"
SUBJECT_NOT_READY = "registration subject not ready"


def registration_api(config: RegistrationConfig) -> ManagedClusterAddOnStatusRegistration:
    """``RegistrationAPI()``: one registration as the API holds it. Go always writes a
    subject's ``user`` (no omitempty), and a kubeClient's subject only when set."""
    subject = config.subject
    if config.kube_client:
        registration: ManagedClusterAddOnStatusRegistration = {"type": KUBE_CLIENT}
        client: ManagedClusterAddOnStatusRegistrationKubeClient = {}
        if subject.user or subject.groups:
            client["subject"] = _subject(subject.user, subject.groups)
        if config.driver:
            client["driver"] = config.driver
        if client:
            registration["kubeClient"] = client
        return registration
    signer_subject: ManagedClusterAddOnStatusRegistrationCustomSignerSubject = {
        "user": subject.user
    }
    if subject.groups:
        signer_subject["groups"] = list(subject.groups)
    if subject.organization_units:
        signer_subject["organizationUnits"] = list(subject.organization_units)
    return {
        "type": CUSTOM_SIGNER,
        "customSigner": {"signerName": config.signer_name, "subject": signer_subject},
    }


def _subject(
    user: str, groups: Sequence[str]
) -> ManagedClusterAddOnStatusRegistrationKubeClientSubject:
    subject: ManagedClusterAddOnStatusRegistrationKubeClientSubject = {"user": user}
    if groups:
        subject["groups"] = list(groups)
    return subject


def build_registrations(
    configs: Sequence[RegistrationConfig],
    existing: Sequence[ManagedClusterAddOnStatusRegistration],
    *,
    cluster: str,
    addon: str,
) -> list[ManagedClusterAddOnStatusRegistration]:
    """``buildRegistrationConfigs``: the add-on's registrations, keeping what the agent
    reported into the existing ones. A kubeClient registration takes the driver of the
    existing one at its position among kubeClient registrations (the spoke sets it);
    with driver ``token`` the existing subject stays (the agent reports its
    ServiceAccount), with ``csr`` an empty subject becomes the default one."""
    existing_clients = [r for r in existing if r.get("type") == KUBE_CLIENT]
    result: list[ManagedClusterAddOnStatusRegistration] = []
    index = 0
    for config in configs:
        registration = registration_api(config)
        if registration["type"] != KUBE_CLIENT:
            result.append(registration)
            continue
        client = registration.setdefault("kubeClient", {})
        match = existing_clients[index] if index < len(existing_clients) else None
        index += 1
        previous = match.get("kubeClient") if match is not None else None
        driver = (previous or {}).get("driver") or client.get("driver", "")
        if driver:
            client["driver"] = driver
        if driver == "token":
            client["subject"] = token_subject(
                (previous or {}).get("subject"), cluster=cluster, addon=addon
            )
        elif driver == "csr" and not _set(client.get("subject")):
            client["subject"] = _subject(
                default_user(cluster, addon, addon), default_groups(cluster, addon)
            )
        client.setdefault("subject", {"user": ""})
        result.append(registration)
    return result


def token_subject(
    reported: ManagedClusterAddOnStatusRegistrationKubeClientSubject | None,
    *,
    cluster: str,
    addon: str,
) -> ManagedClusterAddOnStatusRegistrationKubeClientSubject:
    """The subject a token-driver agent reported, kept only when it is the ServiceAccount
    upstream's token infrastructure makes for it (``<addon>-agent`` in the cluster's
    namespace) with no group but a ServiceAccount's; else none yet. The agent writes
    this status, and hub permissions are bound to it: upstream keeps whatever it says."""
    account = f"system:serviceaccount:{cluster}:{addon}-agent"
    allowed = {
        "system:serviceaccounts",
        f"system:serviceaccounts:{cluster}",
        "system:authenticated",
    }
    if (
        reported
        and reported.get("user") == account
        and set(reported.get("groups") or ()) <= allowed
    ):
        return copy.deepcopy(reported)
    return {"user": ""}


def _set(subject: ManagedClusterAddOnStatusRegistrationKubeClientSubject | None) -> bool:
    return bool(subject and (subject.get("user") or subject.get("groups")))


def supported_configs(options: AgentAddonOptions) -> list[ManagedClusterAddOnStatusSupportedConfig]:
    return [{"group": gvr.group, "resource": gvr.resource} for gvr in options.supported_configs]


def default_namespace(addon: ManagedClusterAddOn) -> str:
    """The install namespace before the add-on's own say: the default, or the v1alpha1
    ``spec.installNamespace`` kept in an annotation."""
    annotations = addon["metadata"].get("annotations") or {}
    return (
        annotations.get(wellknown.ADDON_INSTALL_NAMESPACE_ANNOTATION)
        or wellknown.ADDON_DEFAULT_INSTALL_NAMESPACE
    )


Status = Literal["True", "False"]


def applied(reason: str, message: str = CONFIGURED) -> tuple[Status, str, str]:
    """``RegistrationApplied`` as (status, reason, message)."""
    status: Status = (
        "False" if reason in (SET_PERMISSION_FAILED, PERMISSION_CONFIG_PENDING) else "True"
    )
    return status, reason, message


def permission_failed(err: BaseException) -> tuple[Status, str, str]:
    return applied(SET_PERMISSION_FAILED, f"Failed to set permission for hub agent: {err}")

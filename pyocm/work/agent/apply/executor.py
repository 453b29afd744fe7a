"""Whether a work's executor may apply a manifest, as upstream's ``SarValidator`` asks.

Before any strategy runs (ReadOnly included) the managed cluster is asked, with one
SubjectAccessReview per verb, whether the executor's service account
(``system:serviceaccount:<ns>:<name>``, groups ``system:serviceaccounts``,
``system:authenticated`` and ``system:serviceaccounts:<ns>``) may ``create``, ``update``,
``patch`` and ``get`` the resource by name, and also ``delete`` it when the work owns it
(so a resource applied can always be removed with the work). The verbs do not depend on
the update strategy. The first refusal stops the checks.

SubjectAccessReviews cannot see RBAC's escalation guard, so for Roles, ClusterRoles and
their bindings a dry-run create of the manifest is made as the service account: refused
means permission escalation; "already exists" is enough, since the server checks
escalation before existence.

Refusals are :class:`~pyocm.work.agent.apply.errors.ExecutorDenied` with upstream's text;
an executor that is not a service account is an
:class:`~pyocm.work.agent.apply.errors.ApplyError`, as upstream fails it.
"""

from __future__ import annotations

from typing import Final

from pyocm.api.models import view
from pyocm.api.models.authorization_v1 import SubjectAccessReview
from pyocm.api.models.work_v1 import (
    ManifestWorkSpecExecutor,
    ManifestWorkSpecExecutorSubjectServiceAccount,
)
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.work.agent.apply.errors import ApplyError, ExecutorDenied
from pyocm.work.agent.apply.merge import Obj
from pyocm.work.agent.spoke import SpokeClient

Executor = ManifestWorkSpecExecutor
SERVICE_ACCOUNT: Final = "ServiceAccount"
RBAC_GROUP: Final = "rbac.authorization.k8s.io"
RBAC_RESOURCES: Final = frozenset({"roles", "rolebindings", "clusterroles", "clusterrolebindings"})


async def check_executor(
    spoke: SpokeClient,
    executor: Executor,
    *,
    kind: Kind,
    namespace: str,
    name: str,
    owned: bool,
    manifest: Obj,
) -> None:
    """Raise unless ``executor`` may apply ``manifest`` (``kind``, ``namespace``/``name``;
    ``namespace`` is ``""`` for a cluster-scoped kind); ``owned``: the work owns it."""
    account = service_account(executor)
    verbs = ["create", "update", "patch", "get"]
    if owned:
        verbs.append("delete")
    for verb in verbs:
        review = await spoke.create(
            kinds.SUBJECT_ACCESS_REVIEW, review_body(account, kind, namespace, name, verb)
        )
        if not view(SubjectAccessReview, review).get("status", {}).get("allowed", False):
            raise ExecutorDenied(_not_allowed(kind, namespace, name))
    if kind.group == RBAC_GROUP and kind.plural in RBAC_RESOURCES:
        await _check_escalation(spoke, account, kind, namespace, name, manifest)


def service_account(executor: Executor) -> ManifestWorkSpecExecutorSubjectServiceAccount:
    """The executor's service account; upstream's basic check failures otherwise."""
    subject = executor.get("subject")
    if not subject or subject.get("type") != SERVICE_ACCOUNT:
        raise ApplyError(f"only support {SERVICE_ACCOUNT} type for the executor")
    account = subject.get("serviceAccount")
    if not account:
        raise ApplyError("the executor service account is nil")
    return account


def username(account: ManifestWorkSpecExecutorSubjectServiceAccount) -> str:
    return f"system:serviceaccount:{account['namespace']}:{account['name']}"


def groups(account: ManifestWorkSpecExecutorSubjectServiceAccount) -> list[str]:
    """The groups upstream names in its reviews (those the service account has)."""
    return [
        "system:serviceaccounts",
        "system:authenticated",
        f"system:serviceaccounts:{account['namespace']}",
    ]


def review_body(
    account: ManifestWorkSpecExecutorSubjectServiceAccount,
    kind: Kind,
    namespace: str,
    name: str,
    verb: str,
) -> Obj:
    """The SubjectAccessReview upstream sends for one verb (empty attributes left out,
    as Go's ``omitempty`` leaves them)."""
    attributes = {
        "namespace": namespace,
        "verb": verb,
        "group": kind.group,
        "version": kind.version,
        "resource": kind.plural,
        "name": name,
    }
    return {
        "apiVersion": kinds.SUBJECT_ACCESS_REVIEW.api_version,
        "kind": kinds.SUBJECT_ACCESS_REVIEW.kind,
        "metadata": {},
        "spec": {
            "resourceAttributes": {key: value for key, value in attributes.items() if value},
            "user": username(account),
            "groups": groups(account),
        },
    }


async def _check_escalation(
    spoke: SpokeClient,
    account: ManifestWorkSpecExecutorSubjectServiceAccount,
    kind: Kind,
    namespace: str,
    name: str,
    manifest: Obj,
) -> None:
    try:
        await spoke.dry_run_create_as(kind, manifest, user=username(account))
    except ApiError as err:
        if err.code == 403:
            raise ExecutorDenied(
                f"{_not_allowed(kind, namespace, name)}, error: permission escalation"
            ) from err
        if err.code == 409 and err.reason == "AlreadyExists":
            return
        raise


def _not_allowed(kind: Kind, namespace: str, name: str) -> str:
    return f"not allowed to apply the resource {kind.group} {kind.plural}, {namespace} {name}"

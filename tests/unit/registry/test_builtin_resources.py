"""The built-in resource table: names, scopes, verbs and subresources as discovery shows them."""

from __future__ import annotations

from pyocm.apiserver.registry.builtin import builtin_resources, certificates, events
from pyocm.apiserver.registry.resources import ALL_VERBS, ResourceInfo

TABLE = {(r.group, r.plural): r for r in builtin_resources()}


def entry(group: str, plural: str) -> ResourceInfo:
    return TABLE[(group, plural)]


def test_every_kind_is_served_once() -> None:
    served = [(r.group, r.plural) for r in builtin_resources()]
    assert len(served) == len(set(served)) == 37
    assert {r.version for r in builtin_resources()} == {"v1", "v2"}


def test_core_kinds() -> None:
    ns = entry("", "namespaces")
    assert (ns.kind, ns.namespaced, ns.short_names) == ("Namespace", False, ("ns",))
    assert "deletecollection" not in ns.verbs
    assert [(s.name, s.verbs) for s in ns.subresources] == [
        ("finalize", ("update",)),
        ("status", ("get", "patch", "update")),
    ]
    assert entry("", "configmaps").short_names == ("cm",)
    assert entry("", "events").short_names == ("ev",)
    assert entry("", "nodes").short_names == ("no",) and not entry("", "nodes").namespaced
    assert entry("", "secrets").verbs == ALL_VERBS and entry("", "secrets").short_names == ()


def test_service_account_token_subresource() -> None:
    token = entry("", "serviceaccounts").subresource("token")
    assert token is not None
    assert (token.verbs, token.kind, token.group, token.version) == (
        ("create",),
        "TokenRequest",
        "authentication.k8s.io",
        "v1",
    )
    assert entry("", "serviceaccounts").short_names == ("sa",)


def test_csr_and_crd() -> None:
    csr = entry("certificates.k8s.io", "certificatesigningrequests")
    assert csr.short_names == ("csr",) and not csr.namespaced
    assert [s.name for s in csr.subresources] == ["approval", "status"]
    assert isinstance(csr.strategy, certificates.CertificateSigningRequestStrategy)
    crd = entry("apiextensions.k8s.io", "customresourcedefinitions")
    assert crd.short_names == ("crd", "crds") and crd.categories == ("api-extensions",)
    assert crd.list_kind == "CustomResourceDefinitionList"


def test_events_share_the_core_store() -> None:
    core, grouped = entry("", "events"), entry("events.k8s.io", "events")
    assert (
        grouped.key(namespace="ns", name="e")
        == core.key(namespace="ns", name="e")
        == "/registry/core/events/ns/e"
    )
    assert isinstance(grouped.strategy, events.EventStrategy)
    assert type(core.strategy) is events.CoreEventStrategy


def test_rbac_and_leases() -> None:
    assert {p for g, p in TABLE if g == "rbac.authorization.k8s.io"} == {
        "roles",
        "rolebindings",
        "clusterroles",
        "clusterrolebindings",
    }
    assert entry("rbac.authorization.k8s.io", "clusterrolebindings").kind == "ClusterRoleBinding"
    assert not entry("rbac.authorization.k8s.io", "clusterroles").namespaced
    assert entry("rbac.authorization.k8s.io", "roles").namespaced
    assert entry("coordination.k8s.io", "leases").namespaced


def test_fresh_strategies_per_call() -> None:
    first, second = builtin_resources(), builtin_resources()
    assert first[0].strategy is not second[0].strategy

"""RBAC escalation prevention, as kube-apiserver enforces it: whoever may write Roles and
bindings can grant only what they hold (where they hold it), bind a role they do not hold
only with the ``bind`` verb on that role, and write a role beyond their rights only with
``escalate``; ``system:masters`` is exempt. Every way of writing a role is checked: create,
update, both kinds of patch, server-side apply and a dry run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from pyocm.testing import Client, HubProcess

Obj = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
RBAC = f"/apis/{GROUP}/v1"
DENIED = "attempting to grant RBAC permissions not currently held"


def rule(resources: list[str], verbs: list[str], group: str = "", names: list[str] | None = None) -> Obj:
    found: Obj = {"apiGroups": [group], "resources": resources, "verbs": verbs}
    if names:
        found["resourceNames"] = names
    return found


#: What the user under test holds in namespace "ns" in every case: writing roles and
#: role bindings there, and reading ConfigMaps.
BASE = [
    rule(["roles", "rolebindings"], ["create", "get", "update", "patch"], GROUP),
    rule(["configmaps"], ["get", "list"]),
]
HELD = [rule(["configmaps"], ["get"])]
MORE = [rule(["configmaps"], ["get", "delete"])]
EVERYTHING = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]


def ref(kind: str, name: str) -> Obj:
    return {"apiGroup": GROUP, "kind": kind, "name": name}


@dataclass(frozen=True)
class Case:
    method: str
    path: str
    body: Obj
    #: 201/200 when allowed; 403 when refused (the message must say why)
    expect: int
    why: str = DENIED
    #: extra grants: scope ("ns", "ns2" or "cluster") -> rules
    grants: dict[str, list[Obj]] = field(default_factory=dict)
    #: objects the admin creates first: (collection path, body)
    setup: list[tuple[str, Obj]] = field(default_factory=list)
    content_type: str = "application/json"
    params: dict[str, str] = field(default_factory=dict)
    masters: bool = False


def role(name: str, rules: list[Obj]) -> Obj:
    return {"metadata": {"name": name}, "rules": rules}


def binding(name: str, role_ref: Obj, user: str = "someone-else") -> Obj:
    return {
        "metadata": {"name": name},
        "roleRef": role_ref,
        "subjects": [{"apiGroup": GROUP, "kind": "User", "name": user}],
    }


ROLES, BINDINGS = f"{RBAC}/namespaces/{{ns}}/roles", f"{RBAC}/namespaces/{{ns}}/rolebindings"
HELD_ROLE = (ROLES, role("existing", HELD))
READER = (f"{RBAC}/clusterroles", role("{u}-reader", HELD))
SECRETS_READER = (f"{RBAC}/clusterroles", role("{u}-secrets", [rule(["secrets"], ["get"])]))
APPLY = "application/apply-patch+yaml"

CASES: dict[str, Case] = {
    # Roles: what is held may be granted, nothing more
    "role within held rights": Case("POST", ROLES, role("r", HELD), 201),
    "role with a verb not held": Case("POST", ROLES, role("r", MORE), 403),
    "role with everything": Case("POST", ROLES, role("r", EVERYTHING), 403),
    "role on another resource": Case("POST", ROLES, role("r", [rule(["secrets"], ["get"])]), 403),
    "ClusterRole with a non-resource URL": Case(
        "POST", f"{RBAC}/clusterroles",
        role("{u}-urls", [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]), 403,
        grants={"cluster": [rule(["clusterroles"], ["create"], GROUP)]},
    ),
    "update a role to more": Case(
        "PUT", f"{ROLES}/existing", role("existing", MORE), 403, setup=[HELD_ROLE]
    ),
    "merge-patch a role to more": Case(
        "PATCH", f"{ROLES}/existing", {"rules": MORE}, 403, setup=[HELD_ROLE],
        content_type="application/merge-patch+json",
    ),
    "json-patch a role to more": Case(
        "PATCH", f"{ROLES}/existing", [{"op": "add", "path": "/rules/-", "value": MORE[0]}], 403,
        setup=[HELD_ROLE], content_type="application/json-patch+json",
    ),
    "server-side apply a role with more": Case(
        "PATCH", f"{ROLES}/applied",
        {"apiVersion": f"{GROUP}/v1", "kind": "Role", **role("applied", MORE)}, 403,
        content_type=APPLY, params={"fieldManager": "test"},
    ),
    "dry run of a role with more": Case(
        "POST", ROLES, role("r", MORE), 403, params={"dryRun": "All"}
    ),
    "rights in one namespace do not count in another": Case(
        "POST", f"{RBAC}/namespaces/{{ns2}}/roles", role("r", HELD), 403,
        grants={"ns2": [rule(["roles"], ["create"], GROUP)]},
    ),
    "rights held cluster-wide count in a namespace": Case(
        "POST", ROLES, role("r", [rule(["secrets"], ["get"])]), 201,
        grants={"cluster": [rule(["secrets"], ["get"])]},
    ),
    "rights in a namespace do not count cluster-wide": Case(
        "POST", f"{RBAC}/clusterroles", role("{u}-cr", HELD), 403,
        grants={"cluster": [rule(["clusterroles"], ["create"], GROUP)]},
    ),
    "escalate lets a role go beyond": Case(
        "POST", ROLES, role("r", EVERYTHING), 201,
        grants={"ns": [rule(["roles"], ["escalate"], GROUP)]},
    ),
    "escalate on a named role does not cover creating": Case(
        "POST", ROLES, role("r", EVERYTHING), 403,
        grants={"ns": [rule(["roles"], ["escalate"], GROUP, names=["r"])]},
    ),
    "an aggregating ClusterRole needs everything": Case(
        "POST", f"{RBAC}/clusterroles",
        {"metadata": {"name": "{u}-agg"},
         "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}},
        403, why="must have cluster-admin privileges to use the aggregationRule",
        grants={"cluster": [rule(["clusterroles"], ["create"], GROUP)]},
    ),
    # Bindings: the bound role's rights must be held, or bind on that very role
    "bind a role whose rights are held": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "{u}-reader")), 201, setup=[READER]
    ),
    "bind a role whose rights are not held": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "{u}-secrets")), 403,
        setup=[SECRETS_READER],
    ),
    "bind oneself to a role whose rights are not held": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "{u}-secrets"), user="{u}"), 403,
        setup=[SECRETS_READER],
    ),
    "bind cluster-admin in a namespace": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "cluster-admin")), 403
    ),
    "bind admin in a namespace": Case("POST", BINDINGS, binding("b", ref("ClusterRole", "admin")), 403),
    "bind a role that does not exist": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "{u}-missing")), 403,
        why='clusterroles.rbac.authorization.k8s.io "{u}-missing" not found',
    ),
    "bind verb on the role allows binding it": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "{u}-secrets")), 201,
        setup=[SECRETS_READER],
        grants={"ns": [rule(["clusterroles"], ["bind"], GROUP, names=["{u}-secrets"])]},
    ),
    "bind verb on another role does not": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "cluster-admin")), 403,
        grants={"ns": [rule(["clusterroles"], ["bind"], GROUP, names=["{u}-secrets"])]},
    ),
    "bind verb in another namespace does not": Case(
        "POST", BINDINGS, binding("b", ref("ClusterRole", "{u}-secrets")), 403,
        setup=[SECRETS_READER],
        grants={"ns2": [rule(["clusterroles"], ["bind"], GROUP, names=["{u}-secrets"])]},
    ),
    "bind cluster-admin cluster-wide": Case(
        "POST", f"{RBAC}/clusterrolebindings",
        binding("{u}-crb", ref("ClusterRole", "cluster-admin"), user="{u}"), 403,
        grants={"cluster": [rule(["clusterrolebindings"], ["create"], GROUP)]},
    ),
    # system:masters is exempt from all of it
    "masters may write any role": Case("POST", ROLES, role("r", EVERYTHING), 201, masters=True),
    "masters may bind cluster-admin": Case(
        "POST", f"{RBAC}/clusterrolebindings",
        binding("{u}-crb", ref("ClusterRole", "cluster-admin")), 201, masters=True,
    ),
    "masters may aggregate": Case(
        "POST", f"{RBAC}/clusterroles",
        {"metadata": {"name": "{u}-agg"},
         "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}},
        201, masters=True,
    ),
}


def _fill(value: Any, names: dict[str, str]) -> Any:
    """Put the test's names for ``{u}``, ``{ns}`` and ``{ns2}`` into ``value``."""
    text = orjson.dumps(value).decode()
    for key, name in names.items():
        text = text.replace("{" + key + "}", name)
    return orjson.loads(text)


async def _grant(admin: Client, names: dict[str, str], scope: str, rules: list[Obj], tag: str) -> None:
    user = {"apiGroup": GROUP, "kind": "User", "name": names["u"]}
    if scope == "cluster":
        roles, bindings = f"{RBAC}/clusterroles", f"{RBAC}/clusterrolebindings"
        kind, name = "ClusterRole", f"{names['u']}-{tag}"
    else:
        roles = f"{RBAC}/namespaces/{names[scope]}/roles"
        bindings = f"{RBAC}/namespaces/{names[scope]}/rolebindings"
        kind, name = "Role", f"grant-{tag}"
    code, out = await admin.post(roles, {"metadata": {"name": name}, "rules": rules})
    assert code == 201, out
    code, out = await admin.post(
        bindings, {"metadata": {"name": name}, "roleRef": ref(kind, name), "subjects": [user]}
    )
    assert code == 201, out


@pytest.mark.parametrize("case", list(CASES))
async def test_escalation_matrix(hub: HubProcess, admin: Client, unique: str, case: str) -> None:
    names = {"u": f"esc-{unique}", "ns": f"esc-{unique}", "ns2": f"esc2-{unique}"}
    chosen: Case = _fill(CASES[case].__dict__, names)
    for namespace in (names["ns"], names["ns2"]):
        code, out = await admin.post("/api/v1/namespaces", {"metadata": {"name": namespace}})
        assert code == 201, out
    await _grant(admin, names, "ns", BASE, "base")
    for scope, rules in chosen["grants"].items():
        await _grant(admin, names, scope, rules, "extra")
    for path, body in chosen["setup"]:
        code, out = await admin.post(path, body)
        assert code == 201, out
    groups = ("system:masters",) if chosen["masters"] else ()
    identity = hub.identity(names["u"], groups)
    async with Client(identity.kubeconfig) as client:
        code, out = await client.request(
            chosen["method"],
            chosen["path"],
            body=chosen["body"],
            content_type=chosen["content_type"],
            params=chosen["params"] or None,
        )
    if chosen["expect"] == 403:
        assert code == 403, (code, out)
        assert out["reason"] == "Forbidden" and chosen["why"] in out["message"], out["message"]
    else:
        assert code in (200, 201), (code, out)

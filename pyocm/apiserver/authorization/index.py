"""An in-memory index of Roles, ClusterRoles and their bindings, kept by watch events.

Kubernetes' rule resolver lists every ClusterRoleBinding on every request. With ten
thousand managed clusters, each bound through its own groups, that is tens of thousands of
bindings per request; this index files each binding under the subjects it names, so a
request visits only the bindings naming its user or one of its groups.

Bindings keep their ``roleRef`` by name and roles are looked up when a request is
evaluated, never copied into the binding: a role created, changed or deleted after its
bindings is seen by the very next decision, as it is in Kubernetes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization import rules
from pyocm.apiserver.authorization.attributes import go_quote
from pyocm.apiserver.authorization.rules import PolicyRule
from pyocm.kube.sharing import SharedValues

ROLE = "Role"
CLUSTER_ROLE = "ClusterRole"
ROLE_BINDING = "RoleBinding"
CLUSTER_ROLE_BINDING = "ClusterRoleBinding"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"

#: Subject and role kinds, one copy each (they are user input, so bounded).
_KINDS: SharedValues[str, str] = SharedValues(lambda kind: kind, limit=64)

#: ``("User", name)`` or ``("Group", name)``; service accounts are filed as their user name.
SubjectKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Subject:
    kind: str
    name: str
    namespace: str
    #: Whom the subject names, or None when it can never match (unknown kind, or a
    #: ServiceAccount with no namespace to default to).
    key: SubjectKey | None

    def describe(self, binding_namespace: str) -> str:
        """``describeSubject``: service accounts read ``"name/namespace"``."""
        if self.kind == "ServiceAccount":
            return f"{self.kind} {go_quote(f'{self.name}/{self.namespace or binding_namespace}')}"
        return f"{self.kind} {go_quote(self.name)}"


def _subject(raw: Mapping[str, Any], binding_namespace: str) -> Subject:
    # Kinds are shared: a fleet holds tens of thousands of subjects and bindings.
    kind, name = _KINDS.get(str(raw.get("kind") or "")), str(raw.get("name") or "")
    namespace = str(raw.get("namespace") or "")
    key: SubjectKey | None = None
    if kind in ("User", "Group"):
        key = (kind, name)
    elif kind == "ServiceAccount":
        # A RoleBinding may leave the namespace out; the authorizer then uses its own.
        sa_namespace = namespace or binding_namespace
        if sa_namespace:
            key = ("User", f"{SERVICE_ACCOUNT_PREFIX}{sa_namespace}:{name}")
    return Subject(kind=kind, name=name, namespace=namespace, key=key)


@dataclass(frozen=True, slots=True)
class Binding:
    kind: str
    namespace: str
    name: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]
    #: Order of first arrival; decisions visit bindings in this order so reasons are stable.
    seq: int

    def subject_keys(self) -> set[SubjectKey]:
        return {s.key for s in self.subjects if s.key is not None}

    def subject_for(self, user: UserInfo) -> Subject | None:
        """``appliesTo``: the first subject naming this user (the one reasons mention)."""
        for subject in self.subjects:
            key = subject.key
            if key is None:
                continue
            if key[0] == "User" and key[1] == user.name:
                return subject
            if key[0] == "Group" and key[1] in user.groups:
                return subject
        return None


def _binding(kind: str, obj: Mapping[str, Any], *, seq: int) -> Binding:
    meta = obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or "") if kind == ROLE_BINDING else ""
    ref = obj.get("roleRef") or {}
    return Binding(
        kind=kind,
        namespace=namespace,
        name=str(meta.get("name") or ""),
        role_kind=_KINDS.get(str(ref.get("kind") or "")),
        role_name=str(ref.get("name") or ""),
        subjects=tuple(_subject(raw, namespace) for raw in obj.get("subjects") or ()),
        seq=seq,
    )


@dataclass(frozen=True, slots=True)
class BindingMatch:
    """A binding that names the user, with its role's rules (None when unresolvable)."""

    binding: Binding
    subject: Subject
    rules: tuple[PolicyRule, ...] | None
    error: str = ""

    def describe(self) -> str:
        """The source in an ``RBAC: allowed by ...`` reason, exactly as upstream words it."""
        b = self.binding
        name = f"{b.name}/{b.namespace}" if b.kind == ROLE_BINDING else b.name
        return (
            f"{b.kind} {go_quote(name)} of {b.role_kind} {go_quote(b.role_name)}"
            f" to {self.subject.describe(b.namespace)}"
        )


def resolution_error(role_kind: str, role_name: str) -> str:
    """Why a roleRef grants nothing, worded as the informer listers word it."""
    if role_kind in (ROLE, CLUSTER_ROLE):
        return f"{role_kind.lower()}.rbac.authorization.k8s.io {go_quote(role_name)} not found"
    return f"unsupported role reference kind: {go_quote(role_kind)}"


class _SubjectIndex:
    """Bindings of one scope (cluster, or one namespace) filed under each subject key."""

    def __init__(self) -> None:
        self._by_key: dict[SubjectKey, dict[str, Binding]] = {}

    def __bool__(self) -> bool:
        return bool(self._by_key)

    def add(self, binding: Binding) -> None:
        for key in binding.subject_keys():
            self._by_key.setdefault(key, {})[binding.name] = binding

    def remove(self, binding: Binding) -> None:
        for key in binding.subject_keys():
            bucket = self._by_key.get(key)
            if bucket is not None and bucket.pop(binding.name, None) is not None and not bucket:
                del self._by_key[key]

    def matching(self, keys: list[SubjectKey]) -> list[Binding]:
        found: dict[str, Binding] = {}
        for key in keys:
            bucket = self._by_key.get(key)
            if bucket:
                found.update(bucket)
        if len(found) < 2:
            return list(found.values())
        return sorted(found.values(), key=lambda b: b.seq)


def _user_keys(user: UserInfo) -> list[SubjectKey]:
    return [("User", user.name), *(("Group", group) for group in user.groups)]


class RbacIndex:
    """The RBAC objects of one server, fed by :meth:`upsert` and :meth:`delete`.

    Objects are the plain JSON dicts of ``rbac.authorization.k8s.io/v1``. The index holds
    no reference to them after the call returns, so callers may reuse or mutate them.
    """

    def __init__(self) -> None:
        self._roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = {}
        self._cluster_roles: dict[str, tuple[PolicyRule, ...]] = {}
        self._bindings: dict[tuple[str, str, str], Binding] = {}
        self._cluster_scope = _SubjectIndex()
        self._namespaces: dict[str, _SubjectIndex] = {}
        self._seq = itertools.count()

    def upsert(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Add or replace one object of ``kind`` (Role, ClusterRole, RoleBinding, ClusterRoleBinding)."""
        meta = obj.get("metadata") or {}
        name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        if kind == ROLE:
            self._roles[(namespace, name)] = rules.parse_rules(obj.get("rules"))
        elif kind == CLUSTER_ROLE:
            self._cluster_roles[name] = rules.parse_rules(obj.get("rules"))
        elif kind in (ROLE_BINDING, CLUSTER_ROLE_BINDING):
            old = self._unfile(kind, namespace=namespace, name=name)
            self._file(_binding(kind, obj, seq=old.seq if old else next(self._seq)))
        else:
            raise ValueError(f"not an RBAC kind: {kind!r}")

    def delete(self, kind: str, *, namespace: str = "", name: str) -> None:
        """Forget one object; ``namespace`` is ignored for cluster-scoped kinds. Missing is fine."""
        if kind == ROLE:
            self._roles.pop((namespace, name), None)
        elif kind == CLUSTER_ROLE:
            self._cluster_roles.pop(name, None)
        elif kind in (ROLE_BINDING, CLUSTER_ROLE_BINDING):
            self._unfile(kind, namespace=namespace, name=name)
        else:
            raise ValueError(f"not an RBAC kind: {kind!r}")

    def role_rules(self, kind: str, *, namespace: str, name: str) -> tuple[PolicyRule, ...] | None:
        """``GetRoleReferenceRules``: a Role is looked up in ``namespace``; None when missing."""
        if kind == ROLE:
            return self._roles.get((namespace, name))
        if kind == CLUSTER_ROLE:
            return self._cluster_roles.get(name)
        return None

    def bindings_for(self, user: UserInfo, namespace: str) -> Iterator[BindingMatch]:
        """Every binding naming ``user`` that applies in ``namespace`` ("" = cluster scope).

        ClusterRoleBindings come first, then the RoleBindings of ``namespace``: the order
        in which Kubernetes' ``VisitRulesFor`` walks them.
        """
        keys = _user_keys(user)
        scopes = [self._cluster_scope]
        if namespace and namespace in self._namespaces:
            scopes.append(self._namespaces[namespace])
        for scope in scopes:
            for binding in scope.matching(keys):
                subject = binding.subject_for(user)
                if subject is not None:
                    yield self._resolve(binding, subject)

    def rules_for(
        self, user: UserInfo, namespace: str
    ) -> Iterator[tuple[PolicyRule, BindingMatch]]:
        """Every rule that applies to ``user`` in ``namespace``, with the binding granting it."""
        for match in self.bindings_for(user, namespace):
            for rule in match.rules or ():
                yield rule, match

    def _resolve(self, binding: Binding, subject: Subject) -> BindingMatch:
        granted = self.role_rules(
            binding.role_kind, namespace=binding.namespace, name=binding.role_name
        )
        if granted is None:
            error = resolution_error(binding.role_kind, binding.role_name)
            return BindingMatch(binding=binding, subject=subject, rules=None, error=error)
        return BindingMatch(binding=binding, subject=subject, rules=granted)

    def _file(self, binding: Binding) -> None:
        self._bindings[(binding.kind, binding.namespace, binding.name)] = binding
        if binding.kind == CLUSTER_ROLE_BINDING:
            self._cluster_scope.add(binding)
        else:
            self._namespaces.setdefault(binding.namespace, _SubjectIndex()).add(binding)

    def _unfile(self, kind: str, *, namespace: str, name: str) -> Binding | None:
        if kind == CLUSTER_ROLE_BINDING:
            namespace = ""
        old = self._bindings.pop((kind, namespace, name), None)
        if old is None:
            return None
        if kind == CLUSTER_ROLE_BINDING:
            self._cluster_scope.remove(old)
        elif (scope := self._namespaces.get(namespace)) is not None:
            scope.remove(old)
            if not scope:
                del self._namespaces[namespace]
        return old

"""Who is asking: the result of authentication, as Kubernetes' ``user.Info``."""

from __future__ import annotations

from dataclasses import dataclass, field

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
MASTERS = "system:masters"


@dataclass(frozen=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def is_superuser(self) -> bool:
        return MASTERS in self.groups

    def to_review(self) -> dict[str, object]:
        """The ``userInfo`` shape used by TokenReview and SelfSubjectReview."""
        out: dict[str, object] = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out

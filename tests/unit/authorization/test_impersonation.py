"""The impersonation filter's pure parts: spotting the headers, reading them, the identity."""

from __future__ import annotations

import logging

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from pyocm.apiserver.authentication import impersonation
from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.authorization.index import RbacIndex
from pyocm.kube.status import ApiError

ADMIN = UserInfo(name="admin", groups=(MASTERS, "system:authenticated"))


def headers(*pairs: tuple[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(pairs))


def as_admin(*pairs: tuple[str, str]) -> UserInfo:
    return impersonation.impersonate(
        ADMIN, headers=headers(*pairs), rbac=RbacIndex(), request_line="GET /"
    )


def test_requested_spots_any_impersonate_header_in_any_case() -> None:
    plain = [(b"Host", b"h"), (b"Accept", b"application/json"), (b"If-Match", b"x")]
    assert not impersonation.requested(plain)
    assert not impersonation.requested([(b"Impersonate", b"x"), (b"i", b""), (b"", b"")])
    for name in (
        b"Impersonate-User",
        b"impersonate-group",
        b"IMPERSONATE-EXTRA-k",
        b"Impersonate-Uid",
    ):
        assert impersonation.requested([*plain, (name, b"x")]), name


def test_extra_keys_are_lowered_then_percent_decoded_as_go_does() -> None:
    assert impersonation.unescape_extra_key("example.com%2fscopes") == "example.com/scopes"
    assert impersonation.unescape_extra_key("a+b") == "a+b", "path unescaping keeps '+'"
    assert impersonation.unescape_extra_key("bad%zzkey") == "bad%zzkey", "malformed: kept"
    assert impersonation.unescape_extra_key("trailing%2") == "trailing%2"


def test_service_account_names_must_be_valid_to_count_as_service_accounts() -> None:
    [target] = impersonation.targets(headers(("Impersonate-User", "system:serviceaccount:ns:sa")))
    assert (target.kind, target.namespace, target.name) == ("ServiceAccount", "ns", "sa")
    for odd in (
        "system:serviceaccount:ns:",
        "system:serviceaccount:NS:sa",
        "system:serviceaccount:a:b:c",
    ):
        [target] = impersonation.targets(headers(("Impersonate-User", odd)))
        assert (target.kind, target.name) == ("User", odd)


def test_implied_groups_follow_kube() -> None:
    assert as_admin(("Impersonate-User", "u")).groups == ("system:authenticated",)
    named = as_admin(("Impersonate-User", "u"), ("Impersonate-Group", "system:unauthenticated"))
    assert named.groups == ("system:unauthenticated",)
    sa = as_admin(("Impersonate-User", "system:serviceaccount:ns:sa"), ("Impersonate-Group", "g"))
    assert sa.groups == ("g", "system:authenticated"), "named groups replace the SA's own"
    anonymous = as_admin(("Impersonate-User", "system:anonymous"))
    assert (anonymous.name, anonymous.groups) == ("system:anonymous", ("system:unauthenticated",))


def test_no_header_means_nothing_to_impersonate() -> None:
    assert impersonation.targets(headers(("Accept", "x"))) == []


def test_nothing_to_impersonate_leaves_the_caller_as_is(caplog: pytest.LogCaptureFixture) -> None:
    """kube serves the request as the caller when the headers name no one: an unknown
    ``Impersonate-*`` header, or an empty ``Impersonate-User`` (read as absent). Before,
    such a request ran as user "" with no permission checked."""
    caplog.set_level(logging.INFO, logger="pyocm.apiserver.audit")
    for pairs in (
        [("Impersonate-Foo", "x")],
        [("Impersonate-User", "")],
        [("Impersonate-User", ""), ("Impersonate-Foo", "")],
    ):
        assert as_admin(*pairs) is ADMIN, pairs
        anonymous = UserInfo(name="system:anonymous", groups=("system:unauthenticated",))
        served = impersonation.impersonate(
            anonymous, headers=headers(*pairs), rbac=RbacIndex(), request_line="GET /"
        )
        assert served is anonymous, pairs
    assert not caplog.records, "nothing impersonated: nothing audited"


def test_an_empty_user_with_groups_is_still_a_bad_request() -> None:
    with pytest.raises(ApiError) as refused:
        as_admin(("Impersonate-User", ""), ("Impersonate-Group", "g"))
    assert refused.value.code == 400

"""CertificateSigningRequest strategy: identity, request checks, approval/status split."""

from __future__ import annotations

import base64
import copy
import datetime as dt
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import certificates, csr_validation
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube.status import ApiError, ErrorType

AGENT = UserInfo(
    name="system:open-cluster-management:cluster1:agent",
    groups=("system:open-cluster-management:cluster1", "system:authenticated"),
    uid="uid-1",
    extra={"scopes": ("a", "b")},
)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent")])
SIGNER = "kubernetes.io/kube-apiserver-client"
USAGES = ["digital signature", "key encipherment", "client auth"]


def ctx(subresource: str = "", user: UserInfo = AGENT) -> Context:
    return Context(user=user, subresource=subresource)


def pem_request(key: Any = EC_KEY) -> bytes:
    request = x509.CertificateSigningRequestBuilder().subject_name(NAME).sign(key, hashes.SHA256())
    return request.public_bytes(serialization.Encoding.PEM)


def tampered(pem: bytes) -> bytes:
    """The same request with the last signature byte changed: parseable, badly signed."""
    der = bytearray(x509.load_pem_x509_csr(pem).public_bytes(serialization.Encoding.DER))
    der[-1] ^= 0x01
    body = base64.encodebytes(bytes(der))
    return b"-----BEGIN CERTIFICATE REQUEST-----\n" + body + b"-----END CERTIFICATE REQUEST-----\n"


def certificate_pem() -> bytes:
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(NAME)
        .issuer_name(NAME)
        .public_key(EC_KEY.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(EC_KEY, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def csr(**spec: Any) -> dict[str, Any]:
    fields = {"request": b64(pem_request()), "signerName": SIGNER, "usages": list(USAGES), **spec}
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "c1"},
        "spec": fields,
    }


def created(**spec: Any) -> dict[str, Any]:
    obj = csr(**spec)
    certificates.CertificateSigningRequestStrategy().prepare_for_create(obj, ctx())
    return obj


def condition(kind: str, status: str = "True", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": "R", "message": "m", **extra}


def test_create_overwrites_identity_and_clears_status() -> None:
    obj = csr(username="someone-else", groups=["system:masters"], uid="x", extra={"k": ["v"]})
    obj["status"] = {"conditions": [condition("Approved")]}
    strategy = certificates.CertificateSigningRequestStrategy()
    strategy.prepare_for_create(obj, ctx())
    spec = obj["spec"]
    assert spec["username"] == AGENT.name
    assert spec["groups"] == list(AGENT.groups)
    assert spec["uid"] == "uid-1"
    assert spec["extra"] == {"scopes": ["a", "b"]}
    assert obj["status"] == {}
    assert strategy.validate_create(obj, ctx()) == []


def test_create_without_uid_or_extra_omits_them() -> None:
    obj = csr(uid="forged", extra={"k": ["v"]})
    certificates.CertificateSigningRequestStrategy().prepare_for_create(
        obj, ctx(user=UserInfo(name="u"))
    )
    assert {k: obj["spec"].get(k) for k in ("username", "uid", "groups", "extra")} == {
        "username": "u",
        "uid": None,
        "groups": None,
        "extra": None,
    }


def test_request_must_be_a_certificate_request_block() -> None:
    obj = created(request=b64(b"hello"))
    errs = certificates.CertificateSigningRequestStrategy().validate_create(obj, ctx())
    assert [e.message() for e in errs] == [
        "spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be CERTIFICATE REQUEST"
    ]


@pytest.mark.parametrize(
    ("key", "detail"),
    [
        pytest.param(EC_KEY, "x509: ECDSA verification failure", id="ecdsa"),
        pytest.param(
            rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "crypto/rsa: verification error",
            id="rsa",
        ),
    ],
)
def test_request_signature_must_verify(key: Any, detail: str) -> None:
    obj = created(request=b64(tampered(pem_request(key))))
    errs = certificates.CertificateSigningRequestStrategy().validate_create(obj, ctx())
    assert [(e.type, e.field) for e in errs] == [(ErrorType.INVALID, "spec.request")]
    assert errs[0].message().endswith(f"}}: {detail}")


def test_request_answers_are_remembered_within_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[bytes] = []
    real = csr_validation._check_request

    def counted(data: bytes) -> str:
        checked.append(data)
        return real(data)

    monkeypatch.setattr(csr_validation, "_check_request", counted)
    monkeypatch.setattr(csr_validation, "_CHECKED_LIMIT", 2)
    monkeypatch.setattr(csr_validation, "_checked", {})
    good, bad, garbage = pem_request(), tampered(pem_request()), b"hello"
    for _ in range(2):  # the second round answers from memory, the same way
        assert csr_validation.request_problem(good) == ""
        assert csr_validation.request_problem(bad) == "x509: ECDSA verification failure"
    assert checked == [good, bad]
    assert csr_validation.request_problem(garbage) == "PEM block type must be CERTIFICATE REQUEST"
    assert csr_validation.request_problem(bad) == "x509: ECDSA verification failure"
    assert csr_validation.request_problem(good) == ""  # the oldest was forgotten
    assert checked == [good, bad, garbage, good]


def test_bad_base64_request_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as caught:
        certificates.CertificateSigningRequestStrategy().prepare_for_create(
            csr(request="!!!!"), ctx()
        )
    assert caught.value.code == 400
    assert caught.value.message.endswith("illegal base64 data at input byte 0")


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        pytest.param({"usages": []}, ["spec.usages: Required value"], id="usages-required"),
        pytest.param(
            {"usages": ["client auth", "flying"]},
            [
                'spec.usages[1]: Unsupported value: "flying": supported values: '
                + ", ".join(f'"{u}"' for u in sorted(csr_validation.KEY_USAGES))
            ],
            id="unknown-usage",
        ),
        pytest.param(
            {"usages": ["client auth", "client auth"]},
            ['spec.usages[1]: Duplicate value: "client auth"'],
            id="duplicate-usage",
        ),
        pytest.param({"signerName": ""}, ["spec.signerName: Required value"], id="signer-required"),
        pytest.param(
            {"signerName": "no-slash"},
            [
                "spec.signerName: Invalid value: \"no-slash\": must be a fully qualified domain and path of the form 'example.com/signer-name'"
            ],
            id="signer-slash",
        ),
        pytest.param(
            {"signerName": "example/signer"},
            [
                'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots'
            ],
            id="signer-domain",
        ),
        pytest.param(
            {"signerName": "kubernetes.io/legacy-unknown"},
            [
                'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version'
            ],
            id="legacy-signer",
        ),
        pytest.param(
            {"expirationSeconds": 599},
            [
                "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"
            ],
            id="expiration",
        ),
        pytest.param({"expirationSeconds": 600}, [], id="expiration-minimum"),
    ],
)
def test_spec_rules(spec: dict[str, Any], messages: list[str]) -> None:
    obj = created(**spec)
    errs = certificates.CertificateSigningRequestStrategy().validate_create(obj, ctx())
    assert [e.message() for e in errs] == messages


def test_signer_name_label_errors_name_the_bad_part() -> None:
    errs = csr_validation.signer_name_errors("Example.com/x")
    assert len(errs) == 1 and errs[0].message().startswith(
        'spec.signerName: Invalid value: "Example.com": validating label "Example": a lowercase RFC 1123 label'
    )


def test_main_update_changes_metadata_only() -> None:
    old = created()
    old["status"] = {"conditions": [condition("Approved")]}
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    new["spec"]["signerName"] = "example.com/other"
    new["status"] = {}
    strategy = certificates.CertificateSigningRequestStrategy()
    strategy.prepare_for_update(new, old, ctx())
    assert new["spec"] == old["spec"] and new["status"] == old["status"]
    assert new["metadata"]["labels"] == {"a": "b"}
    assert strategy.validate_update(new, old, ctx()) == []


def approve(old: dict[str, Any], *conditions: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    new = copy.deepcopy(old)
    new["status"] = {"conditions": list(conditions), "certificate": b64(certificate_pem())}
    strategy = certificates.CertificateSigningRequestStrategy()
    strategy.prepare_for_update(new, old, ctx("approval"))
    return new, [e.message() for e in strategy.validate_update(new, old, ctx("approval"))]


def test_approval_sets_conditions_only_and_stamps_times() -> None:
    old = created()
    new, errs = approve(old, condition("Approved", lastTransitionTime=None))
    assert errs == []
    assert "certificate" not in new["status"]
    stamped = new["status"]["conditions"][0]
    assert (
        stamped["lastUpdateTime"].endswith("Z")
        and stamped["lastTransitionTime"] == stamped["lastUpdateTime"]
    )


def test_approval_rejects_approved_and_denied_together() -> None:
    _, errs = approve(created(), condition("Approved"), condition("Denied"))
    assert errs == [
        'status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'
    ]


@pytest.mark.parametrize(
    ("conditions", "messages"),
    [
        pytest.param(
            [condition("Approved", "False")],
            ['status.conditions[0].status: Unsupported value: "False": supported values: "True"'],
            id="approved-must-be-true",
        ),
        pytest.param(
            [condition("Failed", "Unknown")],
            ['status.conditions[0].status: Unsupported value: "Unknown": supported values: "True"'],
            id="failed-must-be-true",
        ),
        pytest.param(
            [condition("Custom", "Maybe")],
            [
                'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'
            ],
            id="other-statuses",
        ),
        pytest.param(
            [condition("Custom", "")],
            ["status.conditions[0].status: Required value"],
            id="status-required",
        ),
        pytest.param(
            [condition("")], ["status.conditions[0].type: Required value"], id="type-required"
        ),
        pytest.param(
            [condition("Approved"), condition("Approved")],
            ['status.conditions[1].type: Duplicate value: "Approved"'],
            id="duplicate-type",
        ),
    ],
)
def test_approval_condition_rules(conditions: list[dict[str, Any]], messages: list[str]) -> None:
    assert approve(created(), *conditions)[1] == messages


def test_approval_cannot_be_removed_once_set() -> None:
    old, _ = approve(created(), condition("Approved"))
    _, errs = approve(old)
    assert errs == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"'
    ]


def test_approval_keeps_transition_time_of_unchanged_condition() -> None:
    old = created()
    old["status"] = {
        "conditions": [
            condition(
                "Approved",
                lastUpdateTime="2026-01-01T00:00:00Z",
                lastTransitionTime="2026-01-01T00:00:00Z",
            )
        ]
    }
    new, errs = approve(old, condition("Approved"))
    assert errs == []
    assert new["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"


def write_status(old: dict[str, Any], status: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    new = copy.deepcopy(old)
    new["status"] = status
    new["spec"]["usages"] = ["server auth"]
    strategy = certificates.CertificateSigningRequestStrategy()
    strategy.prepare_for_update(new, old, ctx("status"))
    return new, [e.message() for e in strategy.validate_update(new, old, ctx("status"))]


def test_status_sets_certificate_once_and_keeps_spec() -> None:
    approved, _ = approve(created(), condition("Approved"))
    issued, errs = write_status(
        approved,
        {"conditions": approved["status"]["conditions"], "certificate": b64(certificate_pem())},
    )
    assert errs == []
    assert issued["spec"] == approved["spec"]
    _, errs = write_status(
        issued,
        {"conditions": issued["status"]["conditions"], "certificate": b64(certificate_pem())},
    )
    assert errs == [
        "status.certificate: Forbidden: updates may not modify existing certificate content"
    ]


def test_status_cannot_add_or_change_approval() -> None:
    old = created()
    _, errs = write_status(old, {"conditions": [condition("Approved")]})
    assert errs == [
        'status.conditions: Forbidden: updates may not add a condition of type "Approved"'
    ]
    approved, _ = approve(created(), condition("Approved", reason="ByHuman"))
    changed, errs = write_status(approved, {"conditions": [condition("Approved", reason="Forged")]})
    assert errs == []
    assert changed["status"]["conditions"][0]["reason"] == "ByHuman"


def test_status_may_add_failed() -> None:
    approved, _ = approve(created(), condition("Approved"))
    conditions = [
        *approved["status"]["conditions"],
        condition("Failed", reason="SignerValidationFailure"),
    ]
    new, errs = write_status(approved, {"conditions": conditions})
    assert errs == []
    assert [c["type"] for c in new["status"]["conditions"]] == ["Approved", "Failed"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b"garbage", "must contain at least one CERTIFICATE PEM block", id="no-block"),
        pytest.param(
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            'only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"',
            id="wrong-type",
        ),
        pytest.param(
            b"-----BEGIN CERTIFICATE-----\nA: b\n\nAAAA\n-----END CERTIFICATE-----\n",
            "no PEM block headers are permitted",
            id="headers",
        ),
    ],
)
def test_status_certificate_must_be_pem_certificates(content: bytes, message: str) -> None:
    approved, _ = approve(created(), condition("Approved"))
    _, errs = write_status(
        approved, {"conditions": approved["status"]["conditions"], "certificate": b64(content)}
    )
    assert errs == [f'status.certificate: Invalid value: "<certificate data>": {message}']


def test_main_update_cannot_set_certificate_even_if_validated_directly() -> None:
    old = created()
    new = copy.deepcopy(old)
    new["status"] = {"certificate": b64(certificate_pem())}
    errs = certificates.CertificateSigningRequestStrategy().validate_update(new, old, ctx())
    assert [e.message() for e in errs] == [
        "status.certificate: Forbidden: updates may not set certificate content"
    ]


def test_field_selector_and_names() -> None:
    strategy = certificates.CertificateSigningRequestStrategy()
    assert strategy.fields["spec.signerName"](created()) == SIGNER
    assert strategy.name_validator("cluster1-Abc:x") == []
    assert strategy.subresources == ("approval", "status")
    assert strategy.tracks_generation is False

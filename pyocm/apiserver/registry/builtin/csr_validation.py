"""Validation of CertificateSigningRequests, as ``pkg/apis/certificates/validation``.

The request must be a PEM ``CERTIFICATE REQUEST`` with a valid self-signature (checked
with ``cryptography``), the signer name ``<domain>/<path>``, the usages from the known key
usages without repeats. Updates may not remove Approved, Denied or Failed conditions, may
add or change Approved/Denied only through ``/approval``, and may set the certificate only
through ``/status`` and only once. Problems already present in the stored object are
tolerated, as Kubernetes does, so old objects stay updatable.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import re
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from pyocm.apiserver.registry.builtin import bytefields
from pyocm.apiserver.registry.strategy import STATUS, Obj
from pyocm.kube import names
from pyocm.kube.status import (
    ErrorType,
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from pyocm.pki import csr as pki_csr

KIND = "CertificateSigningRequest"
APPROVAL = "approval"
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
LEGACY_SIGNER = "kubernetes.io/legacy-unknown"
KEY_USAGES = tuple(
    sorted(
        (
            "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
            "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
            "server auth", "client auth", "code signing", "email protection", "s/mime",
            "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
            "microsoft sgc", "netscape sgc",
        )
    )
)  # fmt: skip
_TRUE_ONLY = (APPROVED, DENIED, FAILED)
_STATUS_VALUES = ("False", "True", "Unknown")
_MAX_PATH = names.DNS1123_SUBDOMAIN_MAX_LENGTH + names.DNS1123_LABEL_MAX_LENGTH + 1


@dataclasses.dataclass(frozen=True)
class Options:
    """What an update may do, and which old problems it may keep (Kubernetes tolerates
    problems already stored rather than making such objects impossible to update)."""

    set_approval: bool = False
    set_certificate: bool = False
    both_approved_and_denied: bool = False
    legacy_signer: bool = False
    duplicate_types: bool = False
    empty_type: bool = False
    arbitrary_certificate: bool = False
    unknown_usages: bool = False
    duplicate_usages: bool = False


_PEM_BLOCK = re.compile(rb"-----BEGIN ([^\r\n]*?)-----\r?\n(.*?)-----END \1-----", re.DOTALL)


_CHECKED_LIMIT = 32768
_checked: dict[bytes, str] = {}


def request_problem(data: bytes) -> str:
    """Why ``spec.request`` is not a well-signed PKCS#10 request ("" when it is).

    Every update checks the request again (the approval, then the signer's status
    write), and parsing plus verifying costs more than the rest of the update, so
    answers are remembered by digest, the oldest forgotten first.
    """
    digest = hashlib.sha256(data).digest()
    problem = _checked.get(digest)
    if problem is None:
        if len(_checked) >= _CHECKED_LIMIT:
            del _checked[next(iter(_checked))]
        problem = _checked[digest] = _check_request(data)
    return problem


def _check_request(data: bytes) -> str:
    try:
        request = pki_csr.load_csr(data)
        key, valid = request.public_key(), request.is_signature_valid
    except pki_csr.CsrError as err:
        return str(err)
    except (ValueError, TypeError, x509.UnsupportedGeneralNameType):
        return "x509: malformed certificate request"
    if valid:
        return ""
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    return "x509: cannot verify signature: algorithm unimplemented"


def certificate_problem(data: bytes) -> str:
    """Why ``status.certificate`` is not a chain of PEM ``CERTIFICATE`` blocks ("" if it is)."""
    if not data:
        return ""
    blocks = 0
    for label, body in _PEM_BLOCK.findall(data):
        head, _, rest = (
            body.partition(b"\n\n") if b":" in body.split(b"\n", 1)[0] else (b"", b"", body)
        )
        try:
            der = base64.b64decode(b"".join(rest.split()), validate=True)
        except (binascii.Error, ValueError):
            continue  # Go's decoder skips what is not a PEM block
        if label != b"CERTIFICATE":
            return f"only CERTIFICATE PEM blocks are allowed, found {label.decode(errors='replace')!r}".replace(
                "'", '"'
            )
        if head:
            return "no PEM block headers are permitted"
        blocks += 1
        try:
            x509.load_der_x509_certificate(der)
        except ValueError:
            return "x509: malformed certificate"
    return "" if blocks else "must contain at least one CERTIFICATE PEM block"


def spec_of(obj: Obj) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def conditions_of(obj: Obj) -> list[dict[str, Any]]:
    return [c for c in (obj.get("status") or {}).get("conditions") or [] if isinstance(c, dict)]


def of_type(obj: Obj, kind: str) -> list[dict[str, Any]]:
    return [c for c in conditions_of(obj) if c.get("type") == kind]


def certificate_of(obj: Obj) -> bytes:
    return bytefields.decode((obj.get("status") or {}).get("certificate") or "", kind=KIND)


def options_for(obj: Obj, old: Obj, *, subresource: str) -> Options:
    usages = list(spec_of(old).get("usages") or [])
    types = [c.get("type") for c in conditions_of(old)]
    new_cert, old_cert = certificate_of(obj), certificate_of(old)
    return Options(
        set_approval=subresource == APPROVAL,
        set_certificate=subresource == STATUS,
        both_approved_and_denied=APPROVED in types and DENIED in types,
        legacy_signer=spec_of(old).get("signerName") == LEGACY_SIGNER,
        duplicate_types=len(types) != len(set(types)),
        empty_type=any(not t for t in types),
        arbitrary_certificate=new_cert == old_cert or bool(certificate_problem(old_cert)),
        unknown_usages=any(u not in KEY_USAGES for u in usages),
        duplicate_usages=len(usages) != len(set(usages)),
    )


def _too_long(path: str, limit: int) -> FieldError:
    # Kubernetes never repeats the too-long value in this message.
    return FieldError(ErrorType.TOO_LONG, path, f"may not be more than {limit} bytes")


def signer_name_errors(value: str, path: str = "spec.signerName") -> list[FieldError]:
    """``ValidateSignerName``: ``<fqdn>/<path>``, dotted DNS labels then dotted subdomains."""
    if not value:
        return [required(path)]
    segments = value.split("/")
    if len(segments) != 2:
        return [
            invalid(
                path,
                value,
                "must be a fully qualified domain and path of the form 'example.com/signer-name'",
            )
        ]
    domain, tail = segments
    errs = (
        [_too_long(path, names.DNS1123_SUBDOMAIN_MAX_LENGTH)]
        if len(domain) > names.DNS1123_SUBDOMAIN_MAX_LENGTH
        else []
    )
    errs += _first_bad_part(domain, path, names.is_dns1123_label)
    if len(domain.split(".")) < 2:
        errs.append(
            invalid(path, domain, "should be a domain with at least two segments separated by dots")
        )
    errs += _first_bad_part(tail, path, names.is_dns1123_subdomain)
    limit = names.DNS1123_SUBDOMAIN_MAX_LENGTH + _MAX_PATH + 1
    return errs + ([_too_long(path, limit)] if len(value) > limit else [])


def _first_bad_part(segment: str, path: str, check: Any) -> list[FieldError]:
    """Only the first bad dot-separated part is reported: the rest would repeat it."""
    for part in segment.split("."):
        msgs = check(part)
        if msgs:
            return [invalid(path, segment, f'validating label "{part}": {msg}') for msg in msgs]
    return []


def _usage_errors(usages: list[Any], opts: Options) -> list[FieldError]:
    errs = [] if usages else [required("spec.usages")]
    if not opts.unknown_usages:
        errs += [
            not_supported(f"spec.usages[{i}]", u, list(KEY_USAGES))
            for i, u in enumerate(usages)
            if u not in KEY_USAGES
        ]
    if not opts.duplicate_usages:
        errs += [duplicate(f"spec.usages[{i}]", u) for i, u in enumerate(usages) if u in usages[:i]]
    return errs


def _condition_errors(obj: Obj, opts: Options) -> list[FieldError]:
    path, errs = "status.conditions", []
    seen: set[Any] = set()
    for i, condition in enumerate(conditions_of(obj)):
        kind, value = condition.get("type") or "", condition.get("status") or ""
        if not kind and not opts.empty_type:
            errs.append(required(f"{path}[{i}].type"))
        allowed = ["True"] if kind in _TRUE_ONLY else list(_STATUS_VALUES)
        if not value:
            errs.append(required(f"{path}[{i}].status"))
        elif value not in allowed:
            errs.append(not_supported(f"{path}[{i}].status", value, allowed))
        opposite = {APPROVED: DENIED, DENIED: APPROVED}.get(kind)
        if opposite in seen and not opts.both_approved_and_denied:
            errs.append(
                invalid(path, kind, "Approved and Denied conditions are mutually exclusive")
            )
        if kind in seen and not opts.duplicate_types:
            errs.append(duplicate(f"{path}[{i}].type", kind))
        seen.add(kind)
    return errs


def csr_errors(obj: Obj, opts: Options) -> list[FieldError]:
    """``validateCertificateSigningRequest``: everything but ObjectMeta."""
    spec = spec_of(obj)
    request = bytefields.decode(spec.get("request") or "", kind=KIND)
    problem = request_problem(request)
    errs = (
        [
            FieldError(
                ErrorType.INVALID, "spec.request", f"{bytefields.go_bytes(request)}: {problem}"
            )
        ]
        if problem
        else []
    )
    errs += _usage_errors(list(spec.get("usages") or []), opts)
    signer = str(spec.get("signerName") or "")
    if signer == LEGACY_SIGNER and not opts.legacy_signer:
        errs.append(
            invalid(
                "spec.signerName",
                signer,
                "the legacy signerName is not allowed via this API version",
            )
        )
    else:
        errs += signer_name_errors(signer)
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < 600:
        errs.append(
            invalid(
                "spec.expirationSeconds",
                seconds,
                "may not specify a duration less than 600 seconds (10 minutes)",
            )
        )
    errs += _condition_errors(obj, opts)
    certificate = certificate_problem(certificate_of(obj))
    if certificate and not opts.arbitrary_certificate:
        errs.append(invalid("status.certificate", "<certificate data>", certificate))
    return errs


def update_errors(obj: Obj, old: Obj, opts: Options) -> list[FieldError]:
    """What an update may not do to conditions and the issued certificate."""
    errs = csr_errors(obj, opts)
    for kind in (APPROVED, DENIED, FAILED):
        if len(of_type(obj, kind)) < len(of_type(old, kind)):
            errs.append(
                forbidden(
                    "status.conditions", f'updates may not remove a condition of type "{kind}"'
                )
            )
    for kind in () if opts.set_approval else (APPROVED, DENIED):
        new, stored = of_type(obj, kind), of_type(old, kind)
        if len(new) > len(stored):
            errs.append(
                forbidden("status.conditions", f'updates may not add a condition of type "{kind}"')
            )
        elif len(new) == len(stored) and new != stored:
            errs.append(
                forbidden(
                    "status.conditions", f'updates may not modify a condition of type "{kind}"'
                )
            )
    new_cert, old_cert = certificate_of(obj), certificate_of(old)
    if new_cert != old_cert:
        if not opts.set_certificate:
            errs.append(forbidden("status.certificate", "updates may not set certificate content"))
        elif old_cert:
            errs.append(
                forbidden(
                    "status.certificate", "updates may not modify existing certificate content"
                )
            )
    return errs

"""The verify callback lets only "no trusted issuer" through the handshake."""

from __future__ import annotations

import ssl
from datetime import timedelta
from pathlib import Path

import pytest

from pyocm.apiserver import tlsdefer
from pyocm.pki.ca import CertificateAuthority

HUB = CertificateAuthority.create("hub", valid_for=timedelta(days=1))
OTHER = CertificateAuthority.create("other", valid_for=timedelta(days=1))


def _files(tmp: Path, name: str, pair: tuple[bytes, bytes]) -> tuple[str, str]:
    (tmp / f"{name}.crt").write_bytes(pair[0])
    (tmp / f"{name}.key").write_bytes(pair[1])
    return str(tmp / f"{name}.crt"), str(tmp / f"{name}.key")


def _server(tmp: Path, *, defer: bool) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(
        *_files(tmp, "srv", HUB.issue_serving(hosts=["localhost"], valid_for=timedelta(days=1)))
    )
    ctx.load_verify_locations(cadata=HUB.cert_pem.decode())
    ctx.verify_mode = ssl.CERT_OPTIONAL
    if defer:
        assert tlsdefer.defer_unknown_issuer(ctx)
    return ctx


def _handshake(server: ssl.SSLContext, tmp: Path, pair: tuple[bytes, bytes]) -> ssl.SSLObject:
    client = ssl.create_default_context(cadata=HUB.cert_pem.decode())
    client.load_cert_chain(*_files(tmp, "client", pair))
    s_in, s_out, c_in, c_out = (ssl.MemoryBIO() for _ in range(4))
    srv = server.wrap_bio(s_in, s_out, server_side=True)
    cli = client.wrap_bio(c_in, c_out, server_hostname="localhost")
    done = {id(srv): False, id(cli): False}
    while not all(done.values()):
        for end, out, other_in in ((cli, c_out, s_in), (srv, s_out, c_in)):
            if not done[id(end)]:
                try:
                    end.do_handshake()
                    done[id(end)] = True
                except ssl.SSLWantReadError:
                    pass
            if data := out.read():
                other_in.write(data)
    return srv


def test_an_unknown_ca_completes_the_handshake_only_with_the_callback(tmp_path: Path) -> None:
    stranger = OTHER.issue_client(common_name="admin", valid_for=timedelta(hours=1))
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(_server(tmp_path, defer=False), tmp_path, stranger)
    srv = _handshake(_server(tmp_path, defer=True), tmp_path, stranger)
    # The handshake hands the certificate on: the authenticator must refuse it.
    assert srv.getpeercert(binary_form=True)


def test_other_chain_errors_still_fail_the_handshake(tmp_path: Path) -> None:
    """A serving certificate (no clientAuth) fails, from the hub's CA or another."""
    server = _server(tmp_path, defer=True)
    for ca in (HUB, OTHER):
        with pytest.raises(ssl.SSLCertVerificationError):
            _handshake(server, tmp_path, ca.issue_serving(hosts=["x"], valid_for=timedelta(days=1)))


def test_a_good_certificate_still_verifies(tmp_path: Path) -> None:
    good = HUB.issue_client(common_name="a", valid_for=timedelta(hours=1))
    assert _handshake(_server(tmp_path, defer=True), tmp_path, good).getpeercert()


def test_nothing_is_installed_without_peer_verification() -> None:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)  # CERT_NONE
    assert not tlsdefer.defer_unknown_issuer(ctx)

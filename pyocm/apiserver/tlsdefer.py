"""Let a client certificate from an unknown CA finish the TLS handshake, to be answered 401.

kube-apiserver requests a client certificate, verifies it in its authenticator and answers
an untrusted one 401 Unauthorized; OpenSSL, left alone, fails the handshake instead (a
reset tells a client nothing). Python's ssl module has no verify callback, so this module
installs one on the server's ``SSL_CTX`` through ctypes: it accepts exactly the "no
trusted issuer" errors and refuses every other (a bad signature from a known CA, a wrong
key usage...), so those handshakes still fail as before.

An untrusted chain then completes the handshake, so the authenticator MUST refuse it: it
checks that each client certificate was issued by the hub's client CA
(``authenticator.client_certificate``) whether or not this callback is installed.

Reaching the ``SSL_CTX`` relies on CPython's ``PySSLContext`` layout (``PyObject_HEAD``
then ``SSL_CTX *ctx``) and on finding the very libssl ``_ssl`` uses. Both are checked
before anything is installed: the object header's size, one libssl and one libcrypto
mapped into the process, their version against ``ssl.OPENSSL_VERSION_NUMBER``, and the
pointer's verify mode, options and (absent) callback against what Python set. On any
mismatch nothing is installed and an unknown CA keeps failing the handshake.
"""

from __future__ import annotations

import ctypes
import logging
import re
import ssl
import sys
import sysconfig

log = logging.getLogger("pyocm.apiserver.tls")

# OpenSSL's x509_vfy.h: the chain reaches no CA this server trusts.
X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT = 2
X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT = 18
X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN = 19
X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY = 20
X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE = 21
UNKNOWN_ISSUER = frozenset(
    {
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
        X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
        X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
        X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
    }
)

SSL_VERIFY_PEER = 0x01
SSL_VERIFY_FAIL_IF_NO_PEER_CERT = 0x02
#: The OpenSSL verify mode CPython sets for each of its modes (none: nothing to defer).
_VERIFY_MODES = {
    ssl.CERT_OPTIONAL: SSL_VERIFY_PEER,
    ssl.CERT_REQUIRED: SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
}

_VERIFY_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)

_REFUSED_LOGGED = False


class _Unsafe(Exception):
    """Why the callback cannot be installed safely."""


def defer_unknown_issuer(context: ssl.SSLContext) -> bool:
    """Install the callback on ``context`` (verify mode already ``CERT_OPTIONAL`` or
    ``CERT_REQUIRED``); whether it was. Logs once at INFO why not."""
    global _REFUSED_LOGGED
    try:
        libssl, libcrypto = _libraries()
        ssl_ctx = _ssl_ctx(context, libssl)
        get_error = libcrypto.X509_STORE_CTX_get_error
        get_error.argtypes = [ctypes.c_void_p]
        get_error.restype = ctypes.c_int
        set_verify = libssl.SSL_CTX_set_verify
        set_verify.argtypes = [ctypes.c_void_p, ctypes.c_int, _VERIFY_CALLBACK]
        set_verify.restype = None
    except (_Unsafe, OSError, AttributeError, ValueError) as err:
        if not _REFUSED_LOGGED:
            _REFUSED_LOGGED = True
            log.info(
                "client certificates from an unknown CA will fail the TLS handshake "
                "rather than get 401: %s",
                err,
            )
        return False
    unknown_issuer = UNKNOWN_ISSUER

    def verify(preverify_ok: int, store: int | None) -> int:
        if preverify_ok:
            return 1
        # Defer only "no trusted issuer" to the authenticator, which refuses the
        # certificate (401); any other error fails the handshake as OpenSSL would.
        return 1 if get_error(store) in unknown_issuer else 0

    callback = _VERIFY_CALLBACK(verify)
    mode = libssl.SSL_CTX_get_verify_mode(ssl_ctx)
    set_verify(ssl_ctx, mode, callback)
    # Kept alive by the context (and so by every connection on it: each holds its
    # context): a freed callback would be a dangling function pointer in OpenSSL.
    setattr(context, "_pyocm_verify_callback", callback)  # noqa: B010
    return True


def _libraries() -> tuple[ctypes.CDLL, ctypes.CDLL]:
    """The libssl and libcrypto that ``_ssl`` is linked to: the only ones mapped."""
    if sys.implementation.name != "cpython" or not sys.platform.startswith("linux"):
        raise _Unsafe(f"not CPython on Linux ({sys.implementation.name}, {sys.platform})")
    found: dict[str, set[str]] = {"ssl": set(), "crypto": set()}
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                match = re.search(r"/lib(ssl|crypto)\.so[.\d]*$", path)
                if match:
                    found[match.group(1)].add(path)
    except OSError as err:
        raise _Unsafe(f"cannot read /proc/self/maps: {err}") from None
    if len(found["ssl"]) != 1 or len(found["crypto"]) != 1:
        raise _Unsafe(f"not exactly one libssl and one libcrypto mapped: {found}")
    libssl = ctypes.CDLL(found["ssl"].pop())
    libcrypto = ctypes.CDLL(found["crypto"].pop())
    for lib in (libssl, libcrypto):
        version = lib.OpenSSL_version_num
        version.argtypes = []
        version.restype = ctypes.c_ulong
        if version() != ssl.OPENSSL_VERSION_NUMBER:
            raise _Unsafe(
                f"{lib._name} is version {version():#x}, _ssl's is {ssl.OPENSSL_VERSION_NUMBER:#x}"
            )
    return libssl, libcrypto


def _ssl_ctx(context: ssl.SSLContext, libssl: ctypes.CDLL) -> int:
    """``context``'s ``SSL_CTX *``, checked against what Python set on it."""
    if sysconfig.get_config_var("Py_GIL_DISABLED") or hasattr(sys, "getobjects"):
        raise _Unsafe("a free-threaded or trace-refs build: another object layout")
    # PySSLContext (Modules/_ssl.c, 3.10 to 3.14): PyObject_HEAD, then SSL_CTX *ctx.
    offset = object.__basicsize__
    if type(context).__basicsize__ < offset + ctypes.sizeof(ctypes.c_void_p):
        raise _Unsafe("SSLContext is smaller than its header and a pointer")
    pointer = ctypes.c_void_p.from_address(id(context) + offset).value
    if not pointer:
        raise _Unsafe("no SSL_CTX where CPython keeps it")
    get_mode = libssl.SSL_CTX_get_verify_mode
    get_mode.argtypes = [ctypes.c_void_p]
    get_mode.restype = ctypes.c_int
    get_options = libssl.SSL_CTX_get_options
    get_options.argtypes = [ctypes.c_void_p]
    get_options.restype = ctypes.c_uint64
    get_callback = libssl.SSL_CTX_get_verify_callback
    get_callback.argtypes = [ctypes.c_void_p]
    get_callback.restype = ctypes.c_void_p
    expected = _VERIFY_MODES.get(context.verify_mode)
    mode = get_mode(pointer)
    if expected is None or mode != expected:
        raise _Unsafe(f"the SSL_CTX's verify mode is {mode}, Python set {expected}")
    if get_options(pointer) != int(context.options):
        raise _Unsafe("the SSL_CTX's options are not the context's")
    if get_callback(pointer):
        raise _Unsafe("the SSL_CTX already has a verify callback")
    # One change seen through both: the pointer is this context's, not a lookalike.
    before = context.options
    context.options = before ^ ssl.OP_NO_TICKET
    seen = get_options(pointer)
    context.options = before
    if seen != int(before ^ ssl.OP_NO_TICKET) or get_options(pointer) != int(before):
        raise _Unsafe("the SSL_CTX does not follow the context's options")
    return pointer

"""The TLS policy: a scheduler off loopback is refused without TLS, because jobs execute code on
the workers; :func:`security_from` builds Dask's ``Security`` for mutual TLS from certificate files."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from urllib.parse import urlparse

from .errors import ClusterError


def is_loopback(address: str) -> bool:
    host = urlparse(address if "://" in address else f"tcp://{address}").hostname or ""
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def security_from(tls_ca: str | None = None, tls_cert: str | None = None, tls_key: str | None = None):
    """Dask ``Security`` for mutual TLS, or None when no file is given."""
    if not (tls_ca or tls_cert or tls_key):
        return None
    if not (tls_ca and tls_cert and tls_key):
        raise ClusterError("TLS needs all three of --tls-ca, --tls-cert and --tls-key")
    for f in (tls_ca, tls_cert, tls_key):
        if not Path(f).is_file():
            raise ClusterError(f"TLS file {f} not found")
    from distributed.security import Security

    return Security(
        tls_ca_file=tls_ca,
        tls_client_cert=tls_cert,
        tls_client_key=tls_key,
        require_encryption=True,
        tls_worker_cert=tls_cert,
        tls_worker_key=tls_key,
        tls_scheduler_cert=tls_cert,
        tls_scheduler_key=tls_key,
    )


def check_address(address: str, security) -> None:
    """Refuse a scheduler off loopback without TLS: jobs execute code on the workers."""
    scheme = urlparse(address).scheme if "://" in address else "tcp"
    if scheme not in ("tcp", "tls", "inproc"):
        raise ClusterError(
            f"scheduler address {address!r}: use tcp://HOST:PORT (loopback) or tls://HOST:PORT"
        )
    if scheme == "tls" and security is None:
        raise ClusterError(
            f"scheduler {address} speaks TLS: give the certificates (--tls-ca, --tls-cert, --tls-key; "
            "in Python, cluster.security_from(ca, cert, key))"
        )
    if is_loopback(address):
        return
    if scheme != "tls" or security is None:
        raise ClusterError(
            f"scheduler {address} is not on this machine: connect with TLS (tls://HOST:PORT and "
            "--tls-ca/--tls-cert/--tls-key; the certificates authenticate both sides). Plain tcp:// "
            "is accepted only on loopback, because a profile executes code on the worker."
        )

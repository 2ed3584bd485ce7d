"""TLS for the P4Runtime server, with simple_switch_grpc's target options (after '--'):
`--grpc-server-ssl`, `--grpc-server-cert`, `--grpc-server-key`, `--grpc-server-cacert` and
`--grpc-server-with-client-auth` (mutual TLS: only clients with a certificate signed by the CA).

Certificate, key and CA are read and checked once at start, so a missing, unreadable or
mismatched file is a one-line error there rather than a failed handshake later.
"""

from __future__ import annotations

import argparse
import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc

from lanes.errors import LanesError


@dataclass(frozen=True)
class TlsConfig:
    cert: Path
    key: Path
    cacert: Path | None
    client_auth: bool


def add_tls_arguments(t: argparse.ArgumentParser) -> None:
    t.add_argument("--grpc-server-ssl", action="store_true", help="serve P4Runtime over TLS")
    t.add_argument("--grpc-server-cert", type=Path, metavar="PEM", help="the server's certificate (chain)")
    t.add_argument("--grpc-server-key", type=Path, metavar="PEM", help="the server's private key")
    t.add_argument("--grpc-server-cacert", type=Path, metavar="PEM", help="CA that signs client certificates")
    t.add_argument("--grpc-server-with-client-auth", action="store_true",
                   help="refuse clients without a certificate signed by --grpc-server-cacert")  # fmt: skip


def tls_config(t: argparse.Namespace) -> TlsConfig | None:
    """The TLS settings the target options ask for (None: plain gRPC), checked as bmv2 would."""
    given = [o for o, v in (("--grpc-server-cert", t.grpc_server_cert), ("--grpc-server-key", t.grpc_server_key),
                            ("--grpc-server-cacert", t.grpc_server_cacert),
                            ("--grpc-server-with-client-auth", t.grpc_server_with_client_auth)) if v]  # fmt: skip
    if not t.grpc_server_ssl:
        if given:
            raise LanesError(f"{given[0]} needs --grpc-server-ssl")
        return None
    if t.grpc_server_cert is None or t.grpc_server_key is None:
        raise LanesError("--grpc-server-ssl needs --grpc-server-cert PEM and --grpc-server-key PEM")
    if t.grpc_server_with_client_auth and t.grpc_server_cacert is None:
        raise LanesError("--grpc-server-with-client-auth needs --grpc-server-cacert PEM (the clients' CA)")
    cfg = TlsConfig(
        t.grpc_server_cert, t.grpc_server_key, t.grpc_server_cacert, t.grpc_server_with_client_auth
    )
    _check_files(cfg)
    return cfg


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise LanesError(f"cannot read {what} {path}: {e.strerror}") from None


def _check_files(cfg: TlsConfig) -> None:
    for path, what in ((cfg.cert, "--grpc-server-cert"), (cfg.key, "--grpc-server-key"),
                       (cfg.cacert, "--grpc-server-cacert")):  # fmt: skip
        if path is not None:
            _read(path, what)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(cfg.cert, cfg.key)
    except ssl.SSLError as e:
        raise LanesError(
            f"--grpc-server-cert {cfg.cert} and --grpc-server-key {cfg.key}: not a PEM certificate and its key ({e.reason})"
        ) from None
    if cfg.cacert is not None:
        try:
            ctx.load_verify_locations(cafile=cfg.cacert)
        except ssl.SSLError as e:
            raise LanesError(
                f"--grpc-server-cacert {cfg.cacert}: not a PEM CA certificate ({e.reason})"
            ) from None


def server_credentials(cfg: TlsConfig) -> grpc.ServerCredentials:
    return grpc.ssl_server_credentials(
        [(_read(cfg.key, "--grpc-server-key"), _read(cfg.cert, "--grpc-server-cert"))],
        root_certificates=_read(cfg.cacert, "--grpc-server-cacert") if cfg.cacert else None,
        require_client_auth=cfg.client_auth,
    )

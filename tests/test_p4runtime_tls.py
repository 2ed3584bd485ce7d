"""P4Runtime over TLS and mutual TLS, with simple_switch_grpc's option names, against real
clients: grpcio and p4runtime-shell (from PyPI, in its own venv). Certificates are made here with
openssl: a CA, a server certificate for 127.0.0.1, a client certificate from that CA and one from
another CA. Only loopback; the switch is stopped by PID, also on failure."""

from __future__ import annotations

import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from lanes.p4runtime.proto import p4r
from netns import LANES, REPO
from p4rt_util import free_port

SHELL_PY = REPO / ".venv-p4rt-shell" / "bin" / "python"
P4INFO, JSON = REPO / "p4" / "p4rt_test.p4info.txtpb", REPO / "p4" / "p4rt_test.json"
GRPC_PORT, THRIFT_PORT = free_port(), free_port()
ADDR = f"127.0.0.1:{GRPC_PORT}"


def openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


def make_ca(d: Path, name: str) -> None:
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.crt", cwd=d)  # fmt: skip


def make_signed(d: Path, name: str, ca: str, san: str | None = None) -> None:
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", cwd=d)  # fmt: skip
    ext = []
    if san:
        (d / f"{name}.ext").write_text(f"subjectAltName={san}\n")
        ext = ["-extfile", f"{name}.ext"]
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-days", "2", "-out", f"{name}.crt", *ext, cwd=d)  # fmt: skip


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    make_signed(d, "server", "ca", "IP:127.0.0.1,DNS:localhost")
    make_signed(d, "client", "ca")
    make_signed(d, "stranger", "other-ca")
    return d


def tls_args(pki: Path, client_auth: bool) -> list[str]:
    args = ["--grpc-server-ssl", "--grpc-server-cert", str(pki / "server.crt"), "--grpc-server-key",
            str(pki / "server.key")]  # fmt: skip
    if client_auth:
        args += ["--grpc-server-cacert", str(pki / "ca.crt"), "--grpc-server-with-client-auth"]
    return args


def start_switch(target: list[str], log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        p = subprocess.Popen([LANES, "switch", "--no-p4", "--thrift-port", str(THRIFT_PORT), "--",
                              "--grpc-server-addr", ADDR, *target], stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 30
    while "P4Runtime on" not in log.read_text():
        assert p.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return p


def stop(p: subprocess.Popen) -> None:
    p.terminate()
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


@pytest.fixture
def mutual_tls(pki: Path, tmp_path: Path) -> Iterator[subprocess.Popen]:
    p = start_switch(tls_args(pki, client_auth=True), tmp_path / "switch.log")
    try:
        yield p
    finally:
        stop(p)


def capabilities(channel: grpc.Channel) -> str:
    call = channel.unary_unary(
        "/p4.v1.P4Runtime/Capabilities",
        request_serializer=p4r.CapabilitiesRequest.SerializeToString,
        response_deserializer=p4r.CapabilitiesResponse.FromString,
    )
    return call(p4r.CapabilitiesRequest(), timeout=10).p4runtime_api_version


def tls_channel(pki: Path, client: str | None) -> grpc.Channel:
    creds = grpc.ssl_channel_credentials(
        root_certificates=(pki / "ca.crt").read_bytes(),
        private_key=(pki / f"{client}.key").read_bytes() if client else None,
        certificate_chain=(pki / f"{client}.crt").read_bytes() if client else None,
    )
    return grpc.secure_channel(ADDR, creds)


def refused(channel: grpc.Channel) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as e, channel:
        capabilities(channel)
    return e.value.code()


def test_mutual_tls_admits_only_clients_with_a_certificate_from_the_ca(
    pki: Path, mutual_tls: subprocess.Popen
) -> None:
    with tls_channel(pki, "client") as ch:
        assert capabilities(ch) != ""
    assert refused(tls_channel(pki, None)) == grpc.StatusCode.UNAVAILABLE
    assert refused(tls_channel(pki, "stranger")) == grpc.StatusCode.UNAVAILABLE
    assert refused(grpc.insecure_channel(ADDR)) == grpc.StatusCode.UNAVAILABLE
    assert mutual_tls.poll() is None  # refusing clients does not stop the switch


def test_p4runtime_shell_pushes_a_pipeline_over_mutual_tls(pki: Path, mutual_tls: subprocess.Popen) -> None:
    if not SHELL_PY.exists():
        pytest.fail("p4runtime-shell venv missing: run `make setup`")
    script = textwrap.dedent(f"""
        import p4runtime_sh.shell as sh
        from p4runtime_sh.p4runtime import SSLOptions
        ssl = SSLOptions(False, {str(pki / "ca.crt")!r}, {str(pki / "client.crt")!r}, {str(pki / "client.key")!r})
        sh.setup(device_id=0, grpc_addr={ADDR!r}, election_id=(0, 1),
                 config=sh.FwdPipeConfig({str(P4INFO)!r}, {str(JSON)!r}), ssl_options=ssl)
        te = sh.TableEntry("MyIngress.l2_fwd")(action="MyIngress.set_port")
        te.match["hdr.ethernet.dstAddr"] = "00:00:00:00:01:02"
        te.action["port"] = "2"
        te.insert()
        print(sum(1 for _ in sh.TableEntry("MyIngress.l2_fwd").read()))
        sh.teardown()
    """)
    r = subprocess.run(
        [str(SHELL_PY), "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "1"


def test_server_only_tls_admits_a_client_without_a_certificate(pki: Path, tmp_path: Path) -> None:
    p = start_switch(tls_args(pki, client_auth=False), tmp_path / "switch.log")
    try:
        with tls_channel(pki, None) as ch:
            assert capabilities(ch) != ""
        assert refused(grpc.insecure_channel(ADDR)) == grpc.StatusCode.UNAVAILABLE
        assert f"P4Runtime on {ADDR} over TLS" in (tmp_path / "switch.log").read_text()
    finally:
        stop(p)


@pytest.mark.parametrize(
    "target, message",
    [
        (["--grpc-server-ssl"], "--grpc-server-ssl needs --grpc-server-cert PEM and --grpc-server-key PEM"),
        (["--grpc-server-cert", "x.crt"], "--grpc-server-cert needs --grpc-server-ssl"),
        (["--grpc-server-ssl", "--grpc-server-cert", "{pki}/server.crt", "--grpc-server-key", "{pki}/missing.key"],
         "cannot read --grpc-server-key {pki}/missing.key: No such file or directory"),
        (["--grpc-server-ssl", "--grpc-server-cert", "{pki}/server.crt", "--grpc-server-key", "{pki}/client.key"],
         "--grpc-server-cert {pki}/server.crt and --grpc-server-key {pki}/client.key: not a PEM certificate and its key"),
        (["--grpc-server-ssl", "--grpc-server-cert", "{pki}/server.crt", "--grpc-server-key", "{pki}/server.key",
          "--grpc-server-with-client-auth"], "--grpc-server-with-client-auth needs --grpc-server-cacert PEM"),
    ],
)  # fmt: skip
def test_bad_tls_options_are_one_line_errors(pki: Path, target: list[str], message: str) -> None:
    target = [a.format(pki=pki) for a in target]
    r = subprocess.run([LANES, "switch", "--no-p4", "--thrift-port", str(THRIFT_PORT), "--", "--grpc-server-addr",
                        ADDR, *target], capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message.format(pki=pki) in lines[0], r.stderr

"""Fuzzing the switch's text command port (what `lanes ctl` and `--commands` speak) on a running
`lanes switch` with p4/p4rt_test and three hosts in network namespaces: simple_switch_CLI-style
commands with right, wrong, huge, missing and odd arguments (bench/textport_cmds.py), and on the
wire: many lines in one write, very long lines, random bytes, unicode, half-written lines left
by a client that disconnects, clients that leave before reading, a burst of connections, and
binary bytes on the Thrift side of the port.

Checks: every line answered with one JSON line within the deadline (no hang), an error in one
line, a command known to fail failing and one known to succeed succeeding, the tables changing
only as an answer says (dumped and compared after every command that could change them; a
refused command leaves them as they were), nothing but the answers on the switch's own output
(no traceback, no panic), and every few seconds the switch still forwarding (h1 pings h2
through it) and alive. Needs root (namespaces).

    sudo .venv/bin/python bench/fuzz_textport.py [--seconds 600] [--seed N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import signal
import socket
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from switch_proc import REPO, free_port, running  # noqa: E402
from textport_cmds import ACL, L2, PROBE_MACS, Cmd, Tables, command  # noqa: E402
from vethns import Hosts  # noqa: E402

PROGRAM = REPO / "p4" / "p4rt_test.json"
DEADLINE_S = 30.0
PROBE_EVERY_S = 5.0
LONG_LINE = 1 << 16  # the port's limit on a line (python/lanes/switch/control_server.py)
COUNTERS = re.compile(r" \(priority (-?\d+), \d+ pkts, \d+ bytes\)$")


@dataclass
class Tally:
    commands: int = 0
    ok: int = 0
    refused: int = 0
    by_verb: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, int] = field(default_factory=dict)
    probes: int = 0
    findings: list[str] = field(default_factory=list)
    recent: deque = field(default_factory=lambda: deque(maxlen=400))  # the last lines sent
    diag: Path | None = None  # where a failed probe's state is written

    def finding(self, what: str) -> None:
        if len(self.findings) < 50:
            self.findings.append(what[:400])


class Closed(Exception):
    """The switch closed the connection, or sent no answer within the deadline."""


class Conn:
    """One connection to the command port: lines out, answer lines in."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def answer(self) -> dict:
        while b"\n" not in self.buf:
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                raise Closed(f"no answer within {DEADLINE_S:.0f} s") from None
            except OSError as e:
                raise Closed(f"connection error: {e}") from None
            if not chunk:
                raise Closed("connection closed without an answer")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            r = json.loads(line)
        except ValueError:
            raise Closed(f"an answer that is not JSON: {line[:120]!r}") from None
        if not isinstance(r, dict) or not isinstance(r.get("ok"), bool):
            raise Closed(f"an answer without ok: {line[:120]!r}")
        return r

    def close(self) -> None:
        self.sock.close()


def answered(raw: bytes) -> bool:
    """Whether the port answers this line (its text, stripped, is not empty)."""
    return len(raw) > LONG_LINE or bool(raw.decode(errors="replace").strip())


def snapshot(port: int) -> Tables:
    """The tables as `table_dump` shows them, counters left out (traffic moves them)."""
    tb = Tables()
    c = Conn(port)
    try:
        for table in (L2, ACL):
            c.send(f"table_dump {table}\n".encode())
            r = c.answer()
            if not r["ok"]:
                raise Closed(f"table_dump {table}: {r['error']}")
            for line in r["out"].splitlines()[1:]:
                line = COUNTERS.sub(r" (priority \1)", line.strip())
                if line.startswith("default:"):
                    tb.defaults[table] = line
                    continue
                handle, rest = line.split(":", 1)
                tb.entries[table][int(handle)] = rest.strip()
                if table == L2:
                    tb.l2_macs[int(rest.split()[0], 16)] = int(handle)
    finally:
        c.close()
    return tb


def check_change(before: Tables, after: Tables, cmd: Cmd, r: dict, t: Tally) -> None:
    """The tables changed as the answer to `cmd` says, and no more."""
    where = f"{cmd.line[:120]!r} ({'ok' if r['ok'] else 'refused'})"
    if not r["ok"] or not cmd.mutating:
        if before.entries != after.entries or before.defaults != after.defaults:
            t.finding(f"tables changed after {where}: {diff(before, after)}")
        return
    verb, words = cmd.verb, cmd.line.split()
    table = L2 if len(words) > 1 and words[1] in ("l2_fwd", L2) else ACL
    other = ACL if table == L2 else L2
    if before.entries[other] != after.entries[other]:
        t.finding(f"{other} changed after {where}: {diff(before, after)}")
    b, a = before.entries[table], after.entries[table]
    if verb == "table_add":
        m = re.match(r"Entry has been added with handle (\d+)$", r["out"])
        new = set(a) - set(b)
        # the reply's handle is the number its text names and the one entry that is new
        if not m or r.get("handle") != int(m.group(1)) or new != {int(m.group(1))} or set(b) - set(a) \
                or any(a[h] != b[h] for h in b):  # fmt: skip
            t.finding(f"after {where} ({r['out']!r}): {diff(before, after)}")
    elif verb == "table_delete":
        gone = set(b) - set(a)
        if len(gone) != 1 or set(a) - set(b) or str(gone.pop()) != words[-1]:
            t.finding(f"after {where}: {diff(before, after)}")
    elif verb == "table_modify":
        changed = {h for h in b if a.get(h) != b[h]} | (set(a) - set(b))
        if set(a) != set(b) or not changed <= {int(words[3])}:
            t.finding(f"after {where}: {diff(before, after)}")
    elif verb == "table_clear":
        if a:
            t.finding(f"after {where}: {len(a)} entries left")
    elif verb == "table_set_default" and a != b:
        t.finding(f"entries changed after {where}: {diff(before, after)}")


def diff(before: Tables, after: Tables) -> str:
    out = []
    for table in (L2, ACL):
        b, a = before.entries[table], after.entries[table]
        out += [f"-{table}[{h}] {b[h]}" for h in sorted(set(b) - set(a))]
        out += [f"+{table}[{h}] {a[h]}" for h in sorted(set(a) - set(b))]
        out += [f"~{table}[{h}] {b[h]} -> {a[h]}" for h in sorted(set(a) & set(b)) if a[h] != b[h]]
        if before.defaults.get(table) != after.defaults.get(table):
            out.append(f"~{table} {before.defaults.get(table)} -> {after.defaults.get(table)}")
    return "; ".join(out)[:300] or "(no difference)"


def judge(cmd: Cmd, r: dict, t: Tally) -> None:
    t.commands += 1
    t.recent.append(f"{cmd.line[:200]!r} -> {'ok' if r['ok'] else 'refused'}")
    t.by_verb[cmd.verb[:30]] = t.by_verb.get(cmd.verb[:30], 0) + 1
    if r["ok"]:
        t.ok += 1
        if cmd.expect == "fail":
            t.finding(f"accepted, known to fail: {cmd.line[:200]!r} -> {str(r.get('out'))[:100]!r}")
        return
    t.refused += 1
    err = r.get("error")
    if not isinstance(err, str) or not err.strip() or "\n" in err:
        t.finding(f"an error not in one line for {cmd.line[:120]!r}: {err!r}"[:300])
    if cmd.expect == "ok":
        t.finding(f"refused, known to succeed: {cmd.line[:200]!r}: {err}")


def session(port: int, rng: random.Random, tb: Tables, t: Tally) -> Tables:
    """Commands one at a time, each answered before the next; tables checked after any that
    could change them."""
    c = Conn(port)
    try:
        for _ in range(rng.randint(1, 30)):
            cmd = command(rng, tb)
            raw = cmd.line.encode()
            c.send(raw + rng.choice([b"\n", b"\n", b"\r\n"]))
            if not answered(raw):
                continue
            r = c.answer()
            judge(cmd, r, t)
            if cmd.mutating or any(v in cmd.line for v in ("table_", "clear")):
                after = snapshot(port)
                check_change(tb, after, cmd, r, t)
                tb = after
    finally:
        c.close()
    return tb


def pipelined(port: int, rng: random.Random, tb: Tables, t: Tally) -> Tables:
    """Many lines in one write, none of which may change a table; then every answer."""
    cmds = []
    while len(cmds) < rng.randint(20, 400):
        cmd = command(rng, tb)
        if not cmd.mutating or cmd.expect == "fail":
            cmds.append(cmd)
    data = b"".join(c.line.encode() + b"\n" for c in cmds)
    c = Conn(port)
    try:
        c.send(data)
        for cmd in cmds:
            if answered(cmd.line.encode()):
                judge(cmd, c.answer(), t)
    finally:
        c.close()
    after = snapshot(port)
    if after.entries != tb.entries or after.defaults != tb.defaults:
        t.finding(f"tables changed by {len(cmds)} pipelined commands that all should fail: {diff(tb, after)}")
    return after


def long_line(port: int, rng: random.Random, tb: Tables, t: Tally) -> None:
    """A line past the port's limit is refused in one line; the connection goes on."""
    n = rng.choice([LONG_LINE + 1, 1 << 20, 8 << 20])
    body = rng.choice([b"table_add l2_fwd set_port " + b"0" * n + b" => 1", b"x" * n, b"show_ports " * (n // 11 + 1),
                       ("é" * (n // 2 + 1)).encode()])  # fmt: skip
    c = Conn(port)
    try:
        c.send(body + b"\nshow_ports\n")
        r = c.answer()
        if r != {"ok": False, "error": f"line longer than {LONG_LINE} bytes: refused"}:
            t.finding(f"a line of {len(body)} bytes answered {str(r)[:200]}")
        if not c.answer()["ok"]:
            t.finding("show_ports after a long line refused")
    finally:
        c.close()


def half_line(port: int, rng: random.Random, tb: Tables, t: Tally) -> None:
    """A command cut short, the client gone: nothing of it may happen."""
    held = tb.fuzz_handles(L2)
    whole = rng.choice([f"table_delete l2_fwd {held[0]}" if held else "table_clear acl",
                        f"table_add l2_fwd drop {rng.randint(1, 48)} =>", "table_clear l2_fwd",
                        "table_set_default acl drop"])  # fmt: skip
    cut = whole[: rng.randint(len(whole) // 2, len(whole))]
    c = Conn(port)
    c.send(cut.encode())
    c.close()
    time.sleep(0.05)
    after = snapshot(port)
    if after.entries != tb.entries or after.defaults != tb.defaults:
        t.finding(f"a half-written line {cut!r} (no newline, client gone) changed the tables: {diff(tb, after)}")


def random_bytes(port: int, rng: random.Random, t: Tally, thrift: bool) -> None:
    """Random bytes with newlines (first byte a letter, the text side), or after 0x80 (the
    Thrift side); either way the switch stays up and the port answers the next client."""
    data = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 4000)))
    data = (b"\x80" if thrift else rng.choice([b"t", b"s", b"m"])) + data
    c = Conn(port)
    try:
        c.send(data + (b"" if thrift else b"\n"))
        if not thrift:
            lines = data.split(b"\n")
            for raw in lines:
                if answered(raw):
                    r = c.answer()
                    if not r["ok"] and "\n" in r.get("error", ""):
                        t.finding(f"an error not in one line for random bytes: {r['error'][:200]!r}")
    except Closed as e:
        if not thrift:
            t.finding(f"random bytes: {e}")
    except OSError:
        pass  # the Thrift side may close on garbage: that is its answer
    finally:
        c.close()


def leave_early(port: int, rng: random.Random) -> None:
    """Commands with long answers, the client gone before reading one."""
    c = Conn(port)
    c.send(b"help\n" * rng.randint(1, 200) + b"table_dump l2_fwd\nmc_dump\n")
    c.close()


def burst(port: int, rng: random.Random, t: Tally) -> None:
    """Many connections at once, each with one command."""
    conns = [Conn(port) for _ in range(rng.randint(5, 40))]
    try:
        for c in conns:
            c.send(b"show_ports\n")
        for c in conns:
            if not c.answer()["ok"]:
                t.finding("show_ports refused in a burst of connections")
    finally:
        for c in conns:
            c.close()


def probe(port: int, hosts: Hosts, tb: Tables, t: Tally) -> Tables:
    """Put the probe's forwarding back (its l2_fwd entries, no acl rule, the default actions, and
    ports 1 and 2 able to send: a bent command may name them, e.g. `set_queue_rate 0.5 3 2` with
    its port left out makes queue 2 the port, and a queue slowed to nothing forwards nothing) and
    ping h1 -> h2 through the switch: every echo must come back. Also a few frames to port 3,
    whose queues the fuzzer bends."""
    c = Conn(port)
    try:
        fixes = ["table_clear acl", "table_set_default acl NoAction", "table_set_default l2_fwd NoAction"]
        for n in (1, 2):
            fixes += [f"set_port_rate {n} 10Gbps", f"set_scheduler strict {n}", f"set_queue_rate_bytes 1e12 {n}",
                      f"set_queue_burst 1000000 {n}", f"set_queue_depth 64 {n}", f"set_queue_quantum 1514 {n}"]  # fmt: skip
        for mac, out in PROBE_MACS.items():
            want = f"0x{mac:012x} => MyIngress.set_port 0x{out:04x}"
            h = tb.l2_macs.get(mac)
            if h is not None and not tb.entries[L2][h].startswith(want):
                fixes.append(f"table_delete l2_fwd {h}")
                h = None
            if h is None:
                fixes.append(f"table_add l2_fwd set_port 0x{mac:x} => {out}")
        for line in fixes:
            c.send(line.encode() + b"\n")
            r = c.answer()
            if not r["ok"]:
                t.finding(f"probe set-up {line!r} refused: {r['error']}")
    finally:
        c.close()
    tb = snapshot(port)
    got = hosts.ping(1, 2, count=3)
    t.probes += 1
    if got != 3:
        t.finding(f"h1 -> h2 through the switch: {got} of 3 echoes came back")
        if t.diag is not None:
            c = Conn(port)
            state = []
            for line in ("show_ports", "show_queues 1", "show_queues 2", "table_dump l2_fwd", "table_dump acl"):
                c.send(line.encode() + b"\n")
                state.append(str(c.answer().get("out")))
            c.close()
            with open(t.diag, "a") as f:
                f.write("\n".join(["=== probe failed", *t.recent, "--- state", *state, ""]))
    hosts.run(1, "ping", "-n", "-q", "-c", "2", "-i", "0.2", "-W", "1", hosts.ip(3), check=False)
    return tb


def fuzz(port: int, hosts: Hosts, seconds: float, seed: int, alive=lambda: True, log: Path | None = None,
         progress=None, diag: Path | None = None) -> Tally:  # fmt: skip
    rng, t = random.Random(seed), Tally(diag=diag)
    tb = probe(port, hosts, Tables(), t)
    start = time.monotonic()
    end, next_probe, next_note = start + seconds, start + PROBE_EVERY_S, start + 30
    kinds = ["session"] * 60 + ["pipelined"] * 12 + ["long"] * 4 + ["half"] * 8 + ["bytes"] * 6 + ["thrift"] * 3
    kinds += ["leave"] * 3 + ["burst"] * 4
    while time.monotonic() < end and len(t.findings) < 20:
        kind = rng.choice(kinds)
        t.sessions[kind] = t.sessions.get(kind, 0) + 1
        try:
            if kind == "session":
                tb = session(port, rng, tb, t)
            elif kind == "pipelined":
                tb = pipelined(port, rng, tb, t)
            elif kind == "long":
                long_line(port, rng, tb, t)
            elif kind == "half":
                half_line(port, rng, tb, t)
            elif kind in ("bytes", "thrift"):
                random_bytes(port, rng, t, thrift=kind == "thrift")
            elif kind == "leave":
                leave_early(port, rng)
            else:
                burst(port, rng, t)
        except (Closed, OSError) as e:
            t.finding(f"{kind}: {e}")
            tb = snapshot(port) if alive() else tb
        if not alive():
            t.finding("the switch died")
            break
        if time.monotonic() >= next_probe:
            tb = probe(port, hosts, tb, t)
            next_probe = time.monotonic() + PROBE_EVERY_S
        if progress and time.monotonic() >= next_note:
            progress(t)
            next_note += 30
    if alive():
        probe(port, hosts, tb, t)
    if log is not None:
        for line in log.read_text(errors="replace").splitlines():
            if re.search(r"Traceback|panicked|Error:|Exception", line):
                t.finding(f"the switch wrote: {line[:200]}")
                break
    return t


def run(seconds: float, seed: int, progress=None, diag: Path | None = None) -> Tally:
    with Hosts(3) as hosts, tempfile.TemporaryDirectory(prefix="fuzz-textport-") as tmp:
        port, gport = free_port(), free_port()
        log = Path(tmp) / "switch.log"
        args = ["switch", str(PROGRAM), *hosts.ports(), "--thrift-port", str(port), "--",
                "--grpc-server-addr", f"127.0.0.1:{gport}", "--cpu-port", "255"]  # fmt: skip
        with open(log, "w") as out, running(args, tcp_port=port, out=out) as p:
            return fuzz(port, hosts, seconds, seed, alive=lambda: p.poll() is None, log=log, progress=progress,
                        diag=diag)  # fmt: skip


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `kill` cleans up as Ctrl-C does
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the totals here")
    ap.add_argument("--diag", type=Path, help="append the recent commands and the switch's state at a failed probe")
    a = ap.parse_args()

    def note(t: Tally) -> None:
        print(f"fuzz_textport: {t.commands} commands ({t.ok} ok, {t.refused} refused), {t.probes} probes, "
              f"{len(t.findings)} findings", file=sys.stderr, flush=True)  # fmt: skip

    t0 = time.monotonic()
    t = run(a.seconds, a.seed, progress=note, diag=a.diag)
    out = {"seconds": round(time.monotonic() - t0, 1), "seed": a.seed, "commands": t.commands, "ok": t.ok,
           "refused": t.refused, "probes": t.probes, "sessions": t.sessions, "by_verb": t.by_verb,
           "findings": t.findings}  # fmt: skip
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 1 if t.findings else 0


if __name__ == "__main__":
    sys.exit(main())

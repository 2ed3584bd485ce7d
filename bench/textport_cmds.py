"""Command lines for bench/fuzz_textport.py: simple_switch_CLI-style commands of the switch's text
command port for p4/p4rt_test, with right, wrong, huge, missing and odd arguments. Each comes
with what the switch must answer: "ok", "fail", or "any" (an odd value whose verdict is the
switch's to give, as long as it is one line and the tables change only as the answer says).

The generators know the tables as the last dump showed them (`Tables`): which MACs l2_fwd
holds and which handles each table has, so an INSERT of a held key, or a delete of a handle
not held, is known to fail."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

L2, ACL = "MyIngress.l2_fwd", "MyIngress.acl"
# handles the fuzzer never touches on purpose: the probe's forwarding entries
PROBE_MACS = {0x0101: 1, 0x0102: 2, 0x0103: 3}
FUZZ_PORT = 3  # TM commands with a port go to port 3 (or to none): ports 1 and 2 carry the probe
ODD = ["", "-1", "0x", "0x" + "f" * 40, "9" * 60, "1e309", "nan", "inf", "-inf", "é", "０１", "\x00", "€",
       "0xé1", "💥", "=>", "&&&", "->", ":", "::", "1.2.3.4.5", "....", "%s%n", "{}", "'", '"', "\\", "0x-1",
       "00:00:00:00:00:00:00", "1/", "/8", "-0", "+5", "0b101", "1_000", "4294967296", "18446744073709551616",
       "-9223372036854775809", "\u202e", "\ufeff", "\t"]  # fmt: skip
MUTATING = ("table_add", "table_delete", "table_modify", "table_clear", "table_set_default")


@dataclass
class Cmd:
    line: str
    expect: str  # "ok", "fail" or "any"

    @property
    def verb(self) -> str:
        words = self.line.split()
        return words[0] if words else ""

    @property
    def mutating(self) -> bool:
        return self.verb in MUTATING


@dataclass
class Tables:
    """What the last `table_dump`s showed: handle -> entry line, per table; MACs l2_fwd holds."""

    entries: dict[str, dict[int, str]] = field(default_factory=lambda: {L2: {}, ACL: {}})
    defaults: dict[str, str] = field(default_factory=dict)
    l2_macs: dict[int, int] = field(default_factory=dict)  # MAC -> handle

    def fuzz_handles(self, table: str) -> list[int]:
        probe = {h for mac, h in self.l2_macs.items() if mac in PROBE_MACS} if table == L2 else set()
        return sorted(set(self.entries[table]) - probe)

    def free_handle(self, rng: random.Random, table: str) -> int:
        held = set(self.entries[table])
        while True:
            h = rng.choice([rng.randint(0, 64), rng.randint(0, 2**31), 2**32 - 1])
            if h not in held:
                return h


def odd(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return rng.choice(["x", "9", "é", "0x1"]) * rng.randint(100, 5000)
    return rng.choice(ODD)


def mac_text(rng: random.Random, v: int) -> str:
    r = rng.random()
    if r < 0.6:
        return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))
    return hex(v) if r < 0.8 else str(v)


def table_name(rng: random.Random, full: str) -> str:
    return full if rng.random() < 0.5 else full.split(".")[-1]


def bad_table(rng: random.Random) -> str:
    return rng.choice(["l2_fwdx", "MyIngress.", "acl.l2_fwd", "l2_fwé", "port_counter", "MyIngress",
                       "MyIngress.port_meter", "NoAction", "l2", odd(rng) or "x"])  # fmt: skip


def port_param(rng: random.Random) -> tuple[str, str]:
    """A set_port parameter: (text, "ok" if it fits 9 bits else "fail")."""
    r = rng.random()
    if r < 0.8:
        return str(rng.choice([1, 2, 3, 0, 511, rng.randint(0, 511)])), "ok"
    return rng.choice(["512", "0x200", "65536", "4294967297", "-1", "1.5", "0x", "two", "é"]), "fail"


def l2_add(rng: random.Random, tb: Tables) -> Cmd:
    mac = rng.randint(1, 48)
    expect = "fail" if mac in tb.l2_macs else "ok"
    action = rng.choice(["set_port", "set_port", "drop", "NoAction", "MyIngress.set_port"])
    params = ""
    if action.endswith("set_port"):
        params, fits = port_param(rng)
        expect = "fail" if fits == "fail" else expect
    key = mac_text(rng, mac)
    r = rng.random()
    if r < 0.25:  # one thing broken, known to fail
        how = rng.randrange(8)
        if how == 0:
            key = rng.choice(["00:00:00:00:00:00:01", "0x1000000000000", str(2**48), "-1", "0x", "0xg1", "1e3",
                              "00:00:00:00:00:1g", "0xé1", "０１", "1.2.3", "::", "0x 1"])  # fmt: skip
        elif how == 1:
            return Cmd(f"table_add {bad_table(rng)} {action} {key} => {params}".rstrip(), "fail")
        elif how == 2:
            action = rng.choice(["set_portx", "port_stats", "send_to_cpu", "MyIngress.port_counter", "é"])
        elif how == 3:
            return Cmd(f"table_add {table_name(rng, L2)} {action} {key} {params}".rstrip(), "fail")  # no =>
        elif how == 4:
            key = f"{key} {mac_text(rng, mac + 1)}"  # two keys for one field
        elif how == 5:
            params = "1 2" if action.endswith("set_port") else "7"
        elif how == 6:
            return Cmd(f"table_add {table_name(rng, L2)} {action} => {params}".rstrip(), "fail")  # no key
        else:  # a priority on an exact table: one parameter too many
            params = f"{params} 5".strip()
        return Cmd(f"table_add {table_name(rng, L2)} {action} {key} => {params}".rstrip(), "fail")
    return Cmd(f"table_add {table_name(rng, L2)} {action} {key} => {params}".rstrip(), expect)


def acl_key(rng: random.Random) -> tuple[str, str]:
    et = rng.choice([0x0800, 0x86DD, 0x88CC, 0x9000, rng.getrandbits(16)])
    mask = rng.choice([0xFFFF, 0xFF00, 0x0F0F, 0])
    lo, hi = sorted((rng.randint(0, 511), rng.randint(0, 511)))
    return f"{et & mask:#x}&&&{mask:#x}", f"{lo}->{hi}"


def acl_add(rng: random.Random, tb: Tables) -> Cmd:
    action = rng.choice(["set_port", "drop", "NoAction", "send_to_cpu"])
    params, expect = port_param(rng) if action == "set_port" else ("", "ok")
    tern, rng_key = acl_key(rng)
    prio = str(rng.choice([0, 1, 5, 100, rng.randint(0, 2**31 - 1)]))
    # a rule with the same key and priority as one held may be refused: the switch decides
    expect = "any" if expect == "ok" else expect
    r = rng.random()
    if r < 0.3:
        how = rng.randrange(7)
        if how == 0:
            prio = ""  # no priority
            if action == "set_port":
                return Cmd(f"table_add acl {action} {tern} {rng_key} =>", "fail")
        elif how == 1:
            prio = rng.choice(["2147483648", "-1", "4294967296", "0x", "1.0", "é"])
        elif how == 2:
            tern = tern.replace("&&&", rng.choice(["&&", "&", "", "&&&&&&"]))
        elif how == 3:
            rng_key = rng_key.replace("->", rng.choice(["-", ">", "", "->->"]))
        elif how == 4:
            rng_key = rng.choice(["0->512", "512->600", "0->0x200", "-1->5"])
        elif how == 5:
            tern = rng.choice(["0x10000&&&0xffff", "0x1&&&0x10000", "é&&&0xffff"])
        else:
            return Cmd(f"table_add acl {action} {tern} => {params} {prio}", "fail")  # a key missing
        return Cmd(f"table_add acl {action} {tern} {rng_key} => {params} {prio}".replace("  ", " ").strip(), "fail")
    return Cmd(f"table_add {table_name(rng, ACL)} {action} {tern} {rng_key} => {params} {prio}".replace("  ", " "),
               expect)  # fmt: skip


def handle_cmd(rng: random.Random, tb: Tables, verb: str) -> Cmd:
    table = rng.choice([L2, ACL])
    held = tb.fuzz_handles(table)
    if held and rng.random() < 0.6:
        h, expect = str(rng.choice(held)), "ok"
    else:
        h, expect = str(tb.free_handle(rng, table)), "fail"
    if held and rng.random() < 0.15:  # a held handle plus 2^32 (or 2^64) is not that handle
        h, expect = str(rng.choice(held) + rng.choice([2**32, 2**64])), "fail"
    elif rng.random() < 0.08:
        h, expect = rng.choice(["-1", "0x", "1.0", "é", "", "1 2"]), "fail"
    if verb == "table_delete":
        return Cmd(f"table_delete {table_name(rng, table)} {h}".rstrip(), expect)
    action = rng.choice(["drop", "NoAction", "set_port"])
    params = ""
    if action == "set_port":
        params, fits = port_param(rng)
        expect = "fail" if fits == "fail" else expect
    if rng.random() < 0.1:
        action, expect = rng.choice(["port_stats", "set_portx", "é"]), "fail"
    if rng.random() < 0.05:
        return Cmd(f"table_modify {table_name(rng, table)} {action} {h} {params}", "fail")  # no =>
    return Cmd(f"table_modify {table_name(rng, table)} {action} {h} => {params}".rstrip(), expect)


def table_cmd(rng: random.Random, tb: Tables) -> Cmd:
    r = rng.random()
    if r < 0.3:
        return l2_add(rng, tb)
    if r < 0.5:
        return acl_add(rng, tb)
    if r < 0.62:
        return handle_cmd(rng, tb, "table_delete")
    if r < 0.72:
        return handle_cmd(rng, tb, "table_modify")
    if r < 0.8:
        table = rng.choice([L2, ACL])
        action = rng.choice(["drop", "NoAction", "set_port"])
        params, fits = port_param(rng) if action == "set_port" else ("", "ok")
        if rng.random() < 0.2:
            return Cmd(f"table_set_default {table_name(rng, table)} {rng.choice(['port_stats', 'x', 'é'])}", "fail")
        return Cmd(f"table_set_default {table_name(rng, table)} {action} {params}".rstrip(), fits)
    if r < 0.95:
        verb = rng.choice(["table_num_entries", "table_dump"])
        if rng.random() < 0.2:
            return Cmd(f"{verb} {bad_table(rng)}", "fail")
        return Cmd(f"{verb} {table_name(rng, rng.choice([L2, ACL]))}", "ok")
    if rng.random() < 0.3:
        return Cmd(f"table_clear {table_name(rng, rng.choice([L2, ACL]))}", "ok")
    return Cmd(f"table_clear {bad_table(rng)}", "fail")


def index_text(rng: random.Random, size: int) -> tuple[str, str]:
    if rng.random() < 0.75:
        return str(rng.randrange(size)), "ok"
    return rng.choice([str(size), str(2**32), str(2**32 + 1), "-1", "0x", "é", str(2**64)]), "fail"


def extern_cmd(rng: random.Random, tb: Tables) -> Cmd:
    r = rng.random()
    if r < 0.2:
        i, e = index_text(rng, 512)
        return Cmd(f"counter_read {rng.choice(['port_counter', 'MyIngress.port_counter'])} {i}", e)
    if r < 0.3:
        held = tb.fuzz_handles(ACL)
        if held and rng.random() < 0.6:
            return Cmd(f"counter_read acl_counter {rng.choice(held)}", "ok")
        return Cmd(f"counter_read acl_counter {tb.free_handle(rng, ACL)}", "fail")
    if r < 0.35:
        return Cmd(rng.choice(["counter_reset port_counter", "counter_reset nosuch", "counter_reset"]), "any")
    if r < 0.5:
        i, e = index_text(rng, 512)
        return Cmd(f"register_read last_len {i}", e)
    if r < 0.7:
        i, e = index_text(rng, 512)
        v = rng.choice([0, 1, 2**32 - 1, rng.getrandbits(32)])
        if rng.random() < 0.1:  # wider than the register: kept to its width, as bmv2 does
            return Cmd(f"register_write last_len {i} {rng.choice([2**32, 2**63])}", "any" if e == "ok" else e)
        if rng.random() < 0.1:
            return Cmd(f"register_write last_len {i} {rng.choice(['-1', '0x', 'é', str(2**64)])}", "fail")
        return Cmd(f"register_write MyIngress.last_len {i} {v}", e)
    if r < 0.9:
        i, e = index_text(rng, 512)
        a, b = sorted((rng.random() * 10, rng.random() * 10))
        rates = f"{a:.3f}:{rng.randint(1, 10000)} {b:.3f}:{rng.randint(1, 10000)}"
        if rng.random() < 0.25:
            rates, e = rng.choice([f"{b + 1:.3f}:10 {a:.3f}:10", "1:10", "x:1 2:3", "1:-1 2:2", "nan:1 inf:2",
                                   "1:10 2:20 3:30", "-1:1 2:2"]), "fail"  # fmt: skip
        return Cmd(f"meter_set_rates port_meter {i} {rates}", e)
    i, e = index_text(rng, 512)
    return Cmd(f"meter_get_rates port_meter {i}", e)


def tm_cmd(rng: random.Random, tb: Tables) -> Cmd:
    port, pe = rng.choice([(str(FUZZ_PORT), "ok")] * 6 + [("9", "fail"), (str(2**32 + FUZZ_PORT), "fail"),
                                                           ("-1", "fail"), ("é", "fail")])  # fmt: skip
    r = rng.random()
    if r < 0.4:
        verb = rng.choice(["set_queue_rate", "set_queue_rate_bytes", "set_queue_burst", "set_queue_quantum",
                           "set_queue_depth"])  # fmt: skip
        v = rng.choice(["1000", "1e6", "12500000", "64", "1", "0.5", "1e-300", "1e300", "3000000000"])
        q, qe = rng.choice([("", "ok")] * 2 + [(str(rng.randrange(8)), "ok")] * 4 + [("8", "fail"),
                           (str(2**32), "fail"), ("-1", "fail")])  # fmt: skip
        expect = "fail" if "fail" in (pe, qe) else "any"
        if rng.random() < 0.2:
            v, expect = rng.choice(["0", "-1", "nan", "inf", "-inf", "x", "", "0x10"]), "fail"
            if v == "":
                return Cmd(f"{verb}", "fail")
            if rng.random() < 0.5:  # every port: only values that must fail
                return Cmd(f"{verb} {v}", "fail")
        return Cmd(f"{verb} {v} {port} {q}".rstrip(), expect)
    if r < 0.55:
        rate = rng.choice(["100Mbps", "1Gbps", "2.5e9", "10M", "1k", "1bps", "1e-300", "1e300"])
        if rng.random() < 0.2:
            return Cmd(f"set_port_rate {port} {rng.choice(['0', '-5M', 'fast', 'nan', 'inf', '', 'Mbps'])}", "fail")
        return Cmd(f"set_port_rate {port} {rate}", "fail" if pe == "fail" else "any")
    if r < 0.7:
        name = rng.choice(["fifo", "strict", "drr", "rlsp-drr", "rlsp-drr-borrow", "sp", "RL_SP_DRR"])
        if rng.random() < 0.2:
            return Cmd(f"set_scheduler {rng.choice(['wfq', 'é', '', 'strict strict strict'])} {port}", "fail")
        return Cmd(f"set_scheduler {name} {port}", pe) if rng.random() < 0.8 else Cmd(f"set_scheduler {name}", "ok")
    verb = rng.choice(["show_queues", "show_delay", "show_rx", "show_ports"])
    if verb == "show_queues":
        return Cmd(f"show_queues {port}", pe) if rng.random() < 0.6 else Cmd("show_queues", "ok")
    if verb == "show_delay":
        return rng.choice([Cmd(f"show_delay {port}", pe), Cmd("show_delay", "ok"), Cmd(f"show_delay {port} reset", pe),
                           Cmd("show_delay reset now", "fail")])  # fmt: skip
    if verb == "show_rx":
        return rng.choice([Cmd("show_rx", "ok"), Cmd("show_rx reset", "ok"), Cmd("show_rx later", "fail")])
    return Cmd("show_ports", "ok")


def pre_cmd(rng: random.Random, tb: Tables) -> Cmd:
    n = lambda: str(rng.choice([0, 1, 2, 3, 7, 511, 65535, 2**32 - 1]))  # noqa: E731
    bad = lambda: rng.choice(["-1", str(2**32), "x", "é", "0x"])  # noqa: E731
    forms = [
        f"mirroring_add {rng.randint(0, 40)} {rng.randint(0, 5)}", f"mirroring_add {rng.randint(0, 9)} 3 64",
        f"mirroring_add_mc {rng.randint(0, 9)} {n()}", f"mirroring_delete {rng.randint(0, 9)}",
        f"mirroring_get {rng.randint(0, 9)}", f"mc_mgrp_create {n()}", f"mc_mgrp_destroy {n()}",
        f"mc_node_create {n()} 1 2 3", f"mc_node_create {n()} 3 | ", f"mc_node_update {n()} 2 3",
        f"mc_node_associate {n()} {n()}", f"mc_node_dissociate {n()} {n()}", f"mc_node_destroy {n()}",
        f"mc_group_insert {n()} 1:0 2:1", f"mc_group_modify {n()} 3:3", f"mc_group_delete {n()}",
        "mc_dump", "mc_dump_json",
    ]  # fmt: skip
    broken = [
        f"mirroring_add {bad()} 1", f"mirroring_add 1 {bad()}", "mirroring_add", f"mirroring_get {bad()}",
        f"mc_mgrp_create {bad()}", f"mc_node_create {n()} 1 | 2", f"mc_group_insert {n()} 1-0",
        f"mc_group_insert {n()} {bad()}:1", "mc_node_associate 1", f"mirroring_add_mc 1 {bad()}",
    ]  # fmt: skip
    if rng.random() < 0.3:
        return Cmd(rng.choice(broken), "fail")
    return Cmd(rng.choice(forms), "any")


def profile_cmd(rng: random.Random, tb: Tables) -> Cmd:
    """p4rt_test has no action profile and no indirect table: every one of these fails."""
    return Cmd(rng.choice([
        "act_prof_create_member prof set_port 1", "act_prof_create_group prof", "act_prof_dump prof",
        "act_prof_delete_member prof 0", "act_prof_add_member_to_group prof 0 0",
        f"table_indirect_add {table_name(rng, L2)} 00:00:00:00:00:09 => 0", f"table_indirect_delete l2_fwd {rng.randint(0, 3)}",
        "table_indirect_set_default l2_fwd 0", "table_indirect_reset_default acl",
        "table_indirect_add_with_group acl 0x800&&&0xffff 0->5 => 0 1",
    ]), "fail")  # fmt: skip


def misc_cmd(rng: random.Random, tb: Tables) -> Cmd:
    r = rng.random()
    if r < 0.25:
        return Cmd(rng.choice(["help", "p4runtime_stats", "# a comment", "show_ports # trailing comment"]), "ok")
    if r < 0.5:
        return Cmd(rng.choice(["nosuch", "table_addd l2_fwd", "TABLE_ADD l2_fwd drop 1 =>", "é", "💥 boom",
                               "quit", "exit", "EOF", "shell ls", "load_new_config_file /etc/passwd",
                               "swap_configs", "reset_state", "table_add", "table_delete", "counter_read"]),
                   "fail")  # fmt: skip
    words = [rng.choice(["table_add", "show_ports", "l2_fwd", "acl", "=>", "set_port", "1", "0x1"]) for _ in range(4)]
    words[rng.randrange(len(words))] = odd(rng)
    return Cmd(" ".join(words), "any")


FAMILIES = [(table_cmd, 0.45), (extern_cmd, 0.15), (tm_cmd, 0.15), (pre_cmd, 0.1), (profile_cmd, 0.05),
            (misc_cmd, 0.1)]  # fmt: skip


def command(rng: random.Random, tb: Tables) -> Cmd:
    """One command line; a non-mutating one is sometimes bent in one word (its verdict then "any")."""
    gen = rng.choices([f for f, _ in FAMILIES], [w for _, w in FAMILIES])[0]
    c = gen(rng, tb)
    if not c.mutating and rng.random() < 0.1:
        words = c.line.split(" ")
        i = rng.randrange(len(words))
        r = rng.random()
        if r < 0.5:
            words[i] = odd(rng)
        elif r < 0.75:
            words.insert(i, odd(rng))
        else:
            del words[i]
        c = Cmd(" ".join(words), "any")
    return c

"""An `optional` match key over P4Runtime: the compiler writes it as a ternary key in the bmv2 JSON
(as p4c does, so bmv2's simple_switch_CLI can read the JSON) and OPTIONAL in the P4Info; the
server accepts the pair, takes OPTIONAL matches (a value, or the field left out) and reads them
back as written."""

from __future__ import annotations

import json
from pathlib import Path

from lanes._native import p4c_compile
from lanes.p4runtime.p4info_file import load_p4info
from lanes.p4runtime.proto import p4i, p4r
from p4rt_util import loopback_switch, primary, upd

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.eth.etherType: optional; hdr.eth.dst: optional; }
        actions = { to; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_optional_matches_are_written_and_read_back(tmp_path: Path) -> None:
    src = tmp_path / "opt.p4"
    src.write_text(PROGRAM)
    json_text, p4info_text = p4c_compile(str(src), [], [])
    keys = json.loads(json_text)["pipelines"][0]["tables"][0]["key"]
    assert [k["match_type"] for k in keys] == ["ternary", "ternary"]
    (tmp_path / "opt.p4info.txtpb").write_text(p4info_text)
    info = load_p4info(tmp_path / "opt.p4info.txtpb")
    table = info.tables[0]
    assert [mf.match_type for mf in table.match_fields] == [p4i.MatchField.OPTIONAL] * 2
    action = next(a.preamble.id for a in info.actions if a.preamble.name == "I.to")
    with loopback_switch() as (addr, _):
        c = primary(addr, push=False)
        try:
            c.set_pipeline(info, json_text.encode())
            te = p4r.TableEntry(table_id=table.preamble.id, priority=10)
            te.match.add(field_id=1).optional.value = (0x0800).to_bytes(2, "big")
            te.action.action.action_id = action
            te.action.action.params.add(param_id=1, value=b"\x03")
            c.write([upd(p4r.Update.INSERT, te)])
            got = c.read([p4r.Entity(table_entry=p4r.TableEntry(table_id=table.preamble.id))])
        finally:
            c.close()
    entries = [e.table_entry for e in got]
    assert len(entries) == 1, entries
    (fm,) = entries[0].match  # the field left out stays out
    assert fm.field_id == 1 and fm.WhichOneof("field_match_type") == "optional"
    assert int.from_bytes(fm.optional.value, "big") == 0x0800
    assert entries[0].priority == 10

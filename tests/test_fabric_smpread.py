"""dump_fts's tables (read from the switches by SMP) rewritten in opensm-lfts.dump's format, which
lanes's dump parsers read: the switch's LID comes from its own port-0 entry."""

from __future__ import annotations

import pytest
from lanes.errors import LanesError
from lanes.fabric.smpread import to_lfts_dump

DUMP_FTS = """\
Unicast lids [0x0-0x6] of switch DR path slid 0; dlid 0; 0,3 guid 0x0000000000000102 (s2):
  Lid  Out   Destination
       Port     Info 
0x0001 002 : (Switch portguid 0x0000000000000100: 's0')
0x0004 000 : (Switch portguid 0x0000000000000102: 's2')
0x0006 001 : (Channel Adapter portguid 0x0000000000000205: 'h2')
3 valid lids dumped 
Unicast lids [0x0-0x6] of switch DR path slid 0; dlid 0; 0 guid 0x100 (s0):
  Lid  Out   Destination
       Port     Info 
0x0001 000 : (Switch portguid 0x0000000000000100: 's0')
0x0006 003 : (Channel Adapter portguid 0x0000000000000205: 'h2')
2 valid lids dumped 
"""


def test_dump_fts_output_becomes_an_opensm_lfts_dump() -> None:
    # Switches in GUID order, as OpenSM writes them.
    assert to_lfts_dump(DUMP_FTS).splitlines() == [
        "Unicast lids [0-6] of switch Lid 1 guid 0x0000000000000100 ('s0'):",
        "0x0001 000 # Switch portguid 0x0000000000000100: 's0'",
        "0x0006 003 # Channel Adapter portguid 0x0000000000000205: 'h2'",
        "6 lids dumped",
        "Unicast lids [0-6] of switch Lid 4 guid 0x0000000000000102 ('s2'):",
        "0x0001 002 # Switch portguid 0x0000000000000100: 's0'",
        "0x0004 000 # Switch portguid 0x0000000000000102: 's2'",
        "0x0006 001 # Channel Adapter portguid 0x0000000000000205: 'h2'",
        "6 lids dumped",
    ]


def test_no_switch_in_the_output_is_an_error() -> None:
    with pytest.raises(LanesError, match="dump_fts found no switch tables"):
        to_lfts_dump("ibwarn: [1] sim_connect: attached as client 1\n")

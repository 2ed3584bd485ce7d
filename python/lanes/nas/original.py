"""The original experiment's own settings: `lanes lab run --case nas --preset original`.

Our default nas runs are at a hundred times the original's rates with random drop on full queues
(docs/ARCHITECTURE.md, decision 15). This preset puts back what the original had, so that its
800 -> 1100 kb/s can be set beside ours at its own rates:
  - nas3 at L = 1 Mb/s: bottlenecks of 500 kb/s (s1-s2) and 600 kb/s (s2-s4), every host sending
    at its own link's rate (h1, h2 500 kb/s, h5 600 kb/s);
  - 50-packet queues at every switch port, drop-tail (a full queue drops the arriving packet);
  - the hand trigger at 17 s, with the original's timeline (lanes.nas.plan: down sends through the
    baseline into the trigger; the automatic variants get a gap before it, so that down's return
    at the trigger's second is an onset they can detect).

Detection at these rates: the victim brings about 21 of iperf's 1512-byte frames a second to s2's
port (250 kb/s), 5 in a 250 ms poll; the controller's defaults (250 ms polls, at least 20 of the
flow's packets in a poll) would never judge it. The preset polls once a second and needs 10 packets
a poll; three lossy polls in a row still demote. The in-band program's window is fixed in the
program (250 ms, 20 packets), so in band the preset sends smaller datagrams (UDP_LEN_INBAND) to
have the packets: its 50-packet queues then hold less time than the original's.
"""

from __future__ import annotations

PRESETS = ["original"]
LINK_MBPS = 1.0
QUEUE_DEPTH = 50
DROP = "tail"
TRIGGER_S = 17.0
DURATION_S = 40.0
POLL_S = 1.0
MIN_PKTS = 10
UDP_LEN_INBAND = 200  # 242-byte frames: the victim brings about 32 to s2's port in a 250 ms window


def settings(alg: str) -> dict:
    """What the preset sets (NasParams fields), for one algorithm."""
    out = {"link_mbps": LINK_MBPS, "queue_depth": QUEUE_DEPTH, "drop": DROP, "manual_at_s": TRIGGER_S,
           "duration_s": DURATION_S, "timeline": "original", "poll_s": POLL_S, "min_pkts": MIN_PKTS}  # fmt: skip
    if alg.startswith("nas-inband"):
        out["udp_len"] = UDP_LEN_INBAND
    return out

"""Per-datagram one-way latency from iperf 2's receive histograms (iperf -s --histograms)."""

from __future__ import annotations

import pytest
from lanes.lab import owd_histogram, traffic

# iperf 2.1.8's server output with --histograms=1u,50000 and a --trip-times client (shortened)
SERVER_UDP_HIST = """\
[  1] 0.0000-1.0000 sec  1.25 MBytes  10.5 Mbits/sec   0.001 ms 0/893 (0%) 0.003/0.001/0.046/0.002 ms 895 pps 893/0(0) pkts 276474
[  1] 0.0000-1.0000 sec T8-PDF: bin(w=1us):cnt(893)=2:1,3:309,4:359,5:127,6:40,7:35,8:10,9:3,10:3,11:1,12:3,40:1,47:1 (5.00/95.00/99.7%=3/7/12,Outliers=2,obl/obu=0/0)
[  1] 1.0000-2.0000 sec  1.25 MBytes  10.5 Mbits/sec   0.001 ms 0/892 (0%) 0.005/0.002/0.059/0.004 ms 892 pps 892/0(0) pkts 289440
[  1] 1.0000-2.0000 sec T8-PDF: bin(w=1us):cnt(890)=3:209,4:238,5:98,6:35,7:96,8:149,9:42,10:15,11:4,13:1,14:1,32:1,44:1 (5.00/95.00/99.7%=3/9/44,Outliers=4,obl/obu=0/2)
[  1] 0.0000-2.0021 sec  2.50 MBytes  10.5 Mbits/sec   0.001 ms 0/1785 (0%) 0.004/0.001/0.059/0.003 ms 892 pps 1785/0(0) pkts 344101
[  1] 0.0000-2.0021 sec T8(f)-PDF: bin(w=1us):cnt(1783)=2:1,3:518 (5.00/95.00/99.7%=3/8/32,Outliers=6,obl/obu=0/2)
"""


def test_the_server_keeps_a_histogram_of_every_udp_datagram() -> None:
    udp = traffic.server_cmd("udp", 5001)
    assert f"--histograms={traffic.OWD_BIN_US}u,{traffic.OWD_BINS}" in udp
    assert not any(a.startswith("--histograms") for a in traffic.server_cmd("tcp", 5001))


def test_each_second_gets_its_own_histogram_and_the_whole_run_line_is_left_out() -> None:
    ivs = traffic.parse_server(SERVER_UDP_HIST)
    assert len(ivs) == 2
    assert ivs[0].owd_hist_us is not None and sum(ivs[0].owd_hist_us.values()) == 893
    assert ivs[0].owd_hist_us[3] == 309 and ivs[0].owd_beyond == 0
    assert ivs[1].owd_hist_us is not None and ivs[1].owd_hist_us[44] == 1 and ivs[1].owd_beyond == 2
    # the means of the interval lines are still there
    assert ivs[1].owd_ms == pytest.approx(0.005)


def test_a_line_without_histograms_leaves_none() -> None:
    ivs = traffic.parse_server(SERVER_UDP_HIST.splitlines()[0] + "\n")
    assert ivs[0].owd_hist_us is None


def test_percentiles_count_datagrams_not_seconds() -> None:
    # one busy second with 990 fast datagrams and one slow second with 10 slow ones: the mean
    # of the seconds' means would put half the weight on the slow second
    rows = [{"owd_hist_us": {"20": 990}}, {"owd_hist_us": {"500": 10}, "owd_beyond": 0}]
    bins, beyond = owd_histogram.merge(rows)
    assert bins == {20: 990, 500: 10} and beyond == 0
    assert owd_histogram.percentile_ms(bins, beyond, 0.5) == 0.02
    assert owd_histogram.percentile_ms(bins, beyond, 0.99) == 0.02  # the 990th datagram
    assert owd_histogram.percentile_ms(bins, beyond, 0.999) == 0.5
    assert owd_histogram.tail_ms(bins, beyond) == {"p50": 0.02, "p99": 0.02, "p999": 0.5}


def test_a_percentile_beyond_the_histogram_is_unknown_not_clipped() -> None:
    assert owd_histogram.percentile_ms({20: 98}, 2, 0.99) is None
    assert owd_histogram.percentile_ms({20: 98}, 2, 0.5) == 0.02
    assert owd_histogram.percentile_ms({}, 0, 0.5) is None
    assert owd_histogram.merge([{"mbps": 1.0}]) == ({}, 0)

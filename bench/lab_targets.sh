#!/bin/bash
# The lab's target runs: shares at 1 Gb/s on star and >= 100 Mb/s on tree2,
# high-class latency under saturating load, MPI ping-pong under TCP load, each with linux-htb.
# usage: bench/lab_targets.sh [OUT_DIR] [DURATION_S]    (root; ~20 min)
set -euo pipefail
OUT=${1:-results/lab-bench}
DUR=${2:-30}
LANES=${LANES:-$(dirname "$0")/../.venv/bin/lanes}
run() { # name args...
    local name=$1
    shift
    echo "=== $name: $*" >&2
    "$LANES" lab run --duration "$DUR" --out "$OUT/$name" "$@" || echo "!!! $name failed" >&2
}
mkdir -p "$OUT"
# shares: every class saturating (high offers 70 %, over its 60 % rate), so 60/20/20 is the answer
for alg in rlsp-drr strict linux-htb; do
    run "shares_star_1000_$alg" --topo star --case proactive --alg $alg --proto udp --link-mbps 1000 --high-load 70
    run "shares_star_100_$alg" --topo star --case proactive --alg $alg --proto udp --link-mbps 100 --high-load 70
    run "shares_tree2_100_$alg" --topo tree2 --case proactive --alg $alg --proto udp --link-mbps 100 --high-load 70
    run "shares_tcp_star_100_$alg" --topo star --case proactive --alg $alg --proto tcp --link-mbps 100
done
# loss and latency: the thesis's loads (50 % each), high class fits its rate
for alg in no strict rlsp-drr linux-htb; do
    run "latency_star_100_$alg" --topo star --case proactive --alg $alg --proto udp --link-mbps 100
done
for alg in rlsp-drr strict; do
    run "latency_star_1000_$alg" --topo star --case proactive --alg $alg --proto udp --link-mbps 1000
done
# MPI ping-pong under low-priority TCP load
for alg in no strict rlsp-drr linux-htb; do
    run "mpi_star_100_tcp_$alg" --topo star --case mpi --alg $alg --proto tcp --link-mbps 100
done
"$LANES" lab report "$OUT" --out "$OUT/report"

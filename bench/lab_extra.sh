#!/bin/bash
# Second round of lab runs (repeats of the latency runs, queue depth 256 at 1 Gb/s, tree2 at 50 Mb/s,
# runtime on tree1, MPI with the idle baseline). usage: bench/lab_extra.sh (root, from the repo; ~20 min)
OUT=results/lab-bench2
L=.venv/bin/lanes
run() { local n=$1; shift; echo "=== $n: $*" >&2; $L lab run --out $OUT/$n "$@" || echo "!!! $n failed" >&2; }
for i in 1 2; do
  for alg in strict rlsp-drr; do run latency_star_100_${alg}_$i --topo star --case proactive --alg $alg --proto udp --link-mbps 100 --duration 30; done
done
run shares_star_1000_rlsp-drr_q256 --topo star --case proactive --alg rlsp-drr --proto udp --link-mbps 1000 --high-load 70 --queue-depth 256 --duration 30
for alg in rlsp-drr strict; do run shares_tree2_50_$alg --topo tree2 --case proactive --alg $alg --proto udp --link-mbps 50 --high-load 70 --duration 30; done
for alg in rlsp-drr strict; do run runtime_tree1_100_$alg --topo tree1 --case runtime --alg $alg --proto udp --link-mbps 100 --duration 30; done
for alg in no strict rlsp-drr; do run mpi_star_100_tcp_$alg --topo star --case mpi --alg $alg --proto tcp --link-mbps 100 --duration 30; done
$L lab report $OUT --out $OUT/report

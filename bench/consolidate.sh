#!/bin/sh
# Benchmark of `lanes consolidate cv` on the PlanetLab trace (target: < 30 s for the full
# leave-one-day-out cross-validation, VMs present on >= 7 of 10 days, all thresholds and delay limits).
# Usage: bench/consolidate.sh [OUT_DIR]   (run from the repository; the trace as for `lanes consolidate cv`)
set -eu
out=${1:-/tmp/lanes-bench-consolidate}
lanes=${LANES:-.venv/bin/lanes}
grid="--min-days 7 --cores 12,16,32 --thresholds 30,40,50,60,70,80,90,100 --delay-limits 1,10,100,1000"
echo "command: $lanes consolidate cv $grid --packer ... --out ..."
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {
    name=$1
    shift
    args="$*"
    # shellcheck disable=SC2086
    /usr/bin/time -f 'TIME %e %U %S' $lanes consolidate cv $grid "$@" --out "$out/$name" 2>"$out.$name.log"
    cv=$(sed -n 's/^cv: done in \([0-9.]*\) s.*/\1/p' "$out.$name.log")
    set -- $(sed -n 's/^TIME //p' "$out.$name.log")
    printf '%-20s cross-validation %6s s; whole command %6s s wall, %5.1f s CPU  (%s)\n' "$name" "$cv" "$1" \
        "$(echo "$2 + $3" | bc)" "$args"
}
mkdir -p "$out"
run paper-packers --packer util,delay --no-plots
run paper-packers-numpy --packer util,delay --no-plots --engine numpy
run all-packers --packer util,util-bf,delay,delay-bf,delay-corr --no-plots
run paper-packers-plots --packer util,delay
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

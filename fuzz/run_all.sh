#!/usr/bin/env bash
# Runs every fuzz target one after the other for SECONDS each (default 600), niced, and prints
# each run's final libFuzzer statistics. Usage: fuzz/run_all.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(dataplane packet json_bytes json_mutate)
mkdir -p logs corpus
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    extra=()
    [ "$t" = json_bytes ] && extra=(-dict=json.dict -max_len=65536)
    log="logs/$t-$(date -u +%Y%m%dT%H%M%SZ).log"
    echo "fuzz: $t for ${secs}s (log $log)"
    if ! nice -n 10 cargo +nightly fuzz run -O -a -s none "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$secs" -timeout=10 -print_final_stats=1 "${extra[@]}" >"$log" 2>&1; then
        echo "fuzz: $t FAILED, see $log and fuzz/artifacts/$t/" >&2
        exit 1
    fi
    grep -E "DONE|^stat::number_of_executed_units|^stat::average_exec_per_sec" "$log" | sed "s/^/  $t: /"
done

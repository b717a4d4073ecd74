#!/usr/bin/env bash
# What recording costs: the same run with and without `--record FILE`, alternating, on
# an embedded RocksDB (YCSB workload A, 2 threads, 200 000 records) and on a
# redis-server kvlab starts (string model, 1 connection pipelined 16 deep). Prints each
# round and the median ratio recorded / plain throughput (the target is >= 0.95).
# Usage: bench/record-overhead.sh [ROUNDS] (default 3)
# KVLAB=/path/to/kvlab runs that binary instead of building this checkout's.
# Each median ratio gets a 95 % interval (bench/lib.sh's ratio_interval) and is written
# as a record to bench/results/ (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB
ROUNDS="${1:-3}"
use_kvlab
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
tput() { sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p'; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$KVLAB" load -P workloads/ycsb/workloada -p recordcount=200000 --db rocksdb --path "$TMP/db" \
  --threads 2 --progress never >/dev/null 2>&1
rocks() {
  "$KVLAB" run -P workloads/ycsb/workloada -p recordcount=200000 -p operationcount=1000000 \
    --db rocksdb --path "$TMP/db" --threads 2 --seed "$1" --progress never "${@:2}" 2>/dev/null | tput
}
redis() {
  "$KVLAB" run -P workloads/ycsb/workloada -p recordcount=100000 -p operationcount=1000000 \
    -p fieldcount=1 -p fieldlength=3 -p redis.model=string --db redis --spawn "" \
    --pipeline 16 --seed "$1" --progress never "${@:2}" 2>/dev/null | tput
}
for store in rocks redis; do
  plain=(); rec=(); ratio=()
  for r in $(seq 1 "$ROUNDS"); do
    p=$($store "$r")
    rm -f "$TMP/t.kvtrace"  # kvlab refuses to overwrite a trace
    q=$($store "$r" --record "$TMP/t.kvtrace")
    plain+=("$p"); rec+=("$q"); ratio+=("$(echo "$q / $p" | bc -l)")
    printf '%s round %d: plain %.0f ops/s, --record %.0f ops/s, ratio %.3f\n' "$store" "$r" "$p" "$q" "${ratio[-1]}"
  done
  printf '%s median: plain %.0f ops/s, --record %.0f ops/s, ratio %.3f (target >= 0.95), 95 %% interval %s\n' \
    "$store" "$(median "${plain[@]}")" "$(median "${rec[@]}")" "$(median "${ratio[@]}")" \
    "$(ratio_interval --digits 3 "${ratio[@]}")"
  case $store in
    rocks) what="recording overhead (--record), recorded / plain: embedded RocksDB, workload A, 2 threads" ;;
    *) what="recording overhead (--record), recorded / plain: redis-server, string model, pipeline 16" ;;
  esac
  figure_record id="record-overhead.$store" what="$what" unit=ops/s \
    kvlab="$(median "${rec[@]}")" reference="$(median "${plain[@]}")" reference_name="the same run without --record" \
    ratios="${ratio[*]}" digits=3 \
    detail="$(printf '%.0f vs %.0f ops/s (medians); target >= 0.95' "$(median "${rec[@]}")" "$(median "${plain[@]}")")" \
    section="performance-log.md#traces-replay-recording"
done

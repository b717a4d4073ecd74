#!/usr/bin/env bash
# kvlab's own cost per operation: workload A (and C, uniform) against the `null` store,
# one thread, histograms on. Prints each round and the median throughput.
# Usage: bench/null-overhead.sh [ROUNDS] (default 5)
# With BASELINE=/path/to/an/older/kvlab, every round runs that binary too, alternating
# with the one built here, and the medians of both and their ratio are printed.
# RECORDS=N sets recordcount (default: the workload files' 1000). KVLAB=/path/to/kvlab
# runs that binary instead of building this checkout's.
# Each round's new / baseline throughput is a same-round ratio; their median gets a 95 %
# interval (bench/lib.sh's ratio_interval), and each workload's comparison is written as
# a record to bench/results/ (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB BASELINE RECORDS
ROUNDS="${1:-5}"
use_kvlab
BASELINE="${BASELINE:-}"
RECORDS="${RECORDS:-1000}"
throughput() {
  "$1" run -P "workloads/ycsb/$2" -p requestdistribution="$3" -p recordcount="$RECORDS" \
    -p operationcount=20000000 --db null --threads 1 --seed "$4" --progress never 2>/dev/null \
    | sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p'
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for spec in "workloada zipfian" "workloadc uniform"; do
  set -- $spec
  runs=()
  base=()
  for r in $(seq 1 "$ROUNDS"); do
    runs+=("$(throughput "$KVLAB" "$1" "$2" "$r")")
    if [ -n "$BASELINE" ]; then
      base+=("$(throughput "$BASELINE" "$1" "$2" "$r")")
    fi
  done
  printf '%s (%s), 1 thread: median %.0f ops/s over %d rounds (%s)\n' "$1" "$2" \
    "$(median "${runs[@]}")" "$ROUNDS" "$(printf '%.0f ' "${runs[@]}")"
  id="null-overhead.$1"
  [ "$RECORDS" = 1000 ] || id+=".records-$RECORDS"
  what="kvlab's own overhead, null store, $1 ($2), $RECORDS records, 1 thread"
  if [ -n "$BASELINE" ]; then
    ratios=()
    for i in "${!runs[@]}"; do
      ratios+=("$(awk -v a="${runs[$i]}" -v b="${base[$i]}" 'BEGIN { printf "%.4f", a / b }')")
    done
    printf '  baseline %s: median %.0f ops/s (%s); ratio %.2f; same-round ratios %s: median %.2f, 95 %% interval %s\n' "$BASELINE" \
      "$(median "${base[@]}")" "$(printf '%.0f ' "${base[@]}")" \
      "$(echo "$(median "${runs[@]}") $(median "${base[@]}")" | awk '{ print $1 / $2 }')" \
      "$(printf '%.2f ' "${ratios[@]}" | sed 's/ $//')" "$(median "${ratios[@]}")" \
      "$(ratio_interval "${ratios[@]}")"
    figure_record id="$id.vs-baseline" what="$what: this build beside the baseline build" \
      unit=ops/s kvlab="$(median "${runs[@]}")" reference="$(median "${base[@]}")" \
      reference_name="baseline build $BASELINE" ratios="${ratios[*]}" \
      detail="$(printf '%.0f vs %.0f ops/s (medians)' "$(median "${runs[@]}")" "$(median "${base[@]}")")" \
      section="performance-log.md#kvlabs-own-overhead-null-store"
  else
    figure_record id="$id" what="$what (no baseline in the run)" unit=ops/s \
      kvlab="$(median "${runs[@]}")" rounds="$ROUNDS" interval_none="no reference in the run" \
      detail="$(printf '%.0f ops/s (median of %d rounds; no reference, no ratio)' "$(median "${runs[@]}")" "$ROUNDS")" \
      section="performance-log.md#kvlabs-own-overhead-null-store"
  fi
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

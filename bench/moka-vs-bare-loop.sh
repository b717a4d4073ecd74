#!/usr/bin/env bash
# kvlab's overhead on a fast in-process cache: a 100%-hit get workload (1 M keys, 100 B
# values, 2 threads, uniform keys) run by `kvlab run --db moka`, beside a bare loop of
# moka gets on the same cache from the same number of threads (the moka_overhead bench's
# line (a)), in the same run, alternating. Prints each round and the median ratio
# kvlab / bare loop (kvlab wants >= 0.8).
# Usage: bench/moka-vs-bare-loop.sh [ROUNDS] (default 3)
# KVLAB=/path/to/kvlab runs that binary instead of building this checkout's (e.g. an
# older build, to compare two versions of kvlab against the same reference).
# MOKA_BENCH=/path/to/moka_overhead-HASH runs that already built bench binary (release,
# e.g. from target/release/deps/ after `cargo bench --no-run -p kvlab-stores --features
# moka --bench moka_overhead`) instead of `cargo bench`, so nothing is built.
# The median ratio gets a 95 % interval (bench/lib.sh's ratio_interval) and is written
# as a record to bench/results/ (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB MOKA_BENCH
ROUNDS="${1:-3}"
use_kvlab
bare_loop() {
  if [ -n "${MOKA_BENCH:-}" ]; then "$MOKA_BENCH" --bench
  else cargo bench --locked --quiet -p kvlab-stores --features moka --bench moka_overhead
  fi
}
kv=(); bare=(); ratio=()
for r in $(seq 1 "$ROUNDS"); do
  k=$("$KVLAB" run -P workloads/ycsb/workloadc -p recordcount=1000000 -p fieldcount=1 \
      -p fieldlength=100 -p requestdistribution=uniform -p operationcount=10000000 \
      --db moka --cache-size 1GiB --threads 2 --seed "$r" --progress never 2>/dev/null \
      | sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p')
  b=$(bare_loop 2>/dev/null \
      | awk '/^\(a\)  bare store cache get/ { print $(NF-1) }')
  kv+=("$k"); bare+=("$b"); ratio+=("$(echo "$k / $b" | bc -l)")
  printf 'round %d: kvlab %.0f ops/s, bare loop %.0f gets/s, ratio %.3f\n' "$r" "$k" "$b" "${ratio[-1]}"
done
printf 'median: kvlab %.0f ops/s, bare loop %.0f gets/s, ratio %.3f (target >= 0.8), 95 %% interval %s\n' \
  "$(median "${kv[@]}")" "$(median "${bare[@]}")" "$(median "${ratio[@]}")" \
  "$(ratio_interval --digits 3 "${ratio[@]}")"
figure_record id=moka.bare-loop what="moka (in process, 100 % hits, 2 threads) beside a bare loop of moka gets" \
  unit=ops/s kvlab="$(median "${kv[@]}")" reference="$(median "${bare[@]}")" \
  reference_name="moka_overhead bench, line (a)" ratios="${ratio[*]}" digits=3 \
  detail="$(printf '%.0f ops/s vs %.0f gets/s (medians); target >= 0.8' "$(median "${kv[@]}")" "$(median "${bare[@]}")")" \
  section="performance-log.md#in-process-cache-kvlab-beside-a-bare-loop-of-moka-gets"

#!/usr/bin/env bash
# kvlab's overhead on a fast in-process cache: a 100%-hit get workload (1 M keys, 100 B
# values, 2 threads, uniform keys) run by `kvlab run --db moka`, beside a bare loop of
# moka gets on the same cache from the same number of threads (the moka_overhead bench's
# line (a)), in the same run, alternating. Prints each round and the median ratio
# kvlab / bare loop (kvlab wants >= 0.8).
# Usage: bench/moka-vs-bare-loop.sh [ROUNDS] (default 3)
# KVLAB=/path/to/kvlab runs that binary instead of building this checkout's (e.g. an
# older build, to compare two versions of kvlab against the same reference).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS="${1:-3}"
use_kvlab
kv=(); bare=(); ratio=()
for r in $(seq 1 "$ROUNDS"); do
  k=$("$KVLAB" run -P workloads/ycsb/workloadc -p recordcount=1000000 -p fieldcount=1 \
      -p fieldlength=100 -p requestdistribution=uniform -p operationcount=10000000 \
      --db moka --cache-size 1GiB --threads 2 --seed "$r" --progress never 2>/dev/null \
      | sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p')
  b=$(cargo bench --locked --quiet -p kvlab-stores --features moka --bench moka_overhead 2>/dev/null \
      | awk '/^\(a\)  bare store cache get/ { print $(NF-1) }')
  kv+=("$k"); bare+=("$b"); ratio+=("$(echo "$k / $b" | bc -l)")
  printf 'round %d: kvlab %.0f ops/s, bare loop %.0f gets/s, ratio %.3f\n' "$r" "$k" "$b" "${ratio[-1]}"
done
printf 'median: kvlab %.0f ops/s, bare loop %.0f gets/s, ratio %.3f (target >= 0.8)\n' \
  "$(median "${kv[@]}")" "$(median "${bare[@]}")" "$(median "${ratio[@]}")"

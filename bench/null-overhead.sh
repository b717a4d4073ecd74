#!/usr/bin/env bash
# kvlab's own cost per operation: workload A (and C, uniform) against the `null` store,
# one thread, histograms on. Prints each round and the median throughput.
# Usage: bench/null-overhead.sh [ROUNDS] (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-5}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
cargo build --release --locked --quiet --bin kvlab
KVLAB="$CARGO_TARGET_DIR/release/kvlab"
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for spec in "workloada zipfian" "workloadc uniform"; do
  set -- $spec
  runs=()
  for r in $(seq 1 "$ROUNDS"); do
    runs+=("$("$KVLAB" run -P "workloads/ycsb/$1" -p requestdistribution="$2" \
      -p operationcount=20000000 --db null --threads 1 --seed "$r" --progress never 2>/dev/null \
      | sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p')")
  done
  printf '%s (%s), 1 thread: median %.0f ops/s over %d rounds (%s)\n' "$1" "$2" \
    "$(median "${runs[@]}")" "$ROUNDS" "$(printf '%.0f ' "${runs[@]}")"
done

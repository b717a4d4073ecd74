#!/usr/bin/env bash
# Builds kvlab and runs YCSB workload A on an embedded RocksDB: load, run, verify.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
cargo build --release --locked --bin kvlab
KVLAB="$CARGO_TARGET_DIR/release/kvlab"
DB="${KVLAB_DB:-$(mktemp -d /tmp/kvlab-quickstart.XXXXXX)/db}"
OUT="${KVLAB_OUT:-results/quickstart-$(date +%Y%m%d-%H%M%S)}"
P="-P workloads/ycsb/workloada -p recordcount=100000 -p operationcount=200000 -p dataintegrity=true"
"$KVLAB" load $P --db rocksdb --path "$DB" --threads 2
"$KVLAB" run $P --db rocksdb --path "$DB" --threads 2 --out "$OUT"
"$KVLAB" verify $P --db rocksdb --path "$DB" --threads 2
echo "results: $OUT (result.json, timeline.csv, latency.hlog)"

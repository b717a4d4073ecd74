#!/usr/bin/env bash
# Seed 003's workflow with kvlab alone: generate a TPC-H lineitem-like file, import it
# into RocksDB while sampling 7% of its keys, run random reads of the sampled keys with
# a thread plan (readers and writers in one run), then verify every sampled key.
#
# The file is fed through a pipe, as seed 003 fed `<(zcat lineitem.tbl.gz)`.
#
# Usage: examples/seed-003/run.sh [OUT_DIR]   (env: LINES=1000000 OPS=300000 THREADS=2)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-results/seed-003}"
LINES="${LINES:-1000000}"
OPS="${OPS:-300000}"
THREADS="${THREADS:-2}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
cargo build --release --quiet --bin kvlab
KVLAB="$CARGO_TARGET_DIR/release/kvlab"
mkdir -p "$OUT"
DB="$OUT/li"
rm -rf "$DB"

# lineitem-like rows: 16 fields and a trailing '|', keys orderkey|partkey|suppkey,
# a 27-byte comment as in dbgen.
lineitem() {
  awk -v n="$LINES" 'BEGIN {
    srand(3);
    split("DELIVER IN PERSON,COLLECT COD,NONE,TAKE BACK RETURN", instr, ",");
    split("TRUCK,MAIL,REG AIR,AIR,FOB,RAIL,SHIP", mode, ",");
    for (i = 0; i < n; i++) {
      o = int(i / 4) + 1; l = i % 4 + 1;
      c = ""; for (j = 0; j < 27; j++) c = c sprintf("%c", 97 + int(rand() * 26));
      printf "%d|%d|%d|%d|%d|%.2f|0.0%d|0.0%d|N|O|1996-03-13|1996-02-12|1996-03-22|%s|%s|%s|\n",
        o, int(rand() * 200000) + 1, l * 2500 + int(rand() * 2500), l, int(rand() * 50) + 1,
        rand() * 100000, int(rand() * 10), int(rand() * 9), instr[int(rand() * 4) + 1],
        mode[int(rand() * 7) + 1], c;
    }
  }'
}

echo "== import $LINES lines (through a pipe), sampling 7% of the keys"
"$KVLAB" import <(lineitem) --delimiter '|' --key-fields 0,1,2 --db rocksdb --path "$DB" \
  --sample-keys 0.07 --keys-out "$OUT/keys.txt" --seed 3 --threads "$THREADS" \
  --workload-label lineitem --out "$OUT/import" --overwrite --progress never | grep -E '^\[(OVERALL|IMPORT)\]'

echo "== random reads of the sampled keys with a thread plan (readers + writers)"
"$KVLAB" run --keys "$OUT/keys.txt" --plan examples/seed-003/plan.txt \
  -p operationcount="$OPS" --db rocksdb --path "$DB" --seed 3 \
  --workload-label lineitem --out "$OUT/run" --overwrite --progress never \
  | grep -E '^\[(OVERALL|READ|UPDATE|INSERT|GROUP:[a-z]+)\], (Throughput|Operations|.*Return|Threads|99th)'

echo "== verify: every sampled key is present"
"$KVLAB" verify --keys "$OUT/keys.txt" --db rocksdb --path "$DB" --threads "$THREADS" \
  --progress never
echo "results in $OUT"

#!/usr/bin/env bash
# Seed 001's pipeline (Cao et al., "Characterizing, Modeling, and Benchmarking RocksDB
# Key-Value Workloads at Facebook", FAST'20) with kvlab alone, at this machine's scale:
#
#   1. fill a RocksDB database with db_bench's keys (48-byte GenerateKeyFromInt keys);
#   2. record a workload with key-space locality on it: the ZippyDB-like mixgraph of
#      RocksDB PR #5953 (30 key ranges, power-model keys inside a range, 85/14/1 % Get/
#      Put/Seek) at a sine-modulated rate (5000 ± 1500 ops/s, 20 s period), every
#      request to a .kvtrace file;
#   3. analyze the trace (composition, access-count CDFs, key-space heatmap, QPS);
#   4. fit db_bench's mixgraph model to it;
#   5. compare the model with the trace on RocksDB (`kvlab model fidelity`: the replay,
#      the model's four key models, YCSB's four distributions fitted to the trace);
#   6. render one report: OUT/report.html (the run, the analysis, the model, the fidelity).
#
# Usage: examples/seed-001/run.sh [OUT_DIR]   (env: NUM=1000000 OPS=300000 CACHE=1MiB
# RANGES=ranges:30; KVLAB=/path/to/kvlab runs that binary instead of building one)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-results/seed-001}"
NUM="${NUM:-1000000}"
OPS="${OPS:-300000}"
CACHE="${CACHE:-1MiB}"
RANGES="${RANGES:-ranges:30}"
if [ -z "${KVLAB:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
  cargo build --release --quiet --bin kvlab
  KVLAB="$CARGO_TARGET_DIR/release/kvlab"
fi
mkdir -p "$OUT"
DB="$OUT/db"
rm -rf "$DB"
ZIPPY=(-P workloads/mixgraph/zippydb-like -p num="$NUM")

echo "== 1. fill: $NUM random puts of db_bench's keys"
"$KVLAB" run --db rocksdb --path "$DB" "${ZIPPY[@]}" -p key_model=all_random \
  -p mix_get_ratio=0 -p mix_put_ratio=1 -p mix_seek_ratio=0 -p sine_mix_rate=false \
  -p reads="$NUM" --workload-label fill --out "$OUT/fill" --overwrite --progress never \
  | grep -E '^\[OVERALL\], Throughput'

# The rate: kvlab's sine schedule (db_bench's own starts with an interval at 1 M ops/s).
echo "== 2. record: $OPS requests of the ZippyDB-like mixgraph at 5000 ± 1500 ops/s (20 s period)"
"$KVLAB" run --db rocksdb --path "$DB" "${ZIPPY[@]}" -p reads="$OPS" -p sine_mix_rate=false \
  --target-rate sine:5000,1500,20s --record "$OUT/trace.kvtrace" --workload-label zippydb-like \
  --out "$OUT/record" --overwrite --progress never | grep -E '^\[(OVERALL|READ|INSERT|SCAN)\], (Throughput|Operations)'

echo "== 3. analyze the trace"
"$KVLAB" trace analyze "$OUT/trace.kvtrace" --out "$OUT/analyze" --html > /dev/null

echo "== 4. fit db_bench's mixgraph model"
"$KVLAB" model fit "$OUT/trace.kvtrace" -o "$OUT/model.toml" --key-ranges "$RANGES" 2> "$OUT/fit.txt"
grep -E '^(num|keyrange_num|keyrange_dist_[ab]|key_dist_[ab]|mix_[a-z]+_ratio|sine_[abd]) ' "$OUT/model.toml"

echo "== 5. fidelity on RocksDB (block cache $CACHE)"
"$KVLAB" model fidelity "$OUT/trace.kvtrace" --db rocksdb --block-cache "$CACHE" \
  --key-ranges "$RANGES" --out "$OUT/fidelity" --html

echo "== 6. one report"
"$KVLAB" report "$OUT/record" --html "$OUT/run.html" > /dev/null
esc() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
{
  echo "<!doctype html><html><head><meta charset='utf-8'><title>kvlab: seed 001</title>"
  echo "<style>body{font-family:sans-serif;margin:2em}iframe{width:100%;border:1px solid #ccc}"
  echo "pre{background:#f6f6f6;padding:1em;overflow:auto;max-height:30em}</style></head><body>"
  echo "<h1>Seed 001: record, analyze, model, compare (Cao et al., FAST'20)</h1>"
  echo "<p>A ZippyDB-like mixgraph workload ($OPS requests over $NUM keys) recorded on RocksDB,"
  echo "analyzed, fitted with db_bench's mixgraph model and kvlab's locality layer, and compared"
  echo "with it and with YCSB's distributions on copies of one database (block cache $CACHE).</p>"
  echo "<h2>1. Model fidelity (the paper's Figure 14)</h2>"
  echo "<iframe src='fidelity/index.html' style='height:1950px'></iframe>"
  echo "<h2>2. The trace: composition, popularity, key space, QPS</h2>"
  echo "<iframe src='analyze/index.html' style='height:2400px'></iframe>"
  echo "<h2>3. The fitted model</h2><pre>"
  esc < "$OUT/model.toml"
  echo "</pre><h2>4. The recorded run</h2>"
  echo "<iframe src='run.html' style='height:1600px'></iframe>"
  echo "</body></html>"
} > "$OUT/report.html"
rm -rf "$DB"
echo "report: $OUT/report.html"

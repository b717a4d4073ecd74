#!/usr/bin/env bash
# Seed 000's CacheBench study with kvlab alone, scaled to a small machine: hit ratio and
# get/set throughput of each store, by data size (KV-mixed, balanced), by KV-size class
# (balanced, middle data size) and by read/write mix (KV-mixed, middle data size).
#
# The study compared memcached (with and without flash), CacheLib and RocksDB with a
# ~20 GB cache and 2/20/40 GB of data. Here every cache gets CACHE_MB of memory and the
# data sizes are CACHE_MB/8, CACHE_MB and 2×CACHE_MB, so "smaller than, equal to and
# larger than the cache" keep their meaning. Stores: memcached, memcached with extstore
# (flash tier in a file), redis (maxmemory + allkeys-lru), rocksdb (not-found = miss),
# and the in-process moka and foyer (hybrid DRAM + disk) caches when kvlab has them.
#
# Usage: examples/seed-000/cachebench-table.sh [OUT_DIR]   (env: CACHE_MB=64 OPS=200000)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-results/seed-000}"
CACHE_MB="${CACHE_MB:-64}"
OPS="${OPS:-200000}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
cargo build --release --quiet --bin kvlab
KVLAB="$CARGO_TARGET_DIR/release/kvlab"
mkdir -p "$OUT"
SMALL=$((CACHE_MB / 8)); EQUAL=$CACHE_MB; LARGE=$((CACHE_MB * 2))

stores=(memcached memcached-flash redis rocksdb)
for s in moka foyer; do
  if "$KVLAB" run --db "$s" -P workloads/cache/kv-small-readonly -p cache.operations=1 \
      -p cache.data_size=1MiB --progress never >/dev/null 2>&1; then stores+=("$s"); fi
done

# One run: store, class, mix, data MiB → "hit get set" (percent, ops/s, ops/s).
run() {
  local store=$1 class=$2 mix=$3 data_mb=$4 tag="$1-$2-$3-${4}MiB"
  local args=(run -P "workloads/cache/kv-$class-$mix" -p cache.data_size="${data_mb}MiB"
    -p cache.operations="$OPS" --threads 2 --progress never --seed 1)
  local dir; dir=$(mktemp -d)
  case $store in
    memcached) args+=(--db memcached --spawn "m=$CACHE_MB,I=2m" --connections 4) ;;
    memcached-flash) args+=(--db memcached --connections 4
      --spawn "m=$CACHE_MB,I=2m,ext_path=$dir/extstore:$((LARGE * 2))m,ext_wbuf_size=8") ;;
    redis) args+=(--db redis --connections 4
      --spawn "maxmemory=${CACHE_MB}mb,maxmemory-policy=allkeys-lru") ;;
    rocksdb) args+=(--db rocksdb --path "$dir/db") ;;
    moka) args+=(--db moka --cache-size "${CACHE_MB}MiB") ;;
    foyer) args+=(--db foyer --cache-size "$((CACHE_MB / 4))MiB" --disk-path "$dir/foyer"
      --disk-size "$((LARGE * 2))MiB") ;;
  esac
  "$KVLAB" "${args[@]}" >"$OUT/$tag.txt" 2>"$OUT/$tag.log" || true
  rm -rf "$dir"
  awk -F', ' '/^\[CACHE\], HitRatio/ {h=$3} /^\[CACHE\], GetThroughput/ {g=$3}
    /^\[CACHE\], SetThroughput/ {s=$3} END {printf "%s | %s | %s", h, g, s}' "$OUT/$tag.txt"
}

table() { # title, column name, then "label class mix data_mb" rows
  local title=$1 col=$2; shift 2
  local rows=("$@")
  echo; echo "### $title"; echo
  echo "| Database | $col | Hit Ratio (%) | get throughput (ops/s) | set throughput (ops/s) |"
  echo "|---|---|---:|---:|---:|"
  for store in "${stores[@]}"; do
    for row in "${rows[@]}"; do
      read -r label class mix data_mb <<<"$row"
      echo "| $store | $label | $(run "$store" "$class" "$mix" "$data_mb") |"
    done
  done
}

{
  echo "# Seed 000 CacheBench table, kvlab, cache ${CACHE_MB} MiB, ${OPS} operations per run"
  table "By data size (KV-mixed, balanced)" "Data Size" \
    "${SMALL}MiB mixed balanced $SMALL" "${EQUAL}MiB mixed balanced $EQUAL" \
    "${LARGE}MiB mixed balanced $LARGE"
  table "By KV size (${EQUAL} MiB, balanced)" "KV Size" \
    "small small balanced $EQUAL" "large large balanced $EQUAL" "mixed mixed balanced $EQUAL"
  table "By read/write mix (KV-mixed, ${EQUAL} MiB)" "Pattern" \
    "readheavy mixed readheavy $EQUAL" "setheavy mixed setheavy $EQUAL" \
    "balanced mixed balanced $EQUAL"
} | tee "$OUT/table.md"

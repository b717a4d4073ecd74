#!/usr/bin/env bash
# Miss-ratio curves of four policies (LRU, S3FIFO, W-TinyLFU, Redis's sampled LRU) and
# LRU's exact curve on one cache workload, with what moka and a redis-server (maxmemory,
# allkeys-lru) measured at three cache sizes drawn on them as squares.
#
#   examples/cache-sim/mrc-vs-measured.sh [OUT_DIR]     (env: OPS=300000 SEED=1 KVLAB=…)
#
# Each store runs the workload once per size (`kvlab run … --out OUT/STORE-SIZE`); then
# `kvlab sim -P` simulates the same workload with the same seed, in byte mode, and
# `--compare` puts every run beside the policy closest to its store. The page is
# OUT/sim/index.html; with chromium on PATH, OUT/sim/index.png is its screenshot.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-results/cache-sim}"
OPS="${OPS:-300000}"
SEED="${SEED:-1}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
if [[ -z "${KVLAB:-}" ]]; then
  cargo build --release --quiet --bin kvlab
  KVLAB="$CARGO_TARGET_DIR/release/kvlab"
fi
mkdir -p "$OUT"
# KV-mixed sizes (16 B … 16 KiB, mean 1391 B), 95 % gets, look-aside, 64 MiB of data.
WORKLOAD=(-P workloads/cache/kv-mixed-readheavy -p cache.data_size=64MiB
  -p cache.operations="$OPS")
SIZES_MIB=(4 8 16)

runs=()
for mb in "${SIZES_MIB[@]}"; do
  for store in moka redis; do
    dir="$OUT/$store-${mb}MiB"
    case $store in
      moka) db=(--db moka --cache-size "${mb}MiB") ;;
      # Redis reads `mb` as MiB: the same bytes as moka's capacity.
      redis) db=(--db redis --spawn "maxmemory=${mb}mb,maxmemory-policy=allkeys-lru") ;;
    esac
    echo "== $store ${mb} MiB" >&2
    "$KVLAB" run "${WORKLOAD[@]}" "${db[@]}" --seed "$SEED" --progress never \
      --out "$dir" --overwrite > "$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
    grep -h 'HitRatio' "$dir.log" >&2
    runs+=("$dir")
  done
done

mkdir -p "$OUT/sim"
sizes="2%,5%,10%,15%,20%,25%,30%,40%,50%"
for mb in "${SIZES_MIB[@]}"; do sizes+=",${mb}MiB"; done
"$KVLAB" sim "${WORKLOAD[@]}" --seed "$SEED" --bytes \
  --policy lru,s3fifo,wtinylfu,sampledlru --size "$sizes" --mrc \
  --compare "$(IFS=,; echo "${runs[*]}")" --out "$OUT/sim" --html | tee "$OUT/sim/table.txt"

browser="${KVLAB_CHROMIUM:-chromium}"
if command -v "$browser" > /dev/null; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$browser" --headless --disable-gpu --no-sandbox --no-first-run --hide-scrollbars \
    "--user-data-dir=$tmp/profile" --window-size=1100,620 \
    "--screenshot=$(realpath -m "$OUT/sim/index.png")" "file://$(realpath "$OUT/sim/index.html")" \
    2> /dev/null
  echo "$OUT/sim/index.png" >&2
fi

#!/usr/bin/env bash
# kvlab beside db_bench on the same RocksDB library, same machine, same run.
#
# Matched settings: 1 M keys, 100-byte values, 2 threads, no compression, bloom filter
# 10 bits/key, a 1 GiB block cache so every read is served from memory, WAL on,
# pipelined writes on (db_bench's default; RocksDB's and kvlab's default is off), the
# block cache's high-priority pool at RocksDB's default ratio 0.5 (db_bench's is 0), and
# RocksDB's per-thread perf level at db_bench's default, kDisable (kvlab's
# rocksdb.perf_level default; RocksDB's own is kEnableCount).
# kvlab keys are YCSB keys (`user` + up to 19 digits, 23 bytes) and its value is the
# record encoding of one 100-byte field (114 bytes); db_bench is given the same sizes.
#
# A third phase reads in batches of 8: kvlab with --pipeline 8 (the RocksDB store sends
# a batch of reads as one DB::MultiGet), db_bench multireadrandom with --batch_size=8.
# A fourth sends kvlab's point reads with db_bench's own keys (GenerateKeyFromInt, 23
# bytes, every key found) to the database db_bench's readrandom just read: kvlab's
# mixgraph generator with Gets only and uniform keys, so the two tools ask RocksDB for
# the same work and the ratio is the harness's alone (YCSB's keys share their `user`
# prefix and so cost RocksDB longer key comparisons). A fifth row sets that beside
# db_bench's readrandom with --histogram=1: db_bench then times every read into its
# histogram, as kvlab always does (--histogram=0, db_bench's default, times nothing).
#
# kvlab links RocksDB's static archive by default (librocksdb.a of the same Debian
# package, as RocksDB's own build links db_bench); Debian's db_bench links the shared
# librocksdb.so, whose calls go through the PLT and whose thread-locals cost a
# __tls_get_addr call each. The script prints which one the kvlab binary links; a build
# with ROCKSDB_STATIC=0 links the shared library as db_bench does, for the harness's own
# cost alone. KVLAB_B=/path/to/another/kvlab (e.g. such a build) runs that binary's point
# reads too, in the same rounds, and prints their rows beside the first binary's.
#
# Each round runs both tools alternately (A/B); the medians and the kvlab/db_bench
# ratios are printed, and beside them each process's CPU time (user + system, all its
# threads, from /usr/bin/time) per operation it ran — warm-up passes and opening the
# database included (kvlab's reads: 1 M warm-up + 2 M measured; db_bench's: three passes
# of 1 M, the first warming the cache as kvlab's warm-up does, the last one's throughput
# reported) — which other processes on a busy machine disturb less than throughput. Usage: bench/rocksdb-vs-db_bench.sh [ROUNDS] (default 3)
# KVLAB=/path/to/kvlab runs that binary instead of building this checkout's (e.g. an
# older build, to compare two versions of kvlab against the same reference).
# The table's last column is the 95 % interval of the same-round ratios' median (bench/lib.sh's
# ratio_interval); each row is written as a record to bench/results/ (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB KVLAB_B KEYS
ROUNDS="${1:-3}"
KEYS="${KEYS:-1000000}"  # smaller only to try the script: the figures are for 1 M
THREADS=2
use_kvlab
if ldd "$KVLAB" 2>/dev/null | grep -q 'librocksdb\.so'; then
  echo "kvlab links the shared librocksdb.so, as db_bench does"
else
  echo "kvlab links RocksDB's static archive (librocksdb.a); db_bench the shared librocksdb.so"
fi
if [ -n "${KVLAB_B:-}" ]; then
  [ -x "$KVLAB_B" ] || { echo "not an executable: $KVLAB_B" >&2; exit 1; }
  if ldd "$KVLAB_B" 2>/dev/null | grep -q 'librocksdb\.so'; then B_LINK=shared; else B_LINK=archive; fi
  echo "KVLAB_B ($KVLAB_B) links RocksDB's $B_LINK library"
fi
DB_BENCH="$(command -v db_bench || true)"
[ -n "$DB_BENCH" ] || { echo "db_bench not found: apt-get install rocksdb-tools" >&2; exit 1; }
WORK="$(mktemp -d /tmp/kvlab-bench.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

COMMON_DB_BENCH=(--num=$KEYS --threads=$THREADS --key_size=23 --value_size=114
  --compression_type=none --bloom_bits=10 --cache_size=1073741824
  --write_buffer_size=67108864 --max_background_jobs=2 --enable_pipelined_write=true
  --statistics=1 --histogram=0 --cache_high_pri_pool_ratio=0.5)
KV_ENGINE=(-p rocksdb.compression=none -p rocksdb.bloom_bits=10 -p rocksdb.block_cache_size=1GiB
  -p rocksdb.write_buffer_size=64MiB -p rocksdb.max_background_jobs=2
  -p rocksdb.pipelined_write=true)
KV_PROPS=(-p recordcount=$KEYS -p fieldcount=1 -p fieldlength=100 -p insertorder=hashed
  -p requestdistribution=uniform -p readproportion=1 -p updateproportion=0
  -p operationcount=$((KEYS * 2)) "${KV_ENGINE[@]}")

TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=""
# Runs a command, its CPU seconds (user system) into $WORK/cpu.
timed() {
  if [ -n "$TIME" ]; then "$TIME" -f "%U %S" -o "$WORK/cpu" "$@"; else echo "0 0" >"$WORK/cpu"; "$@"; fi
}
# CPU microseconds per operation of the last timed command, which ran $1 operations.
cpu_per_op() { awk -v n="$1" '{ printf "%.2f", ($1 + $2) * 1e6 / n }' "$WORK/cpu"; }
kv_tput() { sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p'; }
dbb_tput() { awk -v b="$1" '$1 == b { for (i = 1; i <= NF; i++) if ($i ~ /^ops\/sec;?$/) v = $(i-1) } END { print v }'; }

# Uniform YCSB point reads of kvlab's database (A) and db_bench's keys read from db_bench's
# database (D) by kvlab binary $1 in round $2, each 1 M warm-up + 2 M measured: ops/s.
kv_read() {
  timed "$1" run "${KV_PROPS[@]}" --db rocksdb --path "$WORK/kv" --threads $THREADS --seed "$2" \
    --warmup $((KEYS))ops --progress never 2>/dev/null | kv_tput
}
kv_dbkeys() {
  # db_bench's database keeps its records in the column family `default`.
  timed "$1" run --db rocksdb --path "$WORK/dbu" "${KV_ENGINE[@]}" \
    -p rocksdb.column_family=default -p workload=kvlab.mixgraph \
    -p num=$KEYS -p key_size=23 -p mix_get_ratio=1 -p mix_put_ratio=0 -p mix_seek_ratio=0 \
    -p reads=$((KEYS * 2 / THREADS)) -p seed="$2" --threads $THREADS --warmup $((KEYS))ops \
    --progress never 2>/dev/null | kv_tput
}

BATCH=8
declare -a KV_FILL KV_READ KV_MULTI DB_FILL DB_READ DB_MULTI
declare -a KV_FILL_CPU KV_READ_CPU KV_MULTI_CPU DB_FILL_CPU DB_READ_CPU DB_MULTI_CPU
declare -a KV_DBKEYS KV_DBKEYS_CPU DB_READH DB_READH_CPU B_READ B_READ_CPU B_DBKEYS B_DBKEYS_CPU
for r in $(seq 1 "$ROUNDS"); do
  rm -rf "$WORK"/*
  # A: kvlab load (random insert order) then uniform point reads, cache warmed first.
  KV_FILL+=("$(timed "$KVLAB" load "${KV_PROPS[@]}" --db rocksdb --path "$WORK/kv" \
    --threads $THREADS --seed $r --progress never 2>/dev/null | kv_tput)")
  KV_FILL_CPU+=("$(cpu_per_op $KEYS)")
  KV_READ+=("$(kv_read "$KVLAB" $r)")
  KV_READ_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  if [ -n "${KVLAB_B:-}" ]; then
    B_READ+=("$(kv_read "$KVLAB_B" $r)")
    B_READ_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  fi
  # B: db_bench fillrandom (1 M writes in all, random keys with repeats).
  DB_FILL+=("$(timed "$DB_BENCH" --benchmarks=fillrandom --writes=$((KEYS / THREADS)) \
    "${COMMON_DB_BENCH[@]}" --db="$WORK/dbb" --seed=$r 2>/dev/null | dbb_tput fillrandom)")
  DB_FILL_CPU+=("$(cpu_per_op $KEYS)")
  # readrandom needs every key present, as in kvlab's database (fillrandom leaves ~37 %
  # of the key space empty, and misses cost a bloom probe, not a block read): load with
  # filluniquerandom (single-threaded in db_bench), then read three times; the first warms.
  "$DB_BENCH" --benchmarks=filluniquerandom "${COMMON_DB_BENCH[@]}" --threads=1 \
    --db="$WORK/dbu" --seed=$r >/dev/null 2>&1
  DB_READ+=("$(timed "$DB_BENCH" --benchmarks=readrandom,readrandom,readrandom --use_existing_db=1 \
    --reads=$((KEYS / THREADS)) "${COMMON_DB_BENCH[@]}" --db="$WORK/dbu" --seed=$r 2>/dev/null \
    | dbb_tput readrandom)")
  DB_READ_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  # D: the same point reads with db_bench's own keys (GenerateKeyFromInt, 23 bytes):
  # kvlab's mixgraph, Gets only, uniform over the keys (All_random), on the database
  # db_bench just read, 1 M warm-up + 2 M measured as in A.
  KV_DBKEYS+=("$(kv_dbkeys "$KVLAB" $r)")
  KV_DBKEYS_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  if [ -n "${KVLAB_B:-}" ]; then
    B_DBKEYS+=("$(kv_dbkeys "$KVLAB_B" $r)")
    B_DBKEYS_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  fi
  # E: db_bench's readrandom again, timing every read into its histogram as kvlab always
  # does (--histogram=1), on the same database.
  DB_READH+=("$(timed "$DB_BENCH" --benchmarks=readrandom,readrandom,readrandom --use_existing_db=1 \
    --reads=$((KEYS / THREADS)) "${COMMON_DB_BENCH[@]}" --histogram=1 --db="$WORK/dbu" --seed=$r \
    2>/dev/null | dbb_tput readrandom)")
  DB_READH_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  KV_MULTI+=("$(timed "$KVLAB" run "${KV_PROPS[@]}" --db rocksdb --path "$WORK/kv" \
    --threads $THREADS --seed $r --warmup $((KEYS))ops --pipeline $BATCH --progress never \
    2>/dev/null | kv_tput)")
  KV_MULTI_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  DB_MULTI+=("$(timed "$DB_BENCH" --benchmarks=multireadrandom,multireadrandom,multireadrandom \
    --use_existing_db=1 --batch_size=$BATCH --reads=$((KEYS / THREADS)) "${COMMON_DB_BENCH[@]}" \
    --db="$WORK/dbu" --seed=$r 2>/dev/null | dbb_tput multireadrandom)")
  DB_MULTI_CPU+=("$(cpu_per_op $((KEYS * 3)))")
  echo "round $r: kvlab load ${KV_FILL[-1]} read ${KV_READ[-1]} read-batched ${KV_MULTI[-1]}" \
    "read-db_bench-keys ${KV_DBKEYS[-1]} (CPU ${KV_DBKEYS_CPU[-1]} µs/op)" \
    "| db_bench readrandom --histogram=1 ${DB_READH[-1]} (CPU ${DB_READH_CPU[-1]} µs/op)" \
    "| db_bench fillrandom ${DB_FILL[-1]} readrandom ${DB_READ[-1]}" \
    "multireadrandom ${DB_MULTI[-1]} (ops/s); CPU µs/op kvlab ${KV_FILL_CPU[-1]}" \
    "${KV_READ_CPU[-1]} ${KV_MULTI_CPU[-1]} | db_bench ${DB_FILL_CPU[-1]} ${DB_READ_CPU[-1]}" \
    "${DB_MULTI_CPU[-1]}"
  if [ -n "${KVLAB_B:-}" ]; then
    echo "round $r: KVLAB_B read ${B_READ[-1]} read-db_bench-keys ${B_DBKEYS[-1]} (ops/s);" \
      "CPU µs/op ${B_READ_CPU[-1]} ${B_DBKEYS_CPU[-1]}"
  fi
done

KF=$(median "${KV_FILL[@]}"); KR=$(median "${KV_READ[@]}")
DF=$(median "${DB_FILL[@]}"); DR=$(median "${DB_READ[@]}")
KM=$(median "${KV_MULTI[@]}"); DM=$(median "${DB_MULTI[@]}")
KD=$(median "${KV_DBKEYS[@]}"); KDC=$(median "${KV_DBKEYS_CPU[@]}")
DH=$(median "${DB_READH[@]}"); DHC=$(median "${DB_READH_CPU[@]}")
KFC=$(median "${KV_FILL_CPU[@]}"); KRC=$(median "${KV_READ_CPU[@]}"); KMC=$(median "${KV_MULTI_CPU[@]}")
DFC=$(median "${DB_FILL_CPU[@]}"); DRC=$(median "${DB_READ_CPU[@]}"); DMC=$(median "${DB_MULTI_CPU[@]}")
echo
# Each round's kvlab / db_bench (the two ran minutes apart, so what the machine did to
# both cancels out of it), and their median.
ratios_of() { # KVLAB_ARRAY_NAME DB_BENCH_ARRAY_NAME: the same-round ratios, 4 decimals
  local -n a="$1" b="$2"
  local i out=()
  for i in "${!a[@]}"; do out+=("$(awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN { printf "%.4f", x / y }')"); done
  echo "${out[*]}"
}
same_round() { # KVLAB_ARRAY_NAME DB_BENCH_ARRAY_NAME
  local r out=""
  for r in $(ratios_of "$1" "$2"); do out+="$(printf '%.2f' "$r") "; done
  # shellcheck disable=SC2086
  printf '%s(%.2f)' "$out" "$(median $out)"
}
echo "| phase | kvlab ops/s (median) | db_bench ops/s (median) | kvlab / db_bench | same-round ratios (median) | CPU µs/op kvlab / db_bench (medians) | 95 % interval of the same-round median |"
echo "|---|---|---|---|---|---|---|"
# One row of the table, and its record: ID PHASE KVLAB_ARRAY DB_BENCH_ARRAY KVLAB_CPU_ARRAY
# DB_BENCH_CPU_ARRAY [WHAT] (the arrays by name).
row() {
  local -n ka="$3" da="$4" kc="$5" dc="$6"
  local a b c d ratios
  a=$(median "${ka[@]}"); b=$(median "${da[@]}"); c=$(median "${kc[@]}"); d=$(median "${dc[@]}")
  ratios=$(ratios_of "$3" "$4")
  # shellcheck disable=SC2086
  awk -v p="$2" -v a="$a" -v b="$b" -v c="$c" -v d="$d" -v r="$(same_round "$3" "$4")" \
    -v iv="$(ratio_interval $ratios)" \
    'BEGIN { printf "| %s | %.0f | %.0f | %.2f | %s | %.2f / %.2f | %s |\n", p, a, b, a / b, r, c, d, iv }'
  figure_record id="rocksdb.$1" what="RocksDB ${7:-$2} beside db_bench" unit=ops/s \
    kvlab="$a" reference="$b" reference_name="db_bench $(command -v db_bench)" ratios="$ratios" \
    detail="$(awk -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN { printf "%.0f vs %.0f ops/s, CPU %.2f vs %.2f µs/op (medians)", a, b, c, d }')" \
    section="performance-log.md#rocksdb-beside-db_bench"
}
row load "random insert (load / fillrandom)" KV_FILL DB_FILL KV_FILL_CPU DB_FILL_CPU \
  "load (1 M distinct keys, 2 threads) / fillrandom (keys drawn with repeats)"
row read "uniform point read (run / readrandom)" KV_READ DB_READ KV_READ_CPU DB_READ_CPU \
  "uniform point reads (run) / readrandom"
row read-batched "batched read (run --pipeline $BATCH / multireadrandom --batch_size=$BATCH)" \
  KV_MULTI DB_MULTI KV_MULTI_CPU DB_MULTI_CPU \
  "batched reads (run --pipeline $BATCH) / multireadrandom --batch_size=$BATCH"
row read-dbbench-keys "uniform point read, db_bench's keys (mixgraph Gets / readrandom)" \
  KV_DBKEYS DB_READ KV_DBKEYS_CPU DB_READ_CPU \
  "point reads of db_bench's keys (mixgraph Gets) / readrandom"
row read-dbbench-keys-histogram \
  "the same, db_bench timing every read (mixgraph Gets / readrandom --histogram=1)" \
  KV_DBKEYS DB_READH KV_DBKEYS_CPU DB_READH_CPU \
  "point reads of db_bench's keys (mixgraph Gets) / readrandom --histogram=1"
if [ -n "${KVLAB_B:-}" ]; then
  row "read.kvlab-b-$B_LINK" "uniform point read, KVLAB_B ($B_LINK; run / readrandom)" \
    B_READ DB_READ B_READ_CPU DB_READ_CPU \
    "uniform point reads, second binary linking RocksDB's $B_LINK library (run) / readrandom"
  row "read-dbbench-keys.kvlab-b-$B_LINK" \
    "uniform point read, db_bench's keys, KVLAB_B ($B_LINK; mixgraph Gets / readrandom)" \
    B_DBKEYS DB_READ B_DBKEYS_CPU DB_READ_CPU \
    "point reads of db_bench's keys, second binary linking RocksDB's $B_LINK library / readrandom"
fi

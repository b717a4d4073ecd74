#!/usr/bin/env bash
# kvlab's mixgraph (`kvlab db_bench --benchmarks=mixgraph`) beside db_bench's own, on the
# same RocksDB library, in the same run, with the same flags.
#
# One database of NUM keys is filled once by db_bench `fillseq` (the keys mixgraph's
# GenerateKeyFromInt makes, 48 bytes, 100-byte values); each round copies it twice and
# runs the ZippyDB-like mixgraph of RocksDB PR #5953 (30 key ranges, power-model keys,
# 85 % Get / 14 % Put / 1 % Seek, generalized-Pareto sizes; no sine rate: as fast as it
# goes) with the same flags on each copy, db_bench and kvlab alternating which goes
# first. Tuning flags are given to both at kvlab's RocksDB defaults (8 MiB block cache,
# 10-bit bloom filters, snappy, 64 MiB memtables, pipelined writes off), which kvlab's
# db_bench accepts and names as unused.
#
# Prints every round's ops/s and the median ratio kvlab / db_bench (target >= 1.0).
# Usage: bench/mixgraph-vs-db_bench.sh [ROUNDS] (default 3); NUM keys (default 1000000),
# READS per thread (default 1000000), THREADS (default 1). KVLAB=/path/to/kvlab runs that
# binary instead of building this checkout's.
# The table's last column is the 95 % interval of the median ratio (bench/lib.sh's
# ratio_interval); the comparison is written as a record to bench/results/ (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB NUM READS THREADS
ROUNDS="${1:-3}"
NUM="${NUM:-1000000}"
READS="${READS:-1000000}"
THREADS="${THREADS:-1}"
use_kvlab
DB_BENCH="$(command -v db_bench || true)"
[ -n "$DB_BENCH" ] || { echo "db_bench not found: apt-get install rocksdb-tools" >&2; exit 1; }
WORK="$(mktemp -d /tmp/kvlab-mixgraph-bench.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# The same flags for both tools.
FLAGS=(--benchmarks=mixgraph --use_existing_db=1 --num=$NUM --reads=$READS
  --threads=$THREADS --key_size=48 --seed=1
  --key_dist_a=0.002312 --key_dist_b=0.3467
  --keyrange_num=30 --keyrange_dist_a=14.18 --keyrange_dist_b=-2.917
  --keyrange_dist_c=0.0164 --keyrange_dist_d=-0.08082
  --value_k=0.2615 --value_sigma=25.45 --iter_k=2.517 --iter_sigma=14.236
  --mix_get_ratio=0.85 --mix_put_ratio=0.14 --mix_seek_ratio=0.01
  --cache_size=8388608 --bloom_bits=10 --compression_type=snappy
  --write_buffer_size=67108864)
# db_bench only: its defaults that differ from kvlab's store (pipelined writes, which
# kvlab's RocksDB store leaves at RocksDB's default, off).
DB_BENCH_ONLY=(--enable_pipelined_write=false)

"$DB_BENCH" --benchmarks=fillseq --num=$NUM --key_size=48 --value_size=100 \
  --compression_type=snappy --bloom_bits=10 --db="$WORK/base" >/dev/null 2>&1

tput_of() { awk '$1 == "mixgraph" { for (i = 1; i <= NF; i++) if ($i ~ /^ops\/sec;?$/) v = $(i-1) } END { print v }'; }
run_db_bench() {
  rm -rf "$WORK/d"; cp -r "$WORK/base" "$WORK/d"
  "$DB_BENCH" "${FLAGS[@]}" "${DB_BENCH_ONLY[@]}" --db="$WORK/d" 2>/dev/null | tput_of
}
run_kvlab() {
  rm -rf "$WORK/k"; cp -r "$WORK/base" "$WORK/k"
  "$KVLAB" db_bench "${FLAGS[@]}" --db="$WORK/k" 2>/dev/null | tput_of
}

declare -a KV DB RATIO
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then
    DB+=("$(run_db_bench)"); KV+=("$(run_kvlab)")
  else
    KV+=("$(run_kvlab)"); DB+=("$(run_db_bench)")
  fi
  RATIO+=("$(awk -v a="${KV[-1]}" -v b="${DB[-1]}" 'BEGIN { printf "%.3f", a / b }')")
  echo "round $r: kvlab ${KV[-1]} db_bench ${DB[-1]} ops/s: ratio ${RATIO[-1]}"
done
echo
IV="$(ratio_interval --digits 3 "${RATIO[@]}")"
echo "| mixgraph | kvlab ops/s (median) | db_bench ops/s (median) | kvlab / db_bench (median of rounds) | 95 % interval |"
echo "|---|---|---|---|---|"
echo "| ZippyDB-like, $NUM keys, $READS reads × $THREADS threads | $(median "${KV[@]}") | $(median "${DB[@]}") | $(median "${RATIO[@]}") | $IV |"
id=mixgraph.db_bench
[ "$NUM.$READS.$THREADS" = 1000000.1000000.1 ] || id+=".num-$NUM.reads-$READS.threads-$THREADS"
figure_record id="$id" \
  what="mixgraph (ZippyDB-like, $NUM keys, $READS reads × $THREADS threads) beside db_bench's" \
  unit=ops/s kvlab="$(median "${KV[@]}")" reference="$(median "${DB[@]}")" \
  reference_name="db_bench --benchmarks=mixgraph" ratios="${RATIO[*]}" digits=2 \
  detail="$(printf '%.0f vs %.0f ops/s (medians)' "$(median "${KV[@]}")" "$(median "${DB[@]}")")" \
  section="performance-log.md#kvlabs-mixgraph-beside-db_benchs-kvlab-db_bench---benchmarksmixgraph"

#!/usr/bin/env bash
# kvlab's redis client beside redis-benchmark, in one go against one redis-server:
# SET then GET, 50 connections, pipeline 1 and 16, 3-byte values over 100000 random
# keys; rounds alternate which tool goes first. Both run one thread (redis-benchmark is
# single-threaded), so kvlab runs `memtier -t 1 -c 50 --distinct-client-seed` (memtier's
# clients otherwise share one seed and so one key sequence; redis-benchmark's -r draws
# independently per request). Each tool's CPU time (user +
# system, from /usr/bin/time) is divided by its requests.
#
# Prints every round and a table of medians with the ratios kvlab / redis-benchmark:
# throughput (target >= 1.0) and CPU per request (target <= 1.0).
#
# Each round also drives kvlab through `kvlab run`: a YCSB workload in the string model
# with one 3-byte field (`fieldcount=1`, so an update is one SET), uniform over 100000
# records, one thread of 50 connections — YCSB's path rather than memtier's — and the
# table has a row for each path. KV_MODE=memtier or KV_MODE=run runs only that one.
#
# RB_CONTENT=ycsb makes redis-benchmark send what `kvlab run` sends —
# 23-byte keys (`user0000000` + its 12-digit `__rand_int__`; YCSB's are `user` + 19
# digits) and 3-byte values (a one-field record is stored as its field's bytes), as
# `SET user0000000__rand_int__ vvv` / `GET user0000000__rand_int__` — so that at
# pipeline 16, where redis-server is the bottleneck, both tools ask the server for the
# same work.
#
# Usage: bench/redis-vs-redis-benchmark.sh [ROUNDS] (default 3)
# Requests per run: N1 (pipeline 1, default 400000) and N16 (pipeline 16, default
# 2000000), environment variables. KVLAB=/path/to/kvlab runs that binary instead of
# building this checkout's (e.g. to compare an older build against the same server).
# The table's last column is the 95 % interval of the same-round throughput ratios' median
# (bench/lib.sh's ratio_interval); each row is written as a record to bench/results/
# (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB KV_MODE N1 N16 RB_CONTENT
ROUNDS="${1:-3}"
N1="${N1:-400000}"
N16="${N16:-2000000}"
CLIENTS=50
case "${KV_MODE:-both}" in
  memtier) KV_TOOLS="kv" ;;
  run) KV_TOOLS="kr" ;;
  both) KV_TOOLS="kv kr" ;;
  *) echo "KV_MODE is memtier, run or both (the default), not ${KV_MODE}" >&2; exit 2 ;;
esac
for tool in redis-server redis-benchmark redis-cli /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (bash setup.sh installs it)" >&2; exit 1; }
done
use_kvlab

work="$(mktemp -d)"
REDIS_PID=""
cleanup() {
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

port="$(free_port)"

start_redis "$port" "$work" "$work/redis.log"

# Runs a command under /usr/bin/time; its stdout goes to $work/out, CPU seconds to $cpu.
timed() {
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
    cat "$work/err" >&2; exit 1; }
  cpu="$(awk 'END { print $1 + $2 }' "$work/time")"
}
# rps and CPU µs per request of one tool for one test (set/get) and pipeline.
run_rb() { # TEST P N
  if [ "${RB_CONTENT:-}" = ycsb ]; then
    local cmd=(GET user0000000__rand_int__)
    [ "$1" = set ] && cmd=(SET user0000000__rand_int__ vvv)
    timed redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -P "$2" -n "$3" \
      -r 100000 --csv "${cmd[@]}"
    rps="$(awk -F'","' 'NR > 1 && $1 ~ /user0000000/ { print $2; exit }' "$work/out")"
    cpu_us="$(awk -v c="$cpu" -v n="$3" 'BEGIN { printf "%.3f", c * 1e6 / n }')"
    return
  fi
  timed redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -P "$2" -n "$3" -t "$1" \
    -d 3 -r 100000 --csv
  rps="$(awk -F'","' -v t="${1^^}" '$1 == "\"" t { print $2 }' "$work/out")"
  cpu_us="$(awk -v c="$cpu" -v n="$3" 'BEGIN { printf "%.3f", c * 1e6 / n }')"
}
# kvlab through `kvlab run` (YCSB, string model).
run_kr() { # TEST P N
  local mix=(-p readproportion=0 -p updateproportion=1)
  [ "$1" = get ] && mix=(-p readproportion=1 -p updateproportion=0)
  timed "$KVLAB" run -P workloads/ycsb/workloada "${mix[@]}" -p fieldcount=1 \
    -p fieldlength=3 -p recordcount=100000 -p operationcount="$3" \
    -p requestdistribution=uniform -p redis.model=string --db redis \
    --url "redis://127.0.0.1:$port" --threads 1 --connections "$CLIENTS" --pipeline "$2" \
    --max-errors 1000000000 --progress never
  rps="$(sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p' "$work/out")"
  cpu_us="$(awk -v c="$cpu" -v n="$3" 'BEGIN { printf "%.3f", c * 1e6 / n }')"
}
# kvlab through `kvlab memtier`.
run_kv() { # TEST P N
  local ratio=1:0
  [ "$1" = get ] && ratio=0:1
  timed "$KVLAB" memtier -s 127.0.0.1 -p "$port" -t 1 -c "$CLIENTS" --pipeline "$2" \
    --ratio "$ratio" --distinct-client-seed -n $(($3 / CLIENTS)) --data-size 3 --key-maximum 100000 --hide-histogram
  rps="$(awk '$1 == "Totals" { print $2 }' "$work/out")"
  cpu_us="$(awk -v c="$cpu" -v n="$3" 'BEGIN { printf "%.3f", c * 1e6 / n }')"
}

tool_name() { case "$1" in rb) echo redis-benchmark ;; kv) echo "kvlab memtier" ;; *) echo "kvlab run" ;; esac; }

echo "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on 127.0.0.1:$port;" \
  "$(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A RPS CPU
for P in 1 16; do
  N=$N1
  [ "$P" = 16 ] && N=$N16
  for r in $(seq 1 "$ROUNDS"); do
    # Odd rounds redis-benchmark first, even rounds last (and the kvlab paths reversed).
    order="rb $KV_TOOLS"
    [ $((r % 2)) = 0 ] && order="$(printf '%s\n' $order | tac | tr '\n' ' ')"
    # SET first, so the GETs find their keys (each tool its own key names).
    for test in set get; do
      for tool in $order; do
        "run_$tool" "$test" "$P" "$N"
        RPS[$tool,$test,$P]+="$rps "
        CPU[$tool,$test,$P]+="$cpu_us "
        printf 'round %d  P=%-2s %-3s %-15s %12.0f req/s %8.3f CPU us/req\n' "$r" "$P" \
          "$test" "$(tool_name "$tool")" "$rps" "$cpu_us"
      done
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '| test | pipeline | kvlab | redis-benchmark req/s | kvlab req/s | ratio | same-round ratios (median) | redis-benchmark CPU us/req | kvlab CPU us/req | ratio | 95 %% interval of the same-round median |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for P in 1 16; do
  for test in set get; do
    for kv in $KV_TOOLS; do
      # shellcheck disable=SC2086
      rb_r="$(median ${RPS[rb,$test,$P]})"; kv_r="$(median ${RPS[$kv,$test,$P]})"
      # shellcheck disable=SC2086
      rb_c="$(median ${CPU[rb,$test,$P]})"; kv_c="$(median ${CPU[$kv,$test,$P]})"
      # Each round's kvlab / redis-benchmark, the two run a minute apart: what the machine
      # did to both cancels out of it.
      # shellcheck disable=SC2086
      rounds="$(paste -d' ' <(printf '%s\n' ${RPS[$kv,$test,$P]}) <(printf '%s\n' ${RPS[rb,$test,$P]}) \
        | awk '{ printf "%.2f ", $1 / $2 }')"
      # shellcheck disable=SC2086
      exact="$(paste -d' ' <(printf '%s\n' ${RPS[$kv,$test,$P]}) <(printf '%s\n' ${RPS[rb,$test,$P]}) \
        | awk '{ printf "%.4f ", $1 / $2 }')"
      # shellcheck disable=SC2086
      printf '| %s | %s | %s | %.0f | %.0f | %.2f | %s(%.2f) | %.3f | %.3f | %.2f | %s |\n' "${test^^}" "$P" \
        "$(tool_name "$kv" | sed 's/^kvlab //')" "$rb_r" "$kv_r" \
        "$(awk -v a="$kv_r" -v b="$rb_r" 'BEGIN { print a / b }')" "$rounds" "$(median $rounds)" \
        "$rb_c" "$kv_c" "$(awk -v a="$kv_c" -v b="$rb_c" 'BEGIN { print a / b }')" \
        "$(ratio_interval $exact)"
      path="$(tool_name "$kv" | sed 's/^kvlab //')"
      figure_record id="redis.$path.${test}.p$P${RB_CONTENT:+.rb-$RB_CONTENT}" \
        what="Redis through \`kvlab $path\` beside redis-benchmark, $CLIENTS connections, pipeline $P, ${test^^}${RB_CONTENT:+ (redis-benchmark sending $RB_CONTENT-sized keys)}" \
        unit=req/s kvlab="$kv_r" reference="$rb_r" reference_name=redis-benchmark ratios="$exact" \
        detail="$(awk -v a="$kv_r" -v b="$rb_r" -v c="$kv_c" -v d="$rb_c" 'BEGIN { printf "%.0f vs %.0f req/s (medians); CPU per request %.2f", a, b, c / d }')" \
        section="performance-log.md#redis-beside-redis-benchmark"
    done
  done
done
echo "(medians of $ROUNDS rounds; ratio = kvlab / redis-benchmark)"

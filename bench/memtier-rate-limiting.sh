#!/usr/bin/env bash
# CPU of kvlab memtier beside memtier_benchmark at each --rate-limiting rate: one
# connection (`-t 1 -c 1`), 3 seconds, against one spawned redis-server, at 100, 1 000,
# 5 000 and 20 000 requests a second and without a limit. Each round runs both tools at
# every rate, alternating which goes first; each run is timed by /usr/bin/time
# (user + system seconds) and its requests are the `Totals` `Count` of its JSON file
# (`--json-out-file`). kvlab runs with `--no-server-queries`, so both send the same
# traffic over one connection.
#
# Prints every run (achieved ops/s, CPU seconds, CPU µs per request), then per rate the
# medians and the same-round ratio kvlab / memtier of CPU per request — its median and
# its spread (lowest–highest) over the rounds. The goal is a ratio at or below 1.0 at
# every rate.
#
# Usage: MEMTIER=path/to/memtier_benchmark KVLAB=path/to/kvlab ROUNDS=3 \
#   bench/memtier-rate-limiting.sh
# RATES="100 1000" overrides the rates (`0` is no limit); TEST_TIME=3 the seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
: "${MEMTIER:?set MEMTIER to a memtier_benchmark binary (built from its 2.3.0 tag)}"
[ -x "$MEMTIER" ] || { echo "not an executable: $MEMTIER" >&2; exit 2; }
use_kvlab
ROUNDS="${ROUNDS:-3}"
RATES="${RATES:-100 1000 5000 20000 0}"
TEST_TIME="${TEST_TIME:-3}"
for tool in redis-server redis-cli jq /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 2; }
done

work="$(mktemp -d)"
REDIS_PID=""
cleanup() {
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
port="$(free_port)"
start_redis "$port" "$work" "$work/redis.log"

# One run of TOOL (memtier or kvlab) at RATE; sets ops (achieved ops/s), cpu (seconds)
# and cpu_us (µs per request).
n=0
run() { # TOOL RATE
  n=$((n + 1))
  local json="$work/run-$n.json" limit=()
  [ "$2" != 0 ] && limit=(--rate-limiting="$2")
  local flags=(-s 127.0.0.1 -p "$port" -t 1 -c 1 "${limit[@]}" --test-time="$TEST_TIME"
    --hide-histogram --json-out-file="$json")
  if [ "$1" = memtier ]; then
    /usr/bin/time -f '%U %S' -o "$work/time" "$MEMTIER" "${flags[@]}" \
      >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  else
    /usr/bin/time -f '%U %S' -o "$work/time" "$KVLAB" memtier "${flags[@]}" \
      --no-server-queries >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  fi
  cpu="$(awk 'END { print $1 + $2 }' "$work/time")"
  local count
  count="$(jq '."ALL STATS".Totals.Count' "$json")"
  ops="$(jq '."ALL STATS".Totals."Ops/sec"' "$json")"
  cpu_us="$(awk -v c="$cpu" -v n="$count" 'BEGIN { printf "%.2f", (n > 0) ? c * 1e6 / n : 0 }')"
}

echo "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on 127.0.0.1:$port;" \
  "$(nproc) CPUs; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memtier: $MEMTIER"
echo "kvlab:   $KVLAB"
declare -A OPS CPU RATIO
for r in $(seq 1 "$ROUNDS"); do
  for rate in $RATES; do
    order="memtier kvlab"
    [ $((r % 2)) = 0 ] && order="kvlab memtier"
    declare -A this=()
    for tool in $order; do
      run "$tool" "$rate"
      OPS[$tool,$rate]+="$ops "
      CPU[$tool,$rate]+="$cpu_us "
      this[$tool]="$cpu_us"
      printf 'round %d  rate %-6s %-8s %10.0f ops/s %6.2f s CPU %8.2f CPU us/req\n' \
        "$r" "${rate/#0/none}" "$tool" "$ops" "$cpu" "$cpu_us"
    done
    RATIO[$rate]+="$(awk -v k="${this[kvlab]}" -v m="${this[memtier]}" \
      'BEGIN { printf "%.3f", (m > 0) ? k / m : 0 }') "
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '| rate | memtier ops/s | kvlab ops/s | memtier CPU us/req | kvlab CPU us/req | kvlab / memtier CPU per request: median (lowest–highest) | rounds |\n'
printf '|---|---|---|---|---|---|---|\n'
for rate in $RATES; do
  # shellcheck disable=SC2086
  lo_hi="$(printf '%s\n' ${RATIO[$rate]} | sort -g | sed -n '1p;$p' | paste -sd'-' | sed 's/-/–/')"
  # shellcheck disable=SC2086
  printf '| %s | %.0f | %.0f | %.2f | %.2f | %.3f (%s) | %s |\n' "${rate/#0/none}" \
    "$(median ${OPS[memtier,$rate]})" "$(median ${OPS[kvlab,$rate]})" \
    "$(median ${CPU[memtier,$rate]})" "$(median ${CPU[kvlab,$rate]})" \
    "$(median ${RATIO[$rate]})" "$lo_hi" "$ROUNDS"
done

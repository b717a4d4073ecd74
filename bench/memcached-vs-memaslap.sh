#!/usr/bin/env bash
# kvlab's memcached client beside memaslap (Debian's libmemcached-tools ships it as
# `memcaslap`), in one go against one memcached (-t 2): SET then GET, one client thread,
# 50 connections, no pipelining, 32-byte values; rounds alternate which tool goes first.
# Each tool's CPU time (user + system, from /usr/bin/time) is divided by the requests it
# sent.
#
# PROTOCOL=text (default) compares the text protocols; PROTOCOL=binary compares the
# binary protocols (kvlab memtier -P memcache_binary, memaslap -B) and runs kvlab's text
# protocol in the same rounds too, for the binary / text ratio.
#
# Both tools read and write the same number of keys of the same size:
# - keys: memaslap makes random 16-byte keys, a window of 1024 per connection (-w 1k):
#   51200 keys. kvlab (`memtier` flags) uses the 51200 16-byte keys
#   `memtier-key10000` … `memtier-key61199`, each connection with its own seed
#   (--distinct-client-seed; memtier's clients otherwise share one key sequence).
# - warm: memaslap's GET run first SETs its window (51200 SETs) and then reads it;
#   kvlab writes its 51200 keys once before the first round (untimed: P:P, one slice
#   per connection), so its GETs hit whatever its SET runs drew.
# - GET rate: memaslap's is the median of its per-second GET periods after the first
#   (which holds the preload); kvlab's the median of its per-second GET counts (the
#   JSON Time-Serie) after the first, the last (partial) second left out. A stall of
#   the shared machine then weighs the same on both.
#
# Prints every round and a table of medians with the ratios kvlab / memaslap:
# throughput (target >= 1.0) and CPU per request.
#
# Usage: bench/memcached-vs-memaslap.sh [ROUNDS] (default 3); SECS per run (default 5),
# PROTOCOL text or binary. KVLAB=/path/to/kvlab runs that binary instead of building
# this checkout's.
# The tables' last column is the 95 % interval of the same-round throughput ratios' median
# (bench/lib.sh's ratio_interval); each row is written as a record to bench/results/
# (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB SECS PROTOCOL
ROUNDS="${1:-3}"
SECS="${SECS:-5}"
PROTOCOL="${PROTOCOL:-text}"
case "$PROTOCOL" in
  text) KV_PROTO=memcache_text; MS_FLAGS=(); TOOLS="ms kv" ;;
  binary) KV_PROTO=memcache_binary; MS_FLAGS=(-B); TOOLS="ms kv kt" ;;
  *) echo "PROTOCOL is text or binary" >&2; exit 2 ;;
esac
CLIENTS=50
MEMASLAP="$(command -v memcaslap || command -v memaslap || true)"
[ -n "$MEMASLAP" ] || { echo "missing memcaslap (apt-get install libmemcached-tools)" >&2; exit 1; }
for tool in memcached /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (bash setup.sh installs it)" >&2; exit 1; }
done
use_kvlab

work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

port="$(free_port)"
user=()
[ "$(id -u)" = 0 ] && user=(-u root)
memcached -l 127.0.0.1 -p "$port" -U 0 -t 2 -m 1024 -c 1024 "${user[@]}" &
server_pid=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done

# kvlab's keys: prefix + 5 digits = 16 bytes, as memaslap's; 51200 of them.
KEYS=(--key-prefix memtier-key --key-minimum 10000 --key-maximum 61199)
"$KVLAB" memtier -s 127.0.0.1 -p "$port" -P "$KV_PROTO" -t 1 -c "$CLIENTS" --ratio 1:0 \
  --key-pattern P:P -n allkeys --data-size 32 "${KEYS[@]}" --hide-histogram >/dev/null

# memaslap's configuration: key sizes, value sizes, then SET (0) and GET (1) shares.
printf 'key\n16 16 1\nvalue\n32 32 1\ncmd\n0 1.0\n1 0.0\n' >"$work/set.cfg"
printf 'key\n16 16 1\nvalue\n32 32 1\ncmd\n0 0.0\n1 1.0\n' >"$work/get.cfg"

timed() {
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
    cat "$work/err" "$work/out" >&2; exit 1; }
  cpu="$(awk 'END { print $1 + $2 }' "$work/time")"
}
per_request() { awk -v c="$cpu" -v n="$1" 'BEGIN { printf "%.3f", c * 1e6 / n }'; }
run_ms() { # TEST
  timed "$MEMASLAP" -s "127.0.0.1:$port" -T 1 -c "$CLIENTS" -t "${SECS}s" -S 1s -w 1k \
    "${MS_FLAGS[@]}" -F "$work/$1.cfg"
  local sent
  sent="$(awk '/^cmd_get:/ { g = $2 } /^cmd_set:/ { s = $2 } END { print g + s }' "$work/out")"
  if [ "$1" = set ]; then
    rps="$(sed -n 's/^Run time: .* TPS: \([0-9]*\).*/\1/p' "$work/out")"
  else
    # shellcheck disable=SC2046
    rps="$(median $(awk '/^Get Statistics$/ { get = 1; next } /Statistics/ { get = 0 }
      get && $1 == "Period" && ++n > 1 { print $4 }' "$work/out"))"
  fi
  cpu_us="$(per_request "$sent")"
}
run_kt() { # TEST: kvlab over the text protocol
  run_kv "$1" memcache_text
}
run_kv() { # TEST [PROTOCOL]
  local ratio=1:0
  [ "$1" = get ] && ratio=0:1
  timed "$KVLAB" memtier -s 127.0.0.1 -p "$port" -P "${2:-$KV_PROTO}" -t 1 -c "$CLIENTS" \
    --ratio "$ratio" --distinct-client-seed --test-time "$SECS" --data-size 32 "${KEYS[@]}" \
    --hide-histogram --json-out-file "$work/kv.json"
  if [ "$1" = set ]; then
    rps="$(awk '$1 == "Totals" { print $2 }' "$work/out")"
  else
    # Per-second GET counts of the Time-Serie, in order; the first and last left out.
    # shellcheck disable=SC2046
    rps="$(median $(awk '/"Gets": \{/ { g = 1 } g && /"Time-Serie": \{/ { t = 1; next }
      t && /^        "[0-9]+": \{/ { gsub(/[^0-9]/, ""); k = $0; if (k > n) n = k }
      t && /"Count":/ { gsub(/[^0-9]/, ""); c[k] = $0 } t && /^      \}/ { exit }
      END { for (i = 1; i < n; i++) print c[i] }' "$work/kv.json"))"
  fi
  local sent
  sent="$(awk '/"Totals": \{/ { t = 1 } t && /"Count":/ { gsub(/[^0-9]/, ""); print; exit }' \
    "$work/kv.json")"
  cpu_us="$(per_request "$sent")"
  hits="$(awk '$1 == "Totals" { print $3 }' "$work/out")"
}

echo "$(memcached -V) -t 2 on 127.0.0.1:$port; $MEMASLAP; $PROTOCOL protocol; $(nproc) CPUs;" \
  "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A RPS CPU
for r in $(seq 1 "$ROUNDS"); do
  order="$TOOLS"
  [ $((r % 2)) = 0 ] && order="$(echo "$TOOLS" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')"
  for test in set get; do
    for tool in $order; do
      hits=""
      "run_$tool" "$test"
      RPS[$tool,$test]+="$rps "
      CPU[$tool,$test]+="$cpu_us "
      case $tool in ms) name=memaslap ;; kv) name="kvlab" ;; kt) name="kvlab-text" ;; esac
      printf 'round %d  %-3s %-10s %10.0f req/s %8.3f CPU us/req%s\n' "$r" "$test" \
        "$name" "$rps" "$cpu_us" \
        "$([ "$test" = get ] && [ -n "$hits" ] && echo "  (hits/s $hits)")"
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
# table BASE OTHER HEADER: the medians of tool OTHER against tool BASE, per test (the
# per-round figures are space-separated lists, split on purpose).
# shellcheck disable=SC2086
# table BASE OTHER HEADER ID WHAT: also writes each row as a record, id memcached.ID.TEST.
table() {
  printf '%s\n|---|---|---|---|---|---|---|---|\n' "$3"
  for test in set get; do
    a_r="$(median ${RPS[$1,$test]})"; b_r="$(median ${RPS[$2,$test]})"
    a_c="$(median ${CPU[$1,$test]})"; b_c="$(median ${CPU[$2,$test]})"
    # Each round's OTHER / BASE.
    ratios="$(paste -d' ' <(printf '%s\n' ${RPS[$2,$test]}) <(printf '%s\n' ${RPS[$1,$test]}) \
      | awk '{ printf "%.4f ", $1 / $2 }')"
    printf '| %s | %.0f | %.0f | %.2f | %.3f | %.3f | %.2f | %s |\n' "${test^^}" \
      "$a_r" "$b_r" "$(awk -v a="$b_r" -v b="$a_r" 'BEGIN { print a / b }')" \
      "$a_c" "$b_c" "$(awk -v a="$b_c" -v b="$a_c" 'BEGIN { print a / b }')" \
      "$(ratio_interval $ratios)"
    figure_record id="memcached.$4.$test" what="$5, ${test^^}" unit=req/s kvlab="$b_r" reference="$a_r" \
      reference_name="$([ "$1" = ms ] && echo "$MEMASLAP" || echo "kvlab, text protocol")" ratios="$ratios" \
      detail="$(awk -v a="$b_r" -v b="$a_r" -v c="$b_c" -v d="$a_c" 'BEGIN { printf "%.0f vs %.0f req/s (medians; the ratio is the same-round median); CPU per request %.2f", a, b, c / d }')" \
      section="performance-log.md#$([ "$PROTOCOL" = binary ] \
        && echo the-binary-protocol-beside-memaslaps-and-kvlabs-text-protocol || echo memcached-beside-memaslap)"
  done
}
table ms kv '| test | memaslap req/s | kvlab req/s | ratio | memaslap CPU us/req | kvlab CPU us/req | ratio | 95 % interval of the same-round median |' \
  "$PROTOCOL" "memcached beside memaslap, $PROTOCOL protocol, 50 connections"
echo "(medians of $ROUNDS rounds; ratio = kvlab / memaslap; $PROTOCOL protocol)"
if [ "$PROTOCOL" = binary ]; then
  echo
  table kt kv '| test | kvlab text req/s | kvlab binary req/s | binary / text | text CPU us/req | binary CPU us/req | binary / text | 95 % interval of the same-round median |' \
    binary-vs-text "memcached, kvlab's binary protocol beside its text protocol"
  echo "(medians of $ROUNDS rounds, kvlab's two protocols alternated in each round)"
fi

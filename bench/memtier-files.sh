#!/usr/bin/env bash
# memtier_benchmark's result files beside kvlab memtier's, for every kind of request
# memtier sends: `--client-stats` (per-client CSV) and `--hdr-file-prefix` (HDR
# percentile text and `.hgrm` histogram log). For each kind both tools run with the same
# flags against the same spawned server (redis-server or memcached), each in a
# directory of its own with the same relative prefixes, and the script compares the
# *structure* of what they wrote:
#
# - the names of the files written;
# - each file line by line, with every number replaced by its shape (`N`, `N.dddddd`,
#   `P8:N.ddd` for a number padded to 8 characters) and runs of lines of the same shape
#   folded into one — so section titles, column names and their order, units (decimals),
#   separators, trailing commas and which sections exist must be equal, while the
#   figures and the number of per-second rows or percentile steps may differ;
# - the `Writing …` lines on stderr, in order.
#
# The HDR percentile text (`.txt`) is compared with every number masked (kvlab's
# histograms print 3 decimals and `SubBuckets = 2048` where memtier's print 2 and 256:
# docs/memtier.md, HDR histogram files), and the base64 histogram of an `.hgrm` as
# `HISTF…`.
#
# Kinds left out, with why (docs/memtier.md): `--multi-key-get` over Redis (memtier
# 2.3.0 aborts), two `--command`s of the same name (memtier writes a column group per
# command and one HDR file pair twice; kvlab merges them, as its table does).
#
# Usage: MEMTIER=path/to/memtier_benchmark KVLAB=path/to/kvlab bench/memtier-files.sh
# Prints a diff per difference and exits 1 when there is one, 0 when every kind
# matches. KEEP=1 keeps the files (the script prints where).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
: "${MEMTIER:?set MEMTIER to a memtier_benchmark binary (built from its 2.3.0 tag)}"
[ -x "$MEMTIER" ] || { echo "not an executable: $MEMTIER" >&2; exit 2; }
use_kvlab
for tool in redis-server redis-cli memcached perl; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 2; }
done

work="$(mktemp -d)"
REDIS_PID=""
MC_PID=""
cleanup() {
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  [ -n "$MC_PID" ] && kill "$MC_PID" 2>/dev/null && wait "$MC_PID" 2>/dev/null
  if [ -n "${KEEP:-}" ]; then echo "files kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

redis_port="$(free_port)"
start_redis "$redis_port" "$work" "$work/redis.log"
mc_port="$(free_port "$redis_port")"
mc_user=()
[ "$(id -u)" = 0 ] && mc_user=(-u nobody)
memcached "${mc_user[@]}" -l 127.0.0.1 -p "$mc_port" -U 0 &
MC_PID=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$mc_port") 2>/dev/null && break
  sleep 0.05
done

cat >"$work/import.csv" <<'EOF'
dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data
0, 0, 0, 7, 0, 0, 0, 4, "key1", "value"
0, 0, 0, 8, 0, 0, 0, 4, "key2", "value2"
0, 0, 0, 9, 0, 0, 0, 4, "key3", "value33"
EOF

redis=(-s 127.0.0.1 -p "$redis_port")
mc=(-s 127.0.0.1 -p "$mc_port")
# name | server | flags (one word each, as the shell splits them)
kinds=(
  "setget|redis|-t 2 -c 2 -n 200 --ratio=1:3"
  "wait|redis|-t 1 -c 2 -n 200 --ratio=1:1 --wait-ratio=1:1"
  "multi-key-get|mc|-P memcache_text -t 1 -c 2 -n 200 --ratio=1:8 --multi-key-get=4 --key-maximum=100"
  "command|redis|-t 1 -c 2 -n 200 --command=set@__key__@__data__"
  "commands|redis|-t 1 -c 2 -n 200 --command=set@__key__@__data__ --command-ratio=2 --command-key-pattern=S --command=get@__key__ --command-ratio=3 --command=hset@h:__key__@f@__data__"
  "command-unsent|redis|-t 1 -c 1 -n 1 --command=set@__key__@__data__ --command=get@__key__"
  "memcache_text|mc|-P memcache_text -t 1 -c 2 -n 200 --ratio=1:1"
  "memcache_binary|mc|-P memcache_binary -t 1 -c 2 -n 200 --ratio=1:1"
  "data-import|redis|-t 1 -c 2 -n 200 --ratio=1:1 --data-import=$work/import.csv"
  "run-count|redis|-t 1 -c 2 -n 200 --ratio=1:1 -x 2"
  "print-all-runs|redis|-t 1 -c 2 -n 200 --ratio=1:1 -x 2 --print-all-runs"
)

# The shape of a file: numbers replaced by their form, runs of one shape folded.
shape() { # FILE
  case "$1" in
    *.txt) perl -pe 's/-?\d+(\.\d+)?/N/g; s/ +/ /g; s/^ //' "$1" ;;
    *.hgrm) perl -pe 's/HISTF[A-Za-z0-9+\/=]+/HISTF…/g; s/\d+(\.\d+)?/N/g' "$1" ;;
    *) perl -pe '
      sub form { my ($f) = @_; my $pad = $f =~ /^ +\S/ ? "P" . length($f) . ":" : "";
        (my $t = $f) =~ s/^ +//;
        $t =~ s/^(\d+)(?:\.(\d+))?$/"N" . (defined $2 ? "." . ("d" x length $2) : "")/e;
        return $pad . $t }
      if (/^[\d., ]+,?$/) { chomp; $_ = join(",", map { form($_) } split(/,/, $_, -1)) . "\n" }' "$1" ;;
  esac | uniq
}

failed=0
for kind in "${kinds[@]}"; do
  IFS='|' read -r name server flags <<<"$kind"
  target=("${redis[@]}")
  [ "$server" = mc ] && target=("${mc[@]}")
  read -ra args <<<"$flags"
  args=("${args[@]//@/ }")
  common=("${target[@]}" "${args[@]}" --hide-histogram --client-stats=cs --hdr-file-prefix=hdr)
  for tool in memtier kvlab; do
    dir="$work/$name/$tool"
    mkdir -p "$dir"
    if [ "$tool" = memtier ]; then
      (cd "$dir" && "$MEMTIER" "${common[@]}" >stdout 2>stderr) || true
    else
      (cd "$dir" && "$KVLAB" memtier "${common[@]}" >stdout 2>stderr) || true
    fi
    tr '\r' '\n' <"$dir/stderr" | grep -E '^(Writing|\[RUN [0-9]+\] Writing)' >"$dir/writing" || true
    (cd "$dir" && ls cs-* hdr_* 2>/dev/null || true) >"$dir/names"
  done
  m="$work/$name/memtier"
  k="$work/$name/kvlab"
  differ=0
  if ! diff -u --label "memtier: files" --label "kvlab: files" "$m/names" "$k/names"; then
    differ=1
  fi
  if ! diff -u --label "memtier: stderr" --label "kvlab: stderr" "$m/writing" "$k/writing"; then
    differ=1
  fi
  while read -r f; do
    [ -f "$k/$f" ] || continue
    if ! diff -u --label "memtier: $f" --label "kvlab: $f" <(shape "$m/$f") <(shape "$k/$f"); then
      differ=1
    fi
  done <"$m/names"
  if [ "$differ" = 0 ]; then
    echo "same structure: $name ($(wc -l <"$m/names") files)"
  else
    echo "DIFFERENT: $name (memtier ${flags//@/ })"
    failed=1
  fi
done
exit "$failed"

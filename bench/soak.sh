#!/usr/bin/env bash
# A soak: kvlab runs for a long time against a spawned redis-server and against RocksDB at
# once (YCSB workload A, closed loop, 2 threads each, live metrics on), and must stay
# flat. Every sample interval (default a minute) the script records each kvlab process's
# resident memory, open file descriptors and threads from /proc, and scrapes its
# `--metrics` endpoint for the last interval's throughput and read p99. Then a
# `kvlab memtier` run holds 10 000 connections (2 threads × 5 000) to a redis-server.
#
#   bench/soak.sh                       # 30 minutes
#   SOAK_MINUTES=5 bench/soak.sh        # shorter
#
# Pass (exit 0) when, for each of the two runs:
#   - RSS and open descriptors stay within 5 % of their value after the first two
#     minutes (the median of the first three samples at or after 120 s): the Theil–Sen
#     line through every sample from then on moves by at most 5 % of it over the run
#     (descriptors: or by at most one). A line, not single samples: RocksDB opens and
#     closes table files as compactions run and its memtables fill and flush, so one
#     sample swings by a third (16 to 23 descriptors, ±10 % RSS within a minute,
#     measured here over 30 minutes) with nothing leaking, while a leak is a slope. The
#     largest single-sample deviation is printed beside it;
#   - throughput does not drift: over the run's timeline (`timeline.csv`, one row per
#     sample interval) the Mann–Kendall trend test is not significant at p < 0.01, or the
#     Theil–Sen line moves by at most 5 % of the median — kvlab's own steady-state rule
#     (docs/statistics.md), written out below in Python;
#   - the run itself succeeded (exit 0) and the metrics endpoint answered every scrape
#     once it was serving;
# and the memtier run with 10 000 connections succeeded with every connection made.
# Fails (exit 1) naming what moved.
#
# Environment:
#   SOAK_MINUTES    length of each run (default 30)
#   SOAK_SAMPLE_S   sample interval in seconds, also the runs' --interval (default 60)
#   MEMTIER_SECONDS length of the 10 000-connection memtier run (default 60; 0 skips it)
#   KVLAB           the kvlab binary (default: this checkout's release build, built now)
#   OUT             where the samples and results go (default: a new temporary directory,
#                   kept and printed)
#   SOAK_EVALUATE   a soak's OUT directory: judge its samples again, run nothing
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

MINUTES=${SOAK_MINUTES:-30}
SAMPLE_S=${SOAK_SAMPLE_S:-60}
MEMTIER_SECONDS=${MEMTIER_SECONDS:-60}
status=0
if [ -n "${SOAK_EVALUATE:-}" ]; then
  OUT=$SOAK_EVALUATE
else
use_kvlab
OUT=${OUT:-$(mktemp -d /tmp/kvlab-soak.XXXXXX)}
mkdir -p "$OUT"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
echo "soak: ${MINUTES} min, a sample every ${SAMPLE_S} s, into $OUT ($("$KVLAB" --version))" >&2

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${REDIS_PID:-}" ] && kill "$REDIS_PID" 2>/dev/null || true
}
trap cleanup EXIT

common=(-P workloads/ycsb/workloada -p recordcount=100000 --threads 2
  --monitor off --progress never --interval "${SAMPLE_S}s")

# RocksDB is loaded first, by its own process; the spawned redis-server is loaded by the
# run itself (before its measured part).
"$KVLAB" load "${common[@]}" --db rocksdb --path "$OUT/rocksdb-db" --out "$OUT/rocksdb-load" \
  >"$OUT/rocksdb-load.txt" 2>&1

# Each run's metrics endpoint takes a free port when it starts serving (after the spawned
# server's load: a port picked here could be taken by the load's own connections by then)
# and says which on stderr.
declare -A port pid
start_leg() { # NAME ARGS...
  local name=$1
  shift
  port[$name]=""
  "$KVLAB" run "${common[@]}" "$@" --duration "${MINUTES}m" \
    --metrics 127.0.0.1:0 --out "$OUT/$name" >"$OUT/$name.txt" 2>&1 &
  pid[$name]=$!
  pids+=("${pid[$name]}")
  echo "time_s,rss_kb,fds,threads,scrape_ok,interval_ops_per_s,read_p99_us" >"$OUT/$name.samples.csv"
}
start_leg redis --db redis --spawn ""
start_leg rocksdb --db rocksdb --path "$OUT/rocksdb-db"

# The value of one sample line of the metrics text: `NAME{LABELS} VALUE`.
metric() { # TEXT NAME-WITH-LABELS
  printf '%s\n' "$1" | awk -v n="$2" '$1 == n { print $2; exit }'
}

sample() { # NAME ELAPSED
  local name=$1 at=$2 p=${pid[$1]} text="" ok=1 rss fds threads
  [ -d "/proc/$p" ] || return 0
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status")
  threads=$(awk '/^Threads:/ { print $2 }' "/proc/$p/status")
  fds=$(find "/proc/$p/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
  if [ -z "${port[$name]}" ]; then
    port[$name]=$(sed -n 's|.*live metrics at http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$OUT/$name.txt")
  fi
  if [ -z "${port[$name]}" ]; then
    ok="" # not serving yet (a spawned server still loading)
  else
    text=$(curl -sf --max-time 5 "http://127.0.0.1:${port[$name]}/metrics") || ok=0
  fi
  local ops p99
  ops=$(metric "$text" kvlab_interval_operations_per_second)
  p99=$(metric "$text" 'kvlab_interval_latency_seconds{op="read",quantile="0.99"}')
  [ -n "$p99" ] && p99=$(awk -v s="$p99" 'BEGIN { printf "%.1f", s * 1e6 }')
  echo "$at,$rss,$fds,$threads,$ok,$ops,$p99" >>"$OUT/$name.samples.csv"
}

start=$(date +%s)
while kill -0 "${pid[redis]}" 2>/dev/null || kill -0 "${pid[rocksdb]}" 2>/dev/null; do
  sleep "$SAMPLE_S" &
  wait $! || true
  now=$(($(date +%s) - start))
  for leg in redis rocksdb; do sample "$leg" "$now"; done
done
status=0
for leg in redis rocksdb; do
  if ! wait "${pid[$leg]}"; then
    echo "soak: the $leg run failed (see $OUT/$leg.txt)" >&2
    status=1
  fi
done

# 10 000 connections: 2 threads × 5 000 clients against one redis-server.
if [ "$MEMTIER_SECONDS" -gt 0 ]; then
  mport=$(free_port)
  mkdir -p "$OUT/memtier-redis"
  redis-server --port "$mport" --bind 127.0.0.1 --save "" --appendonly no \
    --maxclients 20000 --dir "$OUT/memtier-redis" --logfile "$OUT/memtier-redis/log" &
  REDIS_PID=$!
  for _ in $(seq 1 100); do
    [ "$(redis-cli -p "$mport" ping 2>/dev/null)" = PONG ] && break
    sleep 0.05
  done
  if /usr/bin/time -v -o "$OUT/memtier.time" "$KVLAB" memtier -s 127.0.0.1 -p "$mport" \
    -t 2 -c 5000 --test-time="$MEMTIER_SECONDS" --hide-histogram \
    >"$OUT/memtier.txt" 2>"$OUT/memtier.err"; then
    echo "memtier,ok" >"$OUT/memtier.status"
  else
    echo "soak: the 10 000-connection memtier run failed (see $OUT/memtier.err)" >&2
    echo "memtier,failed" >"$OUT/memtier.status"
    status=1
  fi
  kill "$REDIS_PID" 2>/dev/null || true
  wait "$REDIS_PID" 2>/dev/null || true
  REDIS_PID=""
fi

fi # SOAK_EVALUATE

python3 - "$OUT" "$SAMPLE_S" <<'PY' || status=1
import csv, math, os, re, sys

out, sample_s = sys.argv[1], float(sys.argv[2])
failed = []

def mann_kendall(x):
    """Kendall's tau against time, two-sided p (normal approximation with the tie
    correction, as SciPy's kendalltau), and the Theil–Sen slope."""
    n = len(x)
    s = sum((x[j] > x[i]) - (x[j] < x[i]) for i in range(n) for j in range(i + 1, n))
    ties = {}
    for v in x:
        ties[v] = ties.get(v, 0) + 1
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties.values())) / 18
    if var <= 0:
        return 1.0, 0.0
    z = s / math.sqrt(var)
    p = math.erfc(abs(z) / math.sqrt(2))
    slopes = sorted((x[j] - x[i]) / (j - i) for i in range(n) for j in range(i + 1, n))
    m = len(slopes)
    slope = slopes[m // 2] if m % 2 else (slopes[m // 2 - 1] + slopes[m // 2]) / 2
    return p, slope

print(f"{'run':<9} {'samples':>7} {'RSS MB 2 min → end (worst)':>30} {'fds 2 min → end (worst)':>26} "
      f"{'threads':>8} {'ops/s median':>12} {'drift %':>8} {'p':>7} {'p99 µs median':>13}")
for leg in ("redis", "rocksdb"):
    rows = list(csv.DictReader(open(os.path.join(out, f"{leg}.samples.csv"))))
    if not rows:
        failed.append(f"{leg}: no samples")
        continue
    after = [r for r in rows if float(r["time_s"]) >= 120]
    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    def dev(col):
        """(value at 2 min, the line's end, the line's move over the run in % of the
        value at 2 min, the largest single sample's distance from it in %)"""
        series = [float(r[col]) for r in after]
        b = median(series[:3])
        _, slope = mann_kendall(series)
        moved = slope * (len(series) - 1)
        worst = max(abs(v - b) / b for v in series) * 100
        return b, b + moved, moved / b * 100, worst
    if len(after) < 4:
        failed.append(f"{leg}: fewer than 4 samples after the second minute: nothing to compare")
        rss = fds = (float("nan"),) * 4
    else:
        rss, fds = dev("rss_kb"), dev("fds")
        if abs(rss[2]) > 5:
            failed.append(f"{leg}: RSS moved {rss[2]:+.1f} % from {rss[0] / 1024:.0f} MB")
        # Descriptors are whole: 5 % of 17 is less than one, so one more or fewer passes.
        if abs(fds[1] - fds[0]) > max(0.05 * fds[0], 1):
            failed.append(f"{leg}: open descriptors moved {fds[2]:+.1f} % from {fds[0]:.0f}")
    if any(r["scrape_ok"] == "0" for r in rows) or not any(r["scrape_ok"] for r in rows):
        failed.append(f"{leg}: the metrics endpoint did not answer every scrape")
    timeline = list(csv.DictReader(open(os.path.join(out, leg, "timeline.csv"))))
    # Full intervals only (the last one may be cut short by the run's end).
    tput = [float(r["throughput_ops_per_sec"]) for r in timeline
            if abs(float(r["interval_s"]) - sample_s) < 0.01 * sample_s]
    med = sorted(tput)[len(tput) // 2] if tput else float("nan")
    p, slope = mann_kendall(tput) if len(tput) >= 3 else (1.0, 0.0)
    drift = slope * (len(tput) - 1) / med * 100 if tput and med else 0.0
    if p < 0.01 and abs(drift) > 5:
        failed.append(f"{leg}: throughput drifts {drift:+.1f} % over the run (Mann–Kendall p = {p:.2g})")
    p99s = sorted(float(r["read_p99_us"]) for r in rows if r["read_p99_us"])
    p99 = p99s[len(p99s) // 2] if p99s else float("nan")
    threads = sorted({r["threads"] for r in rows})
    print(f"{leg:<9} {len(rows):>7} {rss[0] / 1024:>9.1f} → {rss[1] / 1024:>6.1f} "
          f"{rss[2]:>+5.1f} % ({rss[3]:>4.1f} %) {fds[0]:>6.0f} → {fds[1]:>4.0f} {fds[2]:>+5.1f} % "
          f"({fds[3]:>4.1f} %) {'/'.join(threads):>8} {med:>12.0f} {drift:>+8.1f} {p:>7.2g} {p99:>13.1f}")

status = os.path.join(out, "memtier.status")
if os.path.exists(status):
    text = open(os.path.join(out, "memtier.txt")).read()
    m = re.search(r"^Totals\s+([\d.]+)", text, re.M)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(os.path.join(out, "memtier.time")).read())
    print(f"memtier 2 × 5000 connections: {open(status).read().strip().split(',')[1]}, "
          f"{float(m.group(1)) if m else float('nan'):.0f} ops/s, "
          f"max RSS {int(rss.group(1)) / 1024 if rss else float('nan'):.0f} MB")
    if not m:
        failed.append("memtier: no Totals line")
for f in failed:
    print("FAIL:", f)
print("soak:", "FAILED" if failed else "passed", f"(samples and results in {out})")
sys.exit(1 if failed else 0)
PY
exit "$status"

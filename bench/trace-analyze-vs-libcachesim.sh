#!/usr/bin/env bash
# `kvlab trace analyze` beside libCacheSim 0.3.5's trace analyzer (the `libcachesim` PyPI
# package, `TraceAnalyzer` with its default options: request rate, access pattern, size,
# reuse, popularity), on the same oracleGeneral files, in one go, rounds alternating
# which tool goes first.
#
# Files: libCacheSim's cloudPhysicsIO sample (113,872 requests), the AdaptSize trace
# (66,987), and — unless BIG=0 — cache2k's orm-busy trace (5,000,000 requests over 76,349
# keys) and Caffeine's scarab trace (1,245,184 requests over 258,368 keys) written as
# oracleGeneral (time = request index / 1000, size 4096) into a temporary directory, so
# both tools read the very same bytes.
#
# Timing: kvlab is the whole process (wall clock, from /usr/bin/time); libCacheSim is
# only its `run()` call, timed inside Python after the import and the reader's creation,
# so the interpreter's start-up is not counted against it. Peak RSS is from
# /usr/bin/time for both (libCacheSim's includes the Python interpreter, ~30 MB).
# Prints every round, then medians and the ratio libCacheSim time / kvlab time (kvlab
# is at least as fast when it is >= 1), and checks that kvlab's summary.json agrees with
# libCacheSim's `stat` (requests, objects, one-hit objects, X-hit, top frequencies,
# Zipf alpha and R² to 4 decimals).
#
# The libCacheSim figures pinned in crates/trace/tests/analyze.rs come from the same
# Python snippet as below (`lcs_run`).
#
# Usage: bench/trace-analyze-vs-libcachesim.sh [ROUNDS] (default 5)
# KVLAB: the kvlab binary (default $HOME/.cache/kvlab-target/release/kvlab).
# LCS_PY: a Python with libcachesim==0.3.5 (default: a venv made in /tmp/lcs-bench).
# LCS_BIN: libCacheSim's own C `traceAnalyzer` binary, built from its source by the user
# (never by this script): when set, each round also runs `traceAnalyzer FILE
# oracleGeneralBin --common` (the same five analyses as the Python default), timed as a
# whole process like kvlab, and its median and ratio are printed too.
# Each ratio line ends with the median of the same-round ratios and its 95 % interval
# (bench/lib.sh's ratio_interval); each comparison is written as a record to
# bench/results/ (FIGURES=0: none).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_start "$*" KVLAB BIG LCS_PY LCS_BIN
ROUNDS="${1:-5}"
KVLAB="${KVLAB:-$HOME/.cache/kvlab-target/release/kvlab}"
BIG="${BIG:-1}"
DATA=../shared/data/traces
[ -d "$DATA" ] || DATA=/work/shared/data/traces
DATA="$(cd "$DATA" && pwd)"
command -v /usr/bin/time >/dev/null || { echo "missing /usr/bin/time (apt-get install time)" >&2; exit 1; }
[ -x "$KVLAB" ] || { echo "missing $KVLAB (cargo build --release --bin kvlab)" >&2; exit 1; }
if ! "$KVLAB" trace analyze --help >/dev/null 2>&1; then
  echo "$KVLAB has no 'trace analyze' command" >&2
  exit 1
fi
if [ -z "${LCS_PY:-}" ]; then
  LCS_PY=/tmp/lcs-bench/bin/python
  if ! "$LCS_PY" -c 'import libcachesim' 2>/dev/null; then
    python3 -m venv /tmp/lcs-bench
    /tmp/lcs-bench/bin/pip install --quiet libcachesim==0.3.5
  fi
fi
"$LCS_PY" -c 'import importlib.metadata as m; v = m.version("libcachesim"); assert v == "0.3.5", v'

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

files=("$DATA/libcachesim/cloudPhysicsIO.oracleGeneral.bin" "$DATA/derived/adapt_size_request.oracleGeneral.bin")
if [ "$BIG" = 1 ]; then
  # Big-endian int32 (cache2k) or int64 (scarab) keys -> oracleGeneral records.
  to_oracle() {
    "$LCS_PY" - "$1" "$2" "$3" <<'PY'
import lzma, struct, sys
src, width, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = lzma.open(src).read()
n = len(data) // width
keys = struct.unpack(">%d%s" % (n, "i" if width == 4 else "q"), data[: width * n])
rec = struct.Struct("<IQIq")
with open(dst, "wb") as f:
    f.write(b"".join(rec.pack(i // 1000, k & (2**64 - 1), 4096, -1) for i, k in enumerate(keys)))
PY
  }
  to_oracle "$DATA/caffeine/cache2k/orm-busy.trace.xz" 4 "$work/orm-busy.oracleGeneral.bin"
  to_oracle "$DATA/caffeine/scarab/scarab-recs.trace.xz" 8 "$work/scarab.oracleGeneral.bin"
  files+=("$work/orm-busy.oracleGeneral.bin" "$work/scarab.oracleGeneral.bin")
fi

# libCacheSim's analyzer on $1, output base $2 (its `stat` goes to the current
# directory); prints the seconds run() took.
lcs_run() {
  (cd "$(dirname "$2")" && "$LCS_PY" - "$1" "$2" <<'PY'
import sys, time
import libcachesim as lcs
r = lcs.TraceReader(sys.argv[1], lcs.TraceType.ORACLE_GENERAL_TRACE)
a = lcs.TraceAnalyzer(r, sys.argv[2])
t = time.perf_counter()
a.run()
print(time.perf_counter() - t)
PY
  )
}


printf '%-34s %5s %10s %10s %12s %12s\n' file round kvlab_s lcs_s kvlab_rss_kb lcs_rss_kb
for f in "${files[@]}"; do
  name="$(basename "$f")"
  : >"$work/kv_s"; : >"$work/lcs_s"; : >"$work/kv_rss"; : >"$work/lcs_rss"
  : >"$work/c_s"; : >"$work/c_rss"
  for r in $(seq 1 "$ROUNDS"); do
    order="kv lcs"; [ $((r % 2)) = 0 ] && order="lcs kv"
    if [ -n "${LCS_BIN:-}" ]; then
      mkdir -p "$work/c" && (cd "$work/c" && /usr/bin/time -f '%e %M' -o "$work/time" \
        "$LCS_BIN" "$f" oracleGeneralBin --common >/dev/null 2>&1)
      read -r secs rss <"$work/time"
      echo "$secs" >>"$work/c_s"; echo "$rss" >>"$work/c_rss"
    fi
    for tool in $order; do
      rm -rf "$work/out" && mkdir -p "$work/out"
      if [ "$tool" = kv ]; then
        /usr/bin/time -f '%e %M' -o "$work/time" "$KVLAB" trace analyze "$f" --out "$work/out/kv" >/dev/null
        read -r secs rss <"$work/time"
        echo "$secs" >>"$work/kv_s"; echo "$rss" >>"$work/kv_rss"
        cp "$work/out/kv/summary.json" "$work/kv_summary.json"
      else
        secs="$(/usr/bin/time -f '%M' -o "$work/time" bash -c "$(declare -f lcs_run); LCS_PY='$LCS_PY' lcs_run '$f' '$work/out/lcs'" 2>/dev/null | tail -1)"
        rss="$(cat "$work/time")"
        echo "$secs" >>"$work/lcs_s"; echo "$rss" >>"$work/lcs_rss"
        cp "$work/out/stat" "$work/lcs_stat"
      fi
    done
    printf '%-34s %5s %10s %10.3f %12s %12s\n' "$name" "$r" "$(tail -1 "$work/kv_s")" \
      "$(tail -1 "$work/lcs_s")" "$(tail -1 "$work/kv_rss")" "$(tail -1 "$work/lcs_rss")"
  done
  kv=$(median - <"$work/kv_s"); lc=$(median - <"$work/lcs_s")
  short="${name%%.oracleGeneral.bin}"
  # Each round's reference time / kvlab time.
  same_round() { paste -d' ' "$1" "$work/kv_s" | awk '{ printf "%.4f ", ($2 > 0) ? $1 / $2 : 0 }'; }
  ratios=$(same_round "$work/lcs_s")
  # shellcheck disable=SC2086
  printf '%-34s %5s %10s %10.3f %12s %12s  ratio lcs/kvlab %.2f; same-round median %.2f, 95 %% interval %s\n' "$name" median "$kv" "$lc" \
    "$(median - <"$work/kv_rss")" "$(median - <"$work/lcs_rss")" "$(echo "$lc $kv" | awk '{print ($2 > 0) ? $1 / $2 : 0}')" \
    "$(median $ratios)" "$(ratio_interval $ratios)"
  figure_record id="trace-analyze.$short.python" \
    what="trace analysis ($short) beside libCacheSim 0.3.5's TraceAnalyzer (Python package): speed" \
    unit=s kvlab="$kv" reference="$lc" reference_name="libcachesim 0.3.5 TraceAnalyzer.run()" ratios="$ratios" \
    detail="$(printf 'libCacheSim %.3f s / kvlab %s s (medians)' "$lc" "$kv")" \
    section="performance-log.md#thinlto-and-the-hottest-ranks-names-2026-11-27"
  if [ -n "${LCS_BIN:-}" ]; then
    c=$(median - <"$work/c_s")
    ratios=$(same_round "$work/c_s")
    # shellcheck disable=SC2086
    printf '%-34s %5s traceAnalyzer (C) %s s, RSS %s KB  ratio traceAnalyzer/kvlab %.2f; same-round median %.2f, 95 %% interval %s\n' \
      "$name" median "$c" "$(median - <"$work/c_rss")" \
      "$(echo "$c $kv" | awk '{print ($2 > 0) ? $1 / $2 : 0}')" "$(median $ratios)" "$(ratio_interval $ratios)"
    figure_record id="trace-analyze.$short.c" \
      what="trace analysis ($short) beside libCacheSim's C traceAnalyzer --common: speed" \
      unit=s kvlab="$kv" reference="$c" reference_name="libCacheSim traceAnalyzer (C)" ratios="$ratios" \
      detail="$(printf 'traceAnalyzer %s s / kvlab %s s (medians, whole processes)' "$c" "$kv")" \
      section="performance-log.md#thinlto-and-the-hottest-ranks-names-2026-11-27"
  fi
  # The figures both print.
  "$LCS_PY" - "$work/kv_summary.json" "$work/lcs_stat" <<'PY'
import json, re, sys
kv = json.load(open(sys.argv[1]))
st = open(sys.argv[2]).read()
n, o = map(int, re.search(r"number of requests: (\d+), number of objects: (\d+)", st).groups())
xhit = [int(v) for v in re.findall(r"(\d+)\(", st.split("X-hit")[1].split("\n")[0])]
top = [int(v) for v in re.findall(r"(\d+)\(", st.split("most popular obj:")[1].split("\n")[0])]
alpha, r2 = re.search(r"Zipf alpha=([\d.]+), R2=([\d.]+)", st).groups()
got = (kv["requests"], kv["objects"], kv["x_hit"], kv["top_frequencies"],
       "%.4f" % kv["zipf_alpha"], "%.4f" % kv["zipf_r2"])
want = (n, o, xhit, top, alpha, r2)
print("  figures", "agree" if got == want else "DIFFER: kvlab %s libCacheSim %s" % (got, want))
PY
done

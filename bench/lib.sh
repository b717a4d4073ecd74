# Helpers shared by the benchmark and check scripts (sourced from the repository root:
# `. bench/lib.sh`).

# The median of the numbers given as arguments, or of those read one per line from stdin
# when the only argument is `-`.
median() {
  if [ "$*" = - ]; then cat; else printf '%s\n' "$@"; fi | sort -g |
    awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# Prints a free loopback port (nothing answers a connection to it), none of those given
# as arguments; fails after 50 tries.
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    case " $* " in *" $p "*) continue ;; esac
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# Starts a redis-server without persistence on 127.0.0.1:PORT, its files in DIR and its
# log in LOG, and waits until it answers PING. Its PID is left in REDIS_PID; one that
# does not answer within 5 s is stopped again (REDIS_PID empty) and the call fails.
start_redis() { # PORT DIR LOG
  redis-server --port "$1" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$2" --logfile "$3" &
  REDIS_PID=$!
  for _ in $(seq 1 100); do
    [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.05
  done
  echo "redis-server on port $1 did not start (log: $3)" >&2
  kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  REDIS_PID=""
  return 1
}

# Sets KVLAB to the kvlab binary to measure: $KVLAB when given (an older build, say),
# else this checkout's release build, built now (in CARGO_TARGET_DIR, by default
# ~/.cache/kvlab-target). Fails unless it is an executable.
use_kvlab() {
  if [ -z "${KVLAB:-}" ]; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
    cargo build --release --locked --quiet --bin kvlab
    KVLAB="$CARGO_TARGET_DIR/release/kvlab"
  fi
  [ -x "$KVLAB" ] || { echo "not an executable: $KVLAB" >&2; return 1; }
}

# --- Ratios with their intervals, and the records docs/performance.md's table is made of
# (bench/figures.py does the arithmetic; bench/table.py writes the table).

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Remembers the command that is running — the environment variables named (those set)
# and the script with its arguments ARGS — and the load average now, for figure_record.
# Call it before anything sets those variables to defaults.
bench_start() { # ARGS [VAR...]
  local args="$1" v env=""
  shift
  for v in "$@"; do
    if [ -n "${!v:-}" ]; then env+="$v=${!v} "; fi
  done
  BENCH_COMMAND="${env}bench/$(basename "$0")${args:+ $args}"
  BENCH_LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg)"
  export BENCH_COMMAND BENCH_LOAD_START
}

# The 95 % interval of the median of the same-round ratios given (percentile bootstrap,
# 10 000 resamples, fixed seed): `[LOW, HIGH] (N rounds)`, or `n/a (N rounds)` with
# fewer than 3. `--digits N` first sets the decimals (default 2).
ratio_interval() { # [--digits N] RATIO...
  python3 "$BENCH_DIR/figures.py" interval "$@"
}

# Writes one record of a comparison to bench/results/ (FIGURES_DIR elsewhere; FIGURES=0
# writes none) and says where on stderr. Arguments are KEY=VALUE: id (stable, e.g.
# rocksdb.load), what, unit, kvlab and reference (their figures, medians), reference_name,
# ratios (the same-round ratios kvlab / reference, space-separated), section (a link,
# performance-log.md#…), detail (free text shown beside the ratio), digits (decimals, 2).
figure_record() { # KEY=VALUE...
  [ "${FIGURES:-1}" = 0 ] && return 0
  local path
  path="$(python3 "$BENCH_DIR/figures.py" add "$@")" && echo "record: $path" >&2
}

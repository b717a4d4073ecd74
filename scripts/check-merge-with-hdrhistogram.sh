#!/usr/bin/env bash
# `kvlab merge` checked from outside with HdrHistogram's own Java implementation: two
# shards of one run against a local redis-server, merged; then HdrHistogram 2.2.2
# (Maven Central) reads the merged latency.hlog, and the two shards' logs added
# together, and both must give the merged result.json's count, p50, p99, p99.9 and max
# for READ and UPDATE, to the nanosecond.
#
# Usage: scripts/check-merge-with-hdrhistogram.sh [OPERATIONS] (default 200000)
# Needs redis-server, java, javac and mvn. KVLAB=/path/to/kvlab uses that binary instead
# of building this checkout's. Exit code 0 when every figure agrees, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
OPS="${1:-200000}"
for tool in redis-server redis-cli java javac mvn python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
use_kvlab

work="$(mktemp -d)"
REDIS_PID=""
cleanup() {
  [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# HdrHistogram's jar, and a reader that adds up one tag's interval histograms.
jar_dir="$HOME/.cache/kvlab-hdrhistogram"
jar="$jar_dir/HdrHistogram-2.2.2.jar"
if [ ! -f "$jar" ]; then
  mvn -B -q -Dstyle.color=never dependency:copy -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2 \
    -DoutputDirectory="$jar_dir" >/dev/null
fi
cat >"$work/LogPercentiles.java" <<'JAVA'
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import java.util.Objects;

/** Adds up the interval histograms tagged args[0] in the logs args[1..]; prints count,
 *  p50, p99, p99.9 and max in the log's unit (nanoseconds). */
public class LogPercentiles {
    public static void main(String[] args) throws Exception {
        Histogram sum = new Histogram(3);
        for (int i = 1; i < args.length; i++) {
            HistogramLogReader reader = new HistogramLogReader(args[i]);
            EncodableHistogram h;
            while ((h = reader.nextIntervalHistogram()) != null) {
                if (Objects.equals(h.getTag(), args[0])) sum.add((Histogram) h);
            }
        }
        System.out.printf("%d %d %d %d %d%n", sum.getTotalCount(), sum.getValueAtPercentile(50.0),
            sum.getValueAtPercentile(99.0), sum.getValueAtPercentile(99.9), sum.getMaxValue());
    }
}
JAVA
javac -cp "$jar" -d "$work" "$work/LogPercentiles.java"
hdr() { java -cp "$jar:$work" LogPercentiles "$@"; }

port="$(free_port)"
start_redis "$port" "$work" "$work/redis.log"

common=(-P workloads/ycsb/workloada -p recordcount=10000 --db redis
  --url "redis://127.0.0.1:$port" --progress never)
"$KVLAB" load "${common[@]}" >/dev/null 2>&1
start="$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)"
runs=()
for i in 0 1; do
  "$KVLAB" run "${common[@]}" -p operationcount="$OPS" --connections 4 --shard "$i/2" \
    --start-at "$start" --out "$work/run-$i" >/dev/null 2>"$work/run-$i.err" &
  runs+=($!)
done
for i in 0 1; do
  wait "${runs[$i]}" || { cat "$work/run-$i.err" >&2; exit 1; }
done
"$KVLAB" merge "$work/run-0" "$work/run-1" --out "$work/merged" >/dev/null 2>&1

status=0
for tag in READ UPDATE; do
  kvlab_figures="$(python3 - "$work/merged/result.json" "$tag" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
op = next(o for o in doc["results"]["ops"] if o["name"] == sys.argv[2])
l = op["latency"]
ns = lambda us: str(round(us * 1000))
print(op["operations"], ns(l["p50_us"]), ns(l["p99_us"]), ns(l["p999_us"]), ns(l["max_us"]))
PY
)"
  merged_log="$(hdr "$tag" "$work/merged/latency.hlog")"
  shard_logs="$(hdr "$tag" "$work/run-0/latency.hlog" "$work/run-1/latency.hlog")"
  echo "$tag (count p50 p99 p99.9 max, ns):"
  echo "  kvlab merge result.json:                  $kvlab_figures"
  echo "  HdrHistogram, the merged latency.hlog:    $merged_log"
  echo "  HdrHistogram, the two shards' logs added: $shard_logs"
  if [ "$kvlab_figures" != "$merged_log" ] || [ "$merged_log" != "$shard_logs" ]; then
    echo "  DIFFERENT" >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "every figure agrees"
exit "$status"

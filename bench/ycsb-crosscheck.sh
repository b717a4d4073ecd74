#!/usr/bin/env bash
# kvlab checked from outside against YCSB 0.17.0: for every workload file in
# workloads/ycsb/, YCSB loads and runs against one redis-server and kvlab
# (`--db redis`, hash model) against another, and bench/ycsb-crosscheck.py compares:
#
# 1. load: the keys in redis (names), each key's field names and value lengths, and the
#    `_indices` sorted set (members and scores: YCSB's binding scores a member by the
#    key's Java String.hashCode);
# 2. key sets of insertorder=ordered, zeropadding and insertstart/insertcount loads,
#    value lengths of uniform and zipfian field lengths, and with dataintegrity=true the
#    values themselves (YCSB's deterministic values);
# 3. run: the commands each tool sent (redis MONITOR): operation mix, key popularity
#    (rank-frequency, which keys are hot, position in the load order, recency of reads
#    for `latest`, no read of a key not inserted yet), scan lengths, records per scan,
#    fields read (HGETALL or HMGET of which fields) and written — two-sample chi-square
#    tests, failing at p < 1e-5; readallfields/writeallfields both ways, every request
#    distribution, zipfian scan lengths;
# 4. the report: every `[SECTION], Name` line YCSB prints is in kvlab's.
#
# Then it runs workload C with deliberately wrong kvlab settings (uniform keys instead of
# zipfian; a Zipfian of theta 0.9 instead of 0.99) and expects the popularity checks to
# FAIL (printed as PASS "wrong setting detected").
#
# Prints a PASS/FAIL line per check and a summary; exits 1 on any FAIL.
#
# YCSB's core jar and its dependencies (HdrHistogram 2.1.4, jackson 1.9.4) and jedis
# 2.9.0 (+ commons-pool2) come from Maven Central once, by `mvn dependency:copy-dependencies`,
# into $KVLAB_YCSB_CACHE (default $HOME/.cache/kvlab-ycsb). YCSB's redis binding is not
# on Maven Central: the script takes it from YCSB's 0.17.0 release tarball on GitHub when
# that is reachable, and otherwise compiles a stand-in binding (below, `RedisBinding`)
# that sends the same commands as the binding's RedisClient.java with the same jedis:
# HMSET of the fields and ZADD _indices hashCode(key) key per insert, HGETALL (all
# fields) or HMGET (named fields) per read, HMSET per update, ZRANGEBYSCORE _indices
# hashCode(start) +inf LIMIT 0 n and a read per key per scan, DEL and ZREM per delete.
#
# Usage: bench/ycsb-crosscheck.sh
# Environment: OPS run-phase operations per workload (default 20000), SCAN_OPS for scan
# workloads (default 3000); WORKLOADS a glob of workload files (default
# workloads/ycsb/*; empty: none), VARIANTS=0 skips the property variants; KVLAB=/path
# to run that binary instead of building this checkout's; KEEP=1 keeps the logs.
# Takes about 5 minutes (YCSB's JVM starts twice per workload).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
OPS="${OPS:-20000}"
SCAN_OPS="${SCAN_OPS:-3000}"
CACHE="${KVLAB_YCSB_CACHE:-$HOME/.cache/kvlab-ycsb}"
for tool in redis-server redis-cli java javac mvn python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
use_kvlab
compare=(python3 bench/ycsb-crosscheck.py)

# --- YCSB, fetched once -------------------------------------------------------------
fetch_ycsb() {
  mkdir -p "$CACHE/pom"
  cat >"$CACHE/pom/pom.xml" <<'EOF'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kvlab</groupId><artifactId>ycsb-crosscheck</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>site.ycsb</groupId><artifactId>core</artifactId><version>0.17.0</version></dependency>
    <dependency><groupId>redis.clients</groupId><artifactId>jedis</artifactId><version>2.9.0</version></dependency>
  </dependencies>
</project>
EOF
  (cd "$CACHE/pom" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$CACHE/lib.tmp") >&2
  mv "$CACHE/lib.tmp" "$CACHE/lib"
}
[ -f "$CACHE/lib/core-0.17.0.jar" ] || fetch_ycsb
BINDING_CLASS=site.ycsb.db.RedisClient
BINDING_JAR="$CACHE/redis-binding/lib/redis-binding-0.17.0.jar"
if [ ! -f "$BINDING_JAR" ] && [ ! -f "$CACHE/standin/kvlabcheck/RedisBinding.class" ]; then
  url=https://github.com/brianfrankcooper/YCSB/releases/download/0.17.0/ycsb-redis-binding-0.17.0.tar.gz
  if curl -fsSL --max-time 60 -o "$CACHE/redis-binding.tar.gz" "$url" 2>/dev/null; then
    mkdir -p "$CACHE/redis-binding"
    tar -xzf "$CACHE/redis-binding.tar.gz" -C "$CACHE/redis-binding" --strip-components=1
  fi
fi
if [ ! -f "$BINDING_JAR" ]; then
  BINDING_CLASS=kvlabcheck.RedisBinding
  BINDING_JAR="$CACHE/standin"
  if [ ! -f "$BINDING_JAR/kvlabcheck/RedisBinding.class" ]; then
    mkdir -p "$CACHE/standin-src/kvlabcheck"
    cat >"$CACHE/standin-src/kvlabcheck/RedisBinding.java" <<'EOF'
package kvlabcheck;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import redis.clients.jedis.Jedis;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/** The commands of YCSB 0.17.0's redis binding, for when its jar cannot be fetched. */
public class RedisBinding extends DB {
  private static final String INDEX = "_indices";
  private Jedis jedis;

  @Override
  public void init() throws DBException {
    jedis = new Jedis(getProperties().getProperty("redis.host", "127.0.0.1"),
        Integer.parseInt(getProperties().getProperty("redis.port", "6379")));
    jedis.connect();
  }

  @Override
  public void cleanup() {
    jedis.close();
  }

  private static double score(String key) {
    return key.hashCode();
  }

  @Override
  public Status read(String table, String key, Set<String> fields,
      Map<String, ByteIterator> result) {
    if (fields == null) {
      for (Map.Entry<String, String> e : jedis.hgetAll(key).entrySet()) {
        result.put(e.getKey(), new StringByteIterator(e.getValue()));
      }
    } else {
      String[] names = fields.toArray(new String[0]);
      List<String> values = jedis.hmget(key, names);
      for (int i = 0; i < names.length; i++) {
        if (values.get(i) != null) {
          result.put(names[i], new StringByteIterator(values.get(i)));
        }
      }
    }
    return result.isEmpty() ? Status.ERROR : Status.OK;
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    if (!"OK".equals(jedis.hmset(key, StringByteIterator.getStringMap(values)))) {
      return Status.ERROR;
    }
    jedis.zadd(INDEX, score(key), key);
    return Status.OK;
  }

  @Override
  public Status delete(String table, String key) {
    return jedis.del(key) == 0 && jedis.zrem(INDEX, key) == 0 ? Status.ERROR : Status.OK;
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    return "OK".equals(jedis.hmset(key, StringByteIterator.getStringMap(values)))
        ? Status.OK : Status.ERROR;
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    for (String key : jedis.zrangeByScore(INDEX, score(startkey), Double.POSITIVE_INFINITY,
        0, recordcount)) {
      HashMap<String, ByteIterator> values = new HashMap<>();
      read(table, key, fields, values);
      result.add(values);
    }
    return Status.OK;
  }
}
EOF
    mkdir -p "$BINDING_JAR"
    javac -nowarn -cp "$CACHE/lib/*" -d "$BINDING_JAR" \
      "$CACHE/standin-src/kvlabcheck/RedisBinding.java"
  fi
fi
ycsb_cp="$CACHE/lib/*:$BINDING_JAR"

# --- two redis servers ---------------------------------------------------------------
work="$(mktemp -d)"
pids=()
monitor_pid=""
cleanup() {
  if [ -n "$monitor_pid" ]; then kill "$monitor_pid" 2>/dev/null || true; fi
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
start_server() { # PORT NAME
  start_redis "$1" "$work" "$work/redis-$2.log"
  pids+=("$REDIS_PID")
}
port_a="$(free_port)" # YCSB's
[ -n "$port_a" ] || exit 1
start_server "$port_a" ycsb
port_b="$(free_port "$port_a")" # kvlab's
[ -n "$port_b" ] || exit 1
start_server "$port_b" kvlab
echo "YCSB 0.17.0 (binding $BINDING_CLASS) on 127.0.0.1:$port_a, kvlab on 127.0.0.1:$port_b," \
  "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')"

# MONITOR answers OK once it is on: commands are recorded from when the log is non-empty.
monitor() { # PORT LOG: records every command the server receives until `unmonitor`
  redis-cli -p "$1" monitor >"$2" &
  monitor_pid=$!
  monitor_port=$1
  monitor_log=$2
  for _ in $(seq 1 100); do [ "$(wc -c <"$2")" -gt 0 ] && break; sleep 0.02; done
}
unmonitor() {
  local marker="crosscheck-end-$RANDOM"
  redis-cli -p "$monitor_port" echo "$marker" >/dev/null
  for _ in $(seq 1 200); do grep -q "$marker" "$monitor_log" && break; sleep 0.05; done
  kill "$monitor_pid" 2>/dev/null || true
  wait "$monitor_pid" 2>/dev/null || true
  monitor_pid=""
}

ycsb() { # PHASE(load|run) FILE LOG REPORT EXTRA...
  local phase=$1 file=$2 log=$3 report=$4
  shift 4
  monitor "$port_a" "$log"
  local flag=-t
  [ "$phase" = load ] && flag=-load
  java -cp "$ycsb_cp" site.ycsb.Client "$flag" -db "$BINDING_CLASS" -P "$file" \
    -p redis.host=127.0.0.1 -p redis.port="$port_a" -threads 1 "$@" \
    >"$report" 2>"$work/ycsb.err" || { cat "$work/ycsb.err" >&2; exit 1; }
  unmonitor
}
kvlab() { # PHASE FILE LOG REPORT EXTRA...
  local phase=$1 file=$2 log=$3 report=$4
  shift 4
  monitor "$port_b" "$log"
  "$KVLAB" "$phase" -P "$file" --db redis --url "redis://127.0.0.1:$port_b" --threads 1 \
    --seed "$((RANDOM * 32768 + RANDOM))" "$@" >"$report" 2>"$work/kvlab.err" \
    || { cat "$work/kvlab.err" >&2; exit 1; }
  unmonitor
}
flush() { redis-cli -p "$port_a" flushall >/dev/null; redis-cli -p "$port_b" flushall >/dev/null; }

results="$work/results"
: >"$results"
say() { tee -a "$results"; }
# One workload through both tools: load, compare the stores, run, compare the commands
# and the reports. NAME FILE [-p overrides for both...] [-- -p overrides for kvlab only]
crosscheck() {
  local name=$1 file=$2 ops
  shift 2
  local both=() only=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; only=("$@"); break; fi
    both+=("$1")
    shift
  done
  ops=$OPS
  grep -Eq '^scanproportion=0*[.]?0*[1-9]' "$file" && ops=$SCAN_OPS
  echo "== $name ($file ${both[*]} ${only[*]}; $ops operations)"
  flush
  ycsb load "$file" "$work/a.load" "$work/a.load.txt" "${both[@]}"
  kvlab load "$file" "$work/b.load" "$work/b.load.txt" "${both[@]}" "${only[@]}"
  "${compare[@]}" dump "$port_a" "$work/a.json"
  "${compare[@]}" dump "$port_b" "$work/b.json"
  "${compare[@]}" load "$name load" "$work/a.json" "$work/b.json" | say || true
  ycsb run "$file" "$work/a.run" "$work/a.run.txt" -p operationcount="$ops" "${both[@]}"
  kvlab run "$file" "$work/b.run" "$work/b.run.txt" -p operationcount="$ops" "${both[@]}" \
    "${only[@]}"
  local props
  props="$(grep -E '^[a-z]' "$file" | tr '\n' ';')$(printf '%s;' "${both[@]}" "${only[@]}" \
    | sed 's/-p;//g')"
  "${compare[@]}" run "$name run" "$props" "$work/a.load" "$work/a.run" "$work/b.load" \
    "$work/b.run" | say || true
  "${compare[@]}" report "$name load" "$work/a.load.txt" "$work/b.load.txt" | say || true
  "${compare[@]}" report "$name run" "$work/a.run.txt" "$work/b.run.txt" | say || true
}
# Only a load, for key-name variants. NAME FILE -p overrides...
crosscheck_load() {
  local name=$1 file=$2
  shift 2
  echo "== $name ($file $*)"
  flush
  ycsb load "$file" "$work/a.load" "$work/a.load.txt" "$@"
  kvlab load "$file" "$work/b.load" "$work/b.load.txt" "$@"
  "${compare[@]}" dump "$port_a" "$work/a.json"
  "${compare[@]}" dump "$port_b" "$work/b.json"
  local values=random
  [[ " $* " == *" dataintegrity=true "* ]] && values=deterministic
  "${compare[@]}" load "$name load" "$work/a.json" "$work/b.json" "$values" | say || true
}

# WORKLOADS (a glob; empty: none) limits the run to some files, VARIANTS=0 skips the
# variants.
# shellcheck disable=SC2086 # WORKLOADS is a glob
for file in ${WORKLOADS-workloads/ycsb/*}; do
  crosscheck "$(basename "$file")" "$file"
done
if [ "${VARIANTS:-1}" = 1 ]; then
crosscheck "workloada one-field reads, all-field writes" workloads/ycsb/workloada \
  -p readallfields=false -p writeallfields=true
crosscheck "workloadf one-field reads, all-field writes" workloads/ycsb/workloadf \
  -p readallfields=false -p writeallfields=true
crosscheck "workloadb all-field writes" workloads/ycsb/workloadb -p writeallfields=true
for dist in hotspot exponential sequential; do
  crosscheck "workloadb $dist" workloads/ycsb/workloadb -p requestdistribution="$dist"
done
crosscheck "workloade zipfian scan lengths" workloads/ycsb/workloade \
  -p scanlengthdistribution=zipfian
crosscheck_load "uniform field lengths" workloads/ycsb/workloada \
  -p fieldlengthdistribution=uniform -p minfieldlength=10
crosscheck_load "zipfian field lengths" workloads/ycsb/workloada \
  -p fieldlengthdistribution=zipfian
crosscheck "workloadb ordered keys" workloads/ycsb/workloadb -p insertorder=ordered
crosscheck_load "data integrity" workloads/ycsb/workloada -p dataintegrity=true
crosscheck_load "data integrity, 3 fields of 250 bytes" workloads/ycsb/workloada \
  -p dataintegrity=true -p fieldcount=3 -p fieldlength=250
crosscheck_load "zero padding 12" workloads/ycsb/workloada -p zeropadding=12
crosscheck_load "ordered, zero padding 8" workloads/ycsb/workloada -p insertorder=ordered \
  -p zeropadding=8
crosscheck_load "insertstart 300 insertcount 400" workloads/ycsb/workloada \
  -p insertstart=300 -p insertcount=400
crosscheck_load "ordered, insertstart 300 insertcount 400" workloads/ycsb/workloada \
  -p insertorder=ordered -p insertstart=300 -p insertcount=400
fi

# The checks must catch a wrong distribution: kvlab with uniform keys, and kvlab with a
# Zipfian of another theta (zipfianconstant, a kvlab extension), against YCSB's zipfian
# have to fail the key-popularity checks.
wrong() { # WHAT -p OVERRIDE...
  local what=$1 log="$work/wrong"
  shift
  echo "== deliberately wrong: kvlab $* against YCSB zipfian"
  : >"$log"
  results_saved=$results
  results=$log
  crosscheck "wrong workloadc ($*)" workloads/ycsb/workloadc -- "$@" >/dev/null
  results=$results_saved
  grep -E '^FAIL .*(hot keys|rank-frequency)' "$log" | sed 's/^/  expected: /' || true
  if grep -Eq '^FAIL .*hot keys' "$log" && grep -Eq '^FAIL .*rank-frequency' "$log"; then
    echo "PASS wrong setting detected: $what fails against YCSB's zipfian" | say
  else
    echo "FAIL wrong setting not detected: $what passed against YCSB's zipfian" | say
  fi
}
wrong "uniform keys" -p requestdistribution=uniform
wrong "a Zipfian of theta 0.9" -p zipfianconstant=0.9

pass=$(grep -c '^PASS' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
echo "== $pass checks passed, $fail failed"
grep '^FAIL' "$results" || true
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# `kvlab trace stats` computed by Apache Spark over a partitioned kvlab dataset: PySpark
# (the `pyspark` PyPI package, Java 17) reads the Hive-partitioned Parquet directory that
# `kvlab trace convert --partition-by` writes and computes the same figures with Spark
# SQL — requests, requests by op, distinct keys, bytes, value sizes, first and last
# timestamp and the mean request rate — then checks each against `kvlab trace stats
# --json` on the source trace, and prints both side by side with the times taken.
#
#   bench/spark-trace-stats.sh [TRACE] [PARTITION]
#
# TRACE: any trace kvlab reads (default: libCacheSim's cloudPhysicsIO oracleGeneral sample
#        beside the project, ../shared/data/traces/libcachesim/). It should be in time
#        order, as trace stats' first and last timestamps are its first and last requests'
#        and Spark's are the earliest and latest.
# PARTITION: `hour` or a number of requests per partition (default 20000).
# Environment:
#   KVLAB     the kvlab binary (default $HOME/.cache/kvlab-target/release/kvlab)
#   SPARK_PY  a Python with pyspark (default: a venv made once in
#             $HOME/.cache/kvlab-venv/pyspark-4.3.0)
#   MASTER    Spark's master URL (default local[2]). On a cluster: write the dataset to
#             storage every executor reads (HDFS, S3 through s3a://, NFS) and give that
#             URL as DATASET and the cluster's master here (spark://host:7077, yarn,
#             k8s://…); see docs/scale.md.
#   DATASET   where the dataset goes (default: a temporary directory)
#
# Spark reads Parquet's TIMESTAMP(NANOS) (kvlab's `ts`) only as a 64-bit integer of
# nanoseconds, with spark.sql.legacy.parquet.nanosAsLong=true, which this script sets.
# Spark averages the unsigned 64-bit value sizes as decimals to 4 places: means are
# compared to a relative 1e-6.
set -euo pipefail
cd "$(dirname "$0")/.."

KVLAB=${KVLAB:-$HOME/.cache/kvlab-target/release/kvlab}
TRACE=${1:-../shared/data/traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin}
PARTITION=${2:-20000}
MASTER=${MASTER:-local[2]}
SPARK_PY=${SPARK_PY:-}
if [[ -z $SPARK_PY ]]; then
  venv=$HOME/.cache/kvlab-venv/pyspark-4.3.0
  if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import pyspark' 2>/dev/null; then
    echo "making $venv (pip install pyspark==4.3.0)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check pyspark==4.3.0
  fi
  SPARK_PY=$venv/bin/python
fi
[[ -x $KVLAB ]] || { echo "no kvlab binary at $KVLAB (cargo build --release)" >&2; exit 2; }
[[ -f $TRACE ]] || { echo "no trace at $TRACE" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
DATASET=${DATASET:-$work/dataset}

t0=$(date +%s.%N)
"$KVLAB" trace convert "$TRACE" "$DATASET" --partition-by "$PARTITION" --overwrite
t1=$(date +%s.%N)
"$KVLAB" trace stats "$TRACE" --json >"$work/kvlab.json"
t2=$(date +%s.%N)
echo "kvlab: convert $(echo "$t1 - $t0" | bc) s, stats $(echo "$t2 - $t1" | bc) s" >&2

"$SPARK_PY" - "$DATASET" "$work/kvlab.json" "$MASTER" <<'PY'
import json, sys, time
from pyspark.sql import SparkSession

dataset, kvlab_json, master = sys.argv[1:4]
want = json.load(open(kvlab_json))
spark = (SparkSession.builder.master(master).appName("kvlab-trace-stats")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.legacy.parquet.nanosAsLong", "true")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
start = time.time()
spark.read.parquet(dataset).createOrReplaceTempView("trace")
row = spark.sql("""
    SELECT count(*)                                                  AS requests,
           count(DISTINCT id)                                        AS distinct_keys,
           sum(coalesce(key_size, 0) + coalesce(value_size, 0))      AS bytes,
           min(value_size) AS vmin, max(value_size) AS vmax, avg(value_size) AS vmean,
           min(ts) AS first_ns, max(ts) AS last_ns,
           count(DISTINCT cast(ts / 1000000000 AS BIGINT))           AS busy_seconds
    FROM trace""").first().asDict()
ops = {r["op"]: r["n"] for r in spark.sql(
    "SELECT op, count(*) AS n FROM trace GROUP BY op").collect()}
elapsed = time.time() - start
spark.stop()

unit_ns = {"seconds": 10**9, "millis": 10**6, "micros": 10**3, "nanos": 1,
           "filetime": 100}.get(want["time_unit"])
span_s = (row["last_ns"] - row["first_ns"]) / 1e9 if unit_ns else None
got = {
    "requests": row["requests"],
    "distinct_keys": row["distinct_keys"],
    "bytes": int(row["bytes"]) if want["bytes"] is not None else None,
    "ops": dict(sorted(ops.items())),
    "value_size_min": int(row["vmin"]) if row["vmin"] is not None else None,
    "value_size_max": int(row["vmax"]) if row["vmax"] is not None else None,
    "value_size_mean": float(row["vmean"]) if row["vmean"] is not None else None,
    "duration_s": span_s,
    "requests_per_s": row["requests"] / span_s if span_s else None,
}
v = want.get("value_size") or {}
kv_span = ((want["last_ts"] - want["first_ts"]) * unit_ns / 1e9) if unit_ns else None
expect = {
    "requests": want["requests"],
    "distinct_keys": want["distinct_keys"],
    "bytes": want["bytes"],
    "ops": dict(sorted(want["ops"].items())),
    "value_size_min": v.get("min"),
    "value_size_max": v.get("max"),
    "value_size_mean": v.get("mean"),
    "duration_s": kv_span,
    "requests_per_s": want["requests"] / kv_span if kv_span else None,
}
bad = 0
print(f"{'figure':<18} {'spark':>22} {'kvlab trace stats':>22}")
for k in expect:
    a, b = got[k], expect[k]
    same = (abs(a - b) <= 1e-6 * max(1.0, abs(b))) if isinstance(b, float) and a is not None else a == b
    bad += not same
    if k == "ops":
        print(f"{k:<18} {'(equal)' if same else json.dumps(a)}")
        if not same:
            print(f"{'':<18} {json.dumps(b)}")
    else:
        print(f"{k:<18} {str(a):>22} {str(b):>22}{'' if same else '   DIFFERENT'}")
print(f"spark: {elapsed:.1f} s over {dataset} on {master} "
      f"({row['busy_seconds']} distinct seconds with requests)")
sys.exit(1 if bad else 0)
PY

#!/usr/bin/env bash
# Installs what kvlab needs to build and test on a fresh Debian machine:
# clang/libclang (bindgen), g++ (kvlab's RocksDB shim), the system RocksDB library kvlab
# links (and db_bench from rocksdb-tools for benchmarks), redis-server, redis-tools,
# memcached and memaslap (libmemcached-tools) for the server tests and benchmarks,
# openssl for the TLS test,
# the WiredTiger and LMDB libraries (lmdb-utils' mdb_stat counts what the LMDB tests
# stored), chromium (the report is checked in a headless browser), jq (the seed in
# result.json is checked as jq reads it), and prometheus (a Prometheus server and promtool
# scrape and check `--metrics`). scripts/test.sh also installs toxiproxy-server.
# Idempotent: does nothing that is already done.
set -euo pipefail
need=()
for pkg in clang libclang-dev g++ librocksdb-dev rocksdb-tools redis-server redis-tools memcached \
  libmemcached-tools openssl libwiredtiger-dev liblmdb-dev lmdb-utils chromium jq prometheus; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (rustup) first" >&2
  exit 1
fi

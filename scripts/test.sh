#!/usr/bin/env bash
# The whole test suite: set up, then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# Toxiproxy's server (the fault-injection tests), from the Go module proxy, into kvlab's
# own cache: $HOME/.cache/kvlab-go/bin/toxiproxy-server.
toxiproxy="$HOME/.cache/kvlab-go/bin/toxiproxy-server"
if [ ! -x "$toxiproxy" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "setup: go not found; the fault-injection tests need it to install toxiproxy-server" >&2
    exit 1
  fi
  echo "setup: installing toxiproxy-server (go install)" >&2
  mkdir -p "$(dirname "$toxiproxy")"
  GOBIN="$HOME/.cache/kvlab-go/build" go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0
  mv "$HOME/.cache/kvlab-go/build/server" "$toxiproxy"
fi
# Keep build artifacts outside the clone so repeated runs reuse them.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
cargo fmt --all --check
# docs/performance.md's table is generated from bench/results/: stale is a failure.
python3 bench/table.py --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
cargo test --workspace --locked

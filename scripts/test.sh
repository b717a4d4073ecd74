#!/usr/bin/env bash
# The whole test suite: set up, then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# Keep build artifacts outside the clone so repeated runs reuse them.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
cargo test --workspace --locked

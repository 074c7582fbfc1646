#!/usr/bin/env bash
# The test command: every Rust test (the testbed tests need root), then Hadoop's FsShell against Tusk.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --no-fail-fast
cargo build -p tusk-cli
scripts/compat-hadoop.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"

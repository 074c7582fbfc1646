#!/usr/bin/env bash
# The test command: every Rust test, then Hadoop's FsShell against Tusk when Java is present.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo build -p tusk-cli
scripts/compat-hadoop.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"

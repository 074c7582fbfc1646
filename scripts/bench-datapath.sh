#!/usr/bin/env bash
# Bulk writes and reads through Tusk's DataNodes and Hadoop 3.4.2's in one run, with
# hdfs-native and Tusk's client, plus TestDFSIO; see scripts/bench_datapath.py.
#   scripts/bench-datapath.sh [--trials 5] [--sizes 1,16,128,512] [--dfsio 4x128] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${TUSK:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || cargo build --release -p tusk-cli
python3 -c 'import hdfs_native' 2>/dev/null || python3 -m pip install -q hdfs-native 2>/dev/null \
  || python3 -m pip install -q --break-system-packages hdfs-native
TUSK=$TUSK exec python3 scripts/bench_datapath.py "$@"

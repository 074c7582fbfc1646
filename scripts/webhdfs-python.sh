#!/usr/bin/env bash
# WebHDFS through a client nobody here wrote: the Python `hdfs` package (HdfsCLI, from
# PyPI) against a Tusk local cluster — create, ranged read, list, rename, delete, and
# the errors a user meets (scripts/webhdfs_python.py).
# Usage: scripts/webhdfs-python.sh [path/to/tusk]   (needs python3 with pip)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/debug/tusk}
[ -x "$TUSK" ] || { echo "webhdfs-python: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }
if ! python3 -c 'import hdfs' 2>/dev/null; then
  echo "webhdfs-python: installing the Python hdfs package..."
  python3 -m pip install -q hdfs==2.7.3 2>/dev/null \
    || python3 -m pip install -q --break-system-packages hdfs==2.7.3
fi

WORK=$(mktemp -d /tmp/tusk-webhdfs.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

TUSK_HOME=$WORK "$TUSK" local up --dir "$CLUSTER" --datanodes 2 --no-yarn -D dfs.replication=2 >/dev/null
NN_HTTP=$(cat "$CLUSTER/namenode.http-addr")
echo "webhdfs-python: Tusk's WebHDFS at http://$NN_HTTP"
python3 scripts/webhdfs_python.py "http://$NN_HTTP"

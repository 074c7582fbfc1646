#!/usr/bin/env bash
# TPC-H through Tusk, checked against an independent engine: a `tusk local` cluster,
# SF 0.01 generated into its DFS as Parquet, the 22 queries run by Tusk's SQL through the
# DFS in the client and with `--cluster` (Ballista executors in YARN containers), and by
# DataFusion alone on a local copy, every answer compared row by row with
# DuckDB's (the Python package, its built-in Parquet reader) on the local copy; then the
# DFS's files fetched with `tusk fs -get` must be byte for byte the files DuckDB read.
# Usage: scripts/check-tpch.sh [path/to/tusk]   (a tusk built with --features sql)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/debug/tusk}
if [ $# -eq 0 ]; then cargo build -q -p tusk-cli --features sql; fi
[ -x "$TUSK" ] || { echo "check-tpch: no tusk binary at $TUSK" >&2; exit 1; }
if ! python3 -c 'import duckdb' 2>/dev/null; then
  echo "check-tpch: installing the Python duckdb package..."
  python3 -m pip install -q duckdb 2>/dev/null \
    || python3 -m pip install -q --break-system-packages duckdb
fi
python3 -c 'import duckdb' || { echo "check-tpch: the duckdb package did not install" >&2; exit 1; }

WORK=$(mktemp -d /tmp/tusk-tpch.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

URI=$(TUSK_HOME=$WORK "$TUSK" local up --dir "$CLUSTER" --datanodes 3 | tail -1)
RM=$(cat "$WORK/defaultRM")
echo "check-tpch: cluster at $URI, ResourceManager at $RM"
"$TUSK" -D fs.defaultFS="$URI" -D yarn.resourcemanager.address="$RM" \
  -D tusk.sql.cluster.executors=3 -D tusk.sql.cluster.executor.vcores=1 \
  -D tusk.sql.cluster.executor.memory-mb=1024 \
  bench tpch --scale 0.01 --trials 1 --cluster \
  --data "$URI/tpch/sf0.01" --local "$WORK/local"

"$TUSK" fs -fs "$URI" -get /tpch/sf0.01 "$WORK/from-dfs"
count=0
for f in "$WORK"/local/*/*.parquet; do
  rel=${f#"$WORK/local/"}
  cmp -s "$f" "$WORK/from-dfs/$rel" || { echo "check-tpch: $rel differs between the DFS and local disk" >&2; exit 1; }
  count=$((count + 1))
done
[ "$count" -ge 8 ] || { echo "check-tpch: only $count Parquet files" >&2; exit 1; }
echo "check-tpch: all 22 answers (in the client and on the cluster) match DuckDB's; the DFS holds the same $count Parquet files"

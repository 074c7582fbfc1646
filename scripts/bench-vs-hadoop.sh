#!/usr/bin/env bash
# NameNode throughput of Tusk and of real Hadoop 3.4.2 HDFS, measured in one run with the
# same client (`tusk bench nnthroughput --fs ...`), then the Tusk ÷ Hadoop ratios.
#   scripts/bench-vs-hadoop.sh [--op rename] [--n 5000,10000,20000] [--mode sync,async,threads:100,...]
# Hadoop comes from ../shared/anchors/hadoop (its Maven Central classpath): 1 NameNode + 3
# DataNodes in one JVM, edit log fsync'd; set HADOOP_ANCHOR to move it.
# Results: JSON and Markdown under ${OUT:-/tmp/tusk-vs-hadoop}.
set -euo pipefail
cd "$(dirname "$0")/.."
ANCHOR=${HADOOP_ANCHOR:-$(cd .. && pwd)/shared/anchors/hadoop}
TUSK=${TUSK:-${CARGO_TARGET_DIR:-target}/release/tusk}
OUT=${OUT:-/tmp/tusk-vs-hadoop}
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--op rename --n 5000,10000,20000 --mode sync,async,threads:100,threads:500)
[ -x "$TUSK" ] || cargo build --release -p tusk-cli
[ -x "$ANCHOR/standalone-hdfs.sh" ] || { echo "no Hadoop anchor at $ANCHOR" >&2; exit 1; }
mkdir -p "$OUT"
CLUSTER=$OUT/tusk-cluster
HPID=
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; [ -z "$HPID" ] || kill "$HPID" 2>/dev/null || true; }
trap cleanup EXIT

# Hadoop's NameNode with a real edit-log fsync (scripts/hadoop/HdfsWithFsync.java), like
# Tusk's; the anchor's standalone-hdfs.sh uses MiniDFSCluster's default of skipping it.
[ -f "$ANCHOR/target/classpath.txt" ] || (cd "$ANCHOR" && ./run.sh build >/dev/null)
HCP="$(cat "$ANCHOR/target/classpath.txt")"
mkdir -p "$OUT/hadoop-classes"
javac -cp "$HCP" -d "$OUT/hadoop-classes" scripts/hadoop/HdfsWithFsync.java
rm -rf "$OUT/hadoop-state"
HPORT=${HADOOP_PORT:-18020}
java -Xmx4g -Djava.net.preferIPv4Stack=true --add-opens=java.base/java.lang=ALL-UNNAMED \
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
  -cp "$HCP:$OUT/hadoop-classes" HdfsWithFsync "$HPORT" 3 "$OUT/hadoop-state" >"$OUT/hadoop.log" 2>&1 &
HPID=$!
for _ in $(seq 1 120); do
  grep -q READY "$OUT/hadoop.log" 2>/dev/null && break
  kill -0 $HPID 2>/dev/null || { echo "Hadoop exited; see $OUT/hadoop.log" >&2; exit 1; }
  sleep 1
done
HADOOP_URI="hdfs://127.0.0.1:$HPORT"
TUSK_URI=$(TUSK_HOME=$OUT "$TUSK" local up --dir "$CLUSTER" --format --datanodes 3 --no-yarn -D dfs.permissions.enabled=false | tail -1)
echo "Hadoop: $HADOOP_URI   Tusk: $TUSK_URI"

# Interleave: Hadoop, Tusk, so drift on a shared machine hits both.
# Both NameNodes' pids, so the tables also show NameNode CPU per call.
TUSK_NN_PID=$(awk '$1 == "namenode" {print $2}' "$CLUSTER/pids")
"$TUSK" bench nnthroughput --fs "$HADOOP_URI" --namenode-pid "$HPID" "${ARGS[@]}" --json "$OUT/hadoop.json" | tee "$OUT/hadoop.md"
"$TUSK" bench nnthroughput --fs "$TUSK_URI" --namenode-pid "$TUSK_NN_PID" "${ARGS[@]}" --json "$OUT/tusk.json" | tee "$OUT/tusk.md"

python3 - "$OUT/tusk.json" "$OUT/hadoop.json" <<'PY' | tee "$OUT/ratios.md"
import json, sys
tusk = json.load(open(sys.argv[1]))["measurements"]
hadoop = json.load(open(sys.argv[2]))["measurements"]
h = {(m["op"], m["n"], m["mode"]): m for m in hadoop}
modes = []
for m in tusk:
    if m["mode"] not in modes:
        modes.append(m["mode"])
print("## Tusk ÷ Hadoop, same run (ops/s ratio; Tusk ops/s / Hadoop ops/s)\n")
print("| op | calls | " + " | ".join(modes) + " |")
print("|---|---|" + "---|" * len(modes))
rows = sorted({(m["op"], m["n"]) for m in tusk}, key=lambda r: (r[0], r[1]))
for op, n in rows:
    cells = []
    for mode in modes:
        t = next((m for m in tusk if m["op"] == op and m["n"] == n and m["mode"] == mode), None)
        o = h.get((op, n, mode))
        cells.append(f"×{t['ops_per_sec'] / o['ops_per_sec']:.1f} ({t['ops_per_sec']:.0f} / {o['ops_per_sec']:.0f})" if t and o else "–")
    print(f"| {op} | {n} | " + " | ".join(cells) + " |")
PY

#!/usr/bin/env bash
# The heartbeat sweep's Hadoop-MapReduce system in its smallest form: one case (6), one
# trial, Tusk event-driven, tiny data; Hadoop 3.4.2's own TestDFSIO (jobclient tests jar),
# TeraGen and TeraSort (examples jar), unmodified, run by Hadoop's job client on a fresh
# `tusk local up`, the AM period handed to Hadoop's MRAppMaster, the map phase read from
# the job history Hadoop's MRAppMaster wrote into Tusk's DFS. Checks that the report has
# a "hadoop-mr on tusk event-driven" run whose job times, map phase and master costs are
# positive, and that its summary row and chart series exist. About 1.5 minutes.
# Usage: scripts/hadoop-mr-sweep.sh [path/to/tusk]   (needs Java and Maven)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "hadoop-mr-sweep: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
CP_FILE=$(scripts/hadoop-classpath.sh)
WORK=$(mktemp -d /tmp/tusk-hadoop-mr-sweep.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

TUSK_LOG=error "$TUSK" bench heartbeat-sweep --cases 6 --timings event-driven --trials 1 \
  --files 1 --size-mb 1 --tera-rows 1000 --tera-maps 1 \
  --hadoop-mapreduce "$CP_FILE" --dir "$WORK/clusters" --charts "$WORK/charts" \
  --json "$WORK/sweep.json" > "$WORK/out.md"

python3 - "$WORK/sweep.json" "$WORK/charts/job-time-terasort-map.svg" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
runs = [r for r in report["runs"] if r.get("mapreduce") == "hadoop"]
assert len(runs) == 1, f"one Hadoop-MapReduce run expected: {report['runs']}"
run = runs[0]
for job in ("dfsio_write", "dfsio_read", "terasort"):
    t = run[job]
    assert 0 < t["map_phase_seconds"] < t["job_seconds"], (job, t)
    assert t["process_seconds"] > 0, (job, t)
for master in ("namenode", "resourcemanager"):
    assert run[master]["heartbeats_per_sec"] > 0, (master, run[master])
rows = [s for s in report["summary"] if s["system"] == "hadoop-mr on tusk event-driven"]
assert len(rows) == 1 and rows[0]["terasort_seconds"] > 0, report["summary"]
svg = open(sys.argv[2]).read()
assert "Hadoop MR on Tusk event-driven" in svg, "no Hadoop-MapReduce series in the chart"
print("hadoop-mr-sweep: DFSIO write %.2f s, read %.2f s, TeraSort %.2f s (map phase %.2f s)" % (
    run["dfsio_write"]["job_seconds"], run["dfsio_read"]["job_seconds"],
    run["terasort"]["job_seconds"], run["terasort"]["map_phase_seconds"]))
PY
echo "hadoop-mr-sweep: OK"

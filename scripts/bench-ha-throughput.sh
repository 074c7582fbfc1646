#!/usr/bin/env bash
# The cost of NameNode HA on the namespace path, in one run: a local cluster with one
# NameNode (its edit log on its own disk) and one with an HA nameservice (three
# NameNodes; every edit committed through the replicated log on a majority), and
# `tusk bench nnthroughput` against each in turn, the order rotated every round.
# Prints per op and mode the median and min ops/s over the rounds and HA's median as a
# share of the single NameNode's (issue 28: async rename with HA at least half).
# Usage: scripts/bench-ha-throughput.sh [path/to/tusk] [rounds] [n]   (defaults: release
# build, 5 rounds, 20000 calls)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
ROUNDS=${2:-5}
N=${3:-20000}
SETUPS=(single ha)
WORK=$(mktemp -d /tmp/tusk-ha-throughput.XXXXXX)
cleanup() {
  for s in "${SETUPS[@]}"; do "$TUSK" local down --dir "$WORK/$s" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
declare -A URI
URI[single]=$(TUSK_HOME=$WORK/home-single "$TUSK" local up --no-yarn --datanodes 1 --dir "$WORK/single" 2>/dev/null | tail -1)
URI[ha]=$(TUSK_HOME=$WORK/home-ha "$TUSK" local up --ha --no-yarn --datanodes 1 --dir "$WORK/ha" 2>/dev/null | tail -1)
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1; do
    s=${SETUPS[$(( (i + r) % 2 ))]}
    "$TUSK" --conf "$WORK/$s/conf" bench nnthroughput --fs "${URI[$s]}" --op rename \
      --n "$N" --mode sync,async --json "$WORK/$s-$r.json" >/dev/null 2>&1
  done
done
python3 - "$WORK" "$ROUNDS" "${SETUPS[@]}" <<'PY'
import json, statistics, sys
work, rounds, setups = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for s in setups:
    for r in range(1, rounds + 1):
        for m in json.load(open(f"{work}/{s}-{r}.json"))["measurements"]:
            rows.setdefault((m["op"], str(m["mode"])), {}).setdefault(s, []).append(m["ops_per_sec"])
print("| op | mode | one NameNode: ops/s median (min) | HA, three NameNodes: ops/s median (min) | HA ÷ one |")
print("|---|---|---|---|---|")
for (op, mode), by in sorted(rows.items()):
    med = {s: statistics.median(v) for s, v in by.items()}
    print(f"| {op} | {mode} | {med['single']:,.0f} ({min(by['single']):,.0f}) | "
          f"{med['ha']:,.0f} ({min(by['ha']):,.0f}) | {med['ha'] / med['single']:.2f} |")
PY

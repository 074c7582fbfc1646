#!/usr/bin/env bash
# The cost of RPC protection under Kerberos, in one run: three secure local clusters
# (`tusk local up --secure`, hadoop.rpc.protection = authentication, integrity,
# privacy), and `tusk bench nnthroughput --fs` against each in turn, the order rotated
# every round. Prints per level and measure the median and min ops/s over the rounds
# and the median's ratio to authentication's.
# Usage: scripts/bench-rpc-protection.sh [path/to/tusk] [rounds] [n]   (a tusk built with
# --features kerberos; defaults: release build, 5 rounds, 20000 calls)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
ROUNDS=${2:-5}
N=${3:-20000}
LEVELS=(authentication integrity privacy)
WORK=$(mktemp -d /tmp/tusk-rpc-protection.XXXXXX)
cleanup() {
  for l in "${LEVELS[@]}"; do "$TUSK" local down --dir "$WORK/$l" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
declare -A URI
for l in "${LEVELS[@]}"; do
  URI[$l]=$(TUSK_HOME=$WORK/home-$l "$TUSK" local up --secure --no-yarn --datanodes 1 --dir "$WORK/$l" \
    -D hadoop.rpc.protection=$l 2>/dev/null | tail -1)
done
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1 2; do
    l=${LEVELS[$(( (i + r) % 3 ))]}
    KRB5_CONFIG=$WORK/$l/kdc/krb5.conf KRB5CCNAME=FILE:$WORK/$l/kdc/$(id -un).cc \
      "$TUSK" --conf "$WORK/$l/conf" -D hadoop.rpc.protection=$l bench nnthroughput \
      --fs "${URI[$l]}" --op create,fileStatus --n "$N" --mode sync,async \
      --json "$WORK/$l-$r.json" >/dev/null 2>&1
  done
done
python3 - "$WORK" "$ROUNDS" "${LEVELS[@]}" <<'PY'
import json, statistics, sys
work, rounds, levels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for l in levels:
    for r in range(1, rounds + 1):
        for m in json.load(open(f"{work}/{l}-{r}.json"))["measurements"]:
            rows.setdefault((m["op"], str(m["mode"])), {}).setdefault(l, []).append(m["ops_per_sec"])
print(f"| op | mode | " + " | ".join(f"{l} ops/s median (min)" for l in levels) + " | " +
      " | ".join(f"{l} ÷ authentication" for l in levels[1:]) + " |")
print("|---|---|" + "---|" * (2 * len(levels) - 1))
for (op, mode), by in sorted(rows.items()):
    med = {l: statistics.median(v) for l, v in by.items()}
    cells = [f"{med[l]:,.0f} ({min(by[l]):,.0f})" for l in levels]
    ratios = [f"{med[l] / med[levels[0]]:.2f}" for l in levels[1:]]
    print(f"| {op} | {mode} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
PY

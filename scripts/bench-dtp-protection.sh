#!/usr/bin/env bash
# The cost of dfs.data.transfer.protection, in one run: five local clusters
# (`tusk local up`, one DataNode, block tokens on; protection = none, authentication,
# integrity, privacy, and `encrypt`: dfs.encrypt.data.transfer), and Tusk's own shell putting and reading back one file against
# each in turn, the order rotated every round. Prints per level the median and minimum
# write and read MiB/s over the rounds and the medians' ratio to the unprotected
# cluster's.
# Usage: scripts/bench-dtp-protection.sh [path/to/tusk] [rounds] [MiB]
#   (defaults: release build, 5 rounds, 256 MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
ROUNDS=${2:-5}
MIB=${3:-256}
LEVELS=(none authentication integrity privacy encrypt)
WORK=$(mktemp -d /tmp/tusk-dtp-protection.XXXXXX)
cleanup() {
  for l in "${LEVELS[@]}"; do "$TUSK" local down --dir "$WORK/$l" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
head -c "$((MIB << 20))" /dev/urandom > "$WORK/data.bin"
define() {
  case $1 in
    none) ;;
    encrypt) echo "-D dfs.encrypt.data.transfer=true" ;;
    *) echo "-D dfs.data.transfer.protection=$1" ;;
  esac
}
for l in "${LEVELS[@]}"; do
  # shellcheck disable=SC2046
  TUSK_HOME=$WORK/home-$l "$TUSK" local up --no-yarn --datanodes 1 --dir "$WORK/$l" \
    -D dfs.replication=1 $(define "$l") >/dev/null 2>&1
done
now() { date +%s.%N; }
for r in $(seq 1 "$ROUNDS"); do
  for i in "${!LEVELS[@]}"; do
    l=${LEVELS[$(( (i + r) % ${#LEVELS[@]} ))]}
    # shellcheck disable=SC2046
    shell() { "$TUSK" --conf "$WORK/$l/conf" $(define "$l") fs "$@"; }
    t0=$(now); shell -put "$WORK/data.bin" "/bench-$r.bin"; t1=$(now)
    shell -cat "/bench-$r.bin" > "$WORK/back.bin"; t2=$(now)
    cmp -s "$WORK/data.bin" "$WORK/back.bin" || { echo "bench-dtp-protection: $l read back other bytes" >&2; exit 1; }
    echo "$l $r $(echo "$MIB / ($t1 - $t0)" | bc -l) $(echo "$MIB / ($t2 - $t1)" | bc -l)" >> "$WORK/results"
  done
done
python3 - "$WORK/results" "${LEVELS[@]}" <<'PY'
import statistics, sys
path, levels = sys.argv[1], sys.argv[2:]
rows = {l: ([], []) for l in levels}
for line in open(path):
    l, _, w, r = line.split()
    rows[l][0].append(float(w))
    rows[l][1].append(float(r))
base = {k: statistics.median(v) for k, v in zip("wr", rows["none"])}
print("| protection | write MiB/s median (min) | read MiB/s median (min) | write ÷ none | read ÷ none |")
print("|---|---|---|---|---|")
for l in levels:
    w, r = rows[l]
    print(f"| {l} | {statistics.median(w):.0f} ({min(w):.0f}) | {statistics.median(r):.0f} ({min(r):.0f}) "
          f"| {statistics.median(w) / base['w']:.2f} | {statistics.median(r) / base['r']:.2f} |")
PY

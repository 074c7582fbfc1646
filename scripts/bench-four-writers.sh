#!/bin/bash
# Four concurrent 51.2 MB pipeline writers (TestDFSIO's write phase, Tusk's client on the
# testbed's client node) into Hadoop 3.4.2's DataNodes and into Tusk's, on one
# repl-ipoib-32g testbed running both; the order alternates per trial (odd: Tusk first).
# As root, with a release build. Usage: scripts/bench-four-writers.sh TRIALS OUTDIR
# (UP_FLAGS: more flags for `tusk testbed up`, e.g. "-D tusk.datanode.direct-io=true").
# Prints one table row per trial (wall s and per-writer s of both) and the medians.
set -eu
N=$1
OUT=$2
T=${TUSK:-target/release/tusk}
TB=${TESTBED_DIR:-/tmp/tusk-four-writers}
mkdir -p "$OUT"
"$T" testbed down --dir "$TB" >/dev/null 2>&1 || true
# shellcheck disable=SC2086 # UP_FLAGS is a list of flags
"$T" testbed up testbeds/repl-ipoib-32g.toml --dir "$TB" ${UP_FLAGS:-} \
  --hadoop-classpath "$(scripts/hadoop-classpath.sh)" > "$OUT/up.log" 2>&1
trap '"$T" testbed down --dir "$TB" > "$OUT/down.log" 2>&1' EXIT
NN=$("$T" testbed exec --dir "$TB" master -- hostname -I | tr ' ' '\n' | grep '^198\.18\.' | head -1)
one() { # system port trial
  "$T" testbed exec --dir "$TB" client -- "$(realpath "$T")" bench dfsio --fs "hdfs://$NN:$2" \
    --files 4 --size 53687091 --mode pipeline --json "$OUT/$1-$3.json" > "$OUT/$1-$3.md" 2>&1
}
for i in $(seq 1 "$N"); do
  if [ $((i % 2)) = 1 ]; then one tusk 8020 "$i"; one hadoop 18020 "$i"
  else one hadoop 18020 "$i"; one tusk 8020 "$i"; fi
done
python3 - "$OUT" "$N" <<'PY'
import json, math, statistics as st, sys
out, n = sys.argv[1], int(sys.argv[2])
wall = {"tusk": [], "hadoop": []}
print("| trial | first | Hadoop wall s | Hadoop per writer s | Tusk wall s | Tusk per writer s |")
print("|---|---|---|---|---|---|")
for i in range(1, n + 1):
    row = {}
    for s in wall:
        w = json.load(open(f"{out}/{s}-{i}.json"))[0]["write"]
        wall[s].append(w["wall_seconds"])
        row[s] = "%.2f | %s" % (w["wall_seconds"], " / ".join("%.2f" % f["seconds"] for f in w["files"]))
    print("| %d | %s | %s | %s |" % (i, "Tusk" if i % 2 else "Hadoop", row["hadoop"], row["tusk"]))
t, h = wall["tusk"], wall["hadoop"]
faster = sum(1 for a, b in zip(t, h) if b > a)
p = min(1.0, 2 * sum(math.comb(n, j) for j in range(max(faster, n - faster), n + 1)) / 2**n)
print(f"\nmedian wall s: Tusk {st.median(t):.3f}, Hadoop {st.median(h):.3f}; "
      f"Hadoop/Tusk per pair median {st.median([b / a for a, b in zip(t, h)]):.2f}; "
      f"Tusk faster in {faster} of {n} pairs (sign test p {p:.3f})")
PY

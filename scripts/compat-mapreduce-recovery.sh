#!/usr/bin/env bash
# Work-preserving behaviour with Hadoop 3.4.2's own MapReduce (hadoop-streaming, its
# MRAppMaster and YarnChild tasks, unmodified) on `tusk local`, 2 NodeManagers:
#   - kill -9 of the ResourceManager while a job's maps run, then `tusk local start
#     resourcemanager`: the ResourceManager recovers the application and the running
#     containers its NodeManagers report, the AM registers again with the same attempt,
#     and the job finishes with the right output;
#   - kill -9 of a NodeManager (and of its containers, as when its machine dies) while
#     it runs maps: the ResourceManager expires the node, reports its containers to the
#     AM as ABORTED ("Container released on a *lost* node") and the node as LOST, the AM
#     runs those maps (and any finished there, whose output is gone) again on the other
#     node, and the job, its reduce included, finishes with the right output.
# Each check prints PASS or FAIL; the script exits non-zero when any failed.
# Usage: scripts/compat-mapreduce-recovery.sh [path/to/tusk]   (needs Java and Maven)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "compat-mapreduce-recovery: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
[ -x "$TUSK" ] || { echo "compat-mapreduce-recovery: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

WORK=$(mktemp -d /tmp/tusk-compat-mr-recovery.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() {
  if [ "${FAILED:-1}" != 0 ] && [ -d "$CLUSTER/logs" ]; then
    tail -n 30 "$CLUSTER"/logs/*.log >&2 || true
  fi
  [ -n "${JOB_PID:-}" ] && kill -- "-$JOB_PID" 2>/dev/null || true
  "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

CP_FILE=$(scripts/hadoop-classpath.sh)
source scripts/lib/hadoop-java.sh
STREAMING=$(tr ':' '\n' < "$CP_FILE" | grep '/hadoop-streaming-3.4.2.jar$')

# A node is lost after 6 s of silence; 1.5 GB per NodeManager and 128 MB allocations, so
# a job's AM and maps spread over both nodes and the AM's node alone can still run maps.
# `tusk local start` is given the same keys as `up`.
CLUSTER_KEYS=(-D yarn.nm.liveness-monitor.expiry-interval-ms=6000
  -D yarn.nodemanager.resource.memory-mb=1536 -D yarn.scheduler.minimum-allocation-mb=128)
tusk() { TUSK_HOME=$WORK "$TUSK" "$@"; }
tusk "${CLUSTER_KEYS[@]}" local up --dir "$CLUSTER" --datanodes 2 2> "$WORK/up.err" >/dev/null \
  || { cat "$WORK/up.err" >&2; exit 1; }
HADOOP_JAVA_CONF_DIR=$(sed -n 's/^export HADOOP_CONF_DIR=//p' "$WORK/up.err")
echo "compat-mapreduce-recovery: HADOOP_CONF_DIR=$HADOOP_JAVA_CONF_DIR"

mapreduce_job_opts "$CP_FILE"
JOB_OPTS+=(
  # The AM and the job client try a restarted ResourceManager every second, not every 30.
  -Dyarn.resourcemanager.connect.retry-interval.ms=1000
  # The AM gives up stopping a lost node's containers after 5 s, not 3 minutes (Hadoop's
  # AM waits that long on a dead node before a killed task attempt is rerun).
  -Dyarn.client.nodemanager-connect.max-wait-ms=5000
  -Dyarn.client.nodemanager-connect.retry-interval-ms=1000
  -Dmapreduce.job.reduce.slowstart.completedmaps=1
)

FAILED=0
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1; shift
  if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; FAILED=1; fi
}
wait_until() { # wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.5 s
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || { echo "compat-mapreduce-recovery: timed out waiting for $what" >&2; return 1; }
    sleep 0.5
  done
}
exited() { # exited PID: the process is gone or a zombie
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
  [ -z "$state" ] || [ "$state" = Z ]
}
pid_of() { awk -v n="$1" '$1 == n {print $2}' "$CLUSTER/pids"; }
# The newest application with a container on some NodeManager.
newest_app() { ls -d "$CLUSTER"/nm*/logs/application_* 2>/dev/null | xargs -rn1 basename | sort | tail -1; }
new_app_started() { [ -n "$(newest_app)" ] && [ "$(newest_app)" != "${APP:-}" ]; }

# Four input files of numbered lines: four maps. Each map sleeps first, so the job runs
# long enough to kill something while its maps run.
for f in 1 2 3 4; do
  seq $((f * 1000)) $((f * 1000 + 499)) | sed "s/^/line-$f-/" > "$WORK/in-$f.txt"
done
tusk fs -mkdir -p input
for f in 1 2 3 4; do tusk fs -put "$WORK/in-$f.txt" "input/in-$f.txt"; done
sort "$WORK"/in-*.txt > "$WORK/expected"

run_job() { # run_job OUTPUT REDUCER LOG: a streaming job with sleeping `cat` maps, in the background
  set -m # in its own process group, which cleanup ends
  hadoop_java "$CP_FILE" org.apache.hadoop.util.RunJar "$STREAMING" "${JOB_OPTS[@]}" \
    -input input -output "$1" -mapper 'sh -c "sleep 12; cat"' -reducer "$2" > "$3" 2>&1 &
  JOB_PID=$!
  set +m
}
output_is_right() { # output_is_right DIR: its part files hold exactly the input lines
  tusk fs -cat "$1/part-*" 2>/dev/null | sed 's/\t$//' | sort > "$WORK/actual" || true
  cmp -s "$WORK/expected" "$WORK/actual"
}

# ---------------------------------------------------------------- kill -9 the ResourceManager
START=$SECONDS
run_job rm-kill-out cat "$WORK/rm-kill.log"
wait_until 120 "the job's application" new_app_started
APP=$(newest_app)
wait_until 120 "maps running" bash -c "ls -d '$CLUSTER'/nm*/logs/$APP/container_* 2>/dev/null | grep -qv '_000001\$'"
RM_PID=$(pid_of resourcemanager)
kill -9 "$RM_PID"
echo "compat-mapreduce-recovery: killed the ResourceManager while $APP's maps ran"
# kill -9 returns before the process has gone: `local start` refuses one still running.
wait_until 30 "the killed ResourceManager to exit" exited "$RM_PID"
tusk "${CLUSTER_KEYS[@]}" local start --dir "$CLUSTER" resourcemanager
set +e; wait "$JOB_PID"; CODE=$?; set -e; JOB_PID=
tail -n 3 "$WORK/rm-kill.log"
echo "compat-mapreduce-recovery: job with a ResourceManager restart took $((SECONDS - START)) s"
check "RM kill -9: the job succeeds" test "$CODE" = 0
check "RM kill -9: its output holds every input line once" output_is_right rm-kill-out
RM_LOG=$CLUSTER/logs/resourcemanager.log
check "RM kill -9: the application kept its attempt across the restart" \
  grep -q "application recovered; waiting for its AM to register again.*$APP" "$RM_LOG"
check "RM kill -9: the NodeManagers' running containers were recovered" \
  grep -q "container recovered.*$APP" "$RM_LOG"
check "RM kill -9: no second AM attempt" bash -c "! grep -q 'AM attempt failed.*$APP' '$RM_LOG'"

# ---------------------------------------------------------------- kill -9 a NodeManager
START=$SECONDS
run_job nm-kill-out cat "$WORK/nm-kill.log"
wait_until 120 "the job's application" new_app_started
APP=$(newest_app)
# The node running maps and not the AM dies; the AM reruns its maps on the other one.
wait_until 120 "maps on the node without the AM" bash -c '
  for i in 0 1; do
    c=$(ls -d "'"$CLUSTER"'/nm$i/logs/'"$APP"'"/container_* 2>/dev/null)
    [ -n "$c" ] && ! grep -q "_000001$" <<< "$c" && { echo $i > "'"$WORK"'/victim"; exit 0; }
  done; exit 1'
VICTIM=$(cat "$WORK/victim")
NM_PID=$(pid_of "nodemanager$VICTIM")
CONTAINER_GROUPS=$(pgrep -P "$NM_PID" || true)
kill -9 "$NM_PID"
for g in $CONTAINER_GROUPS; do kill -9 -- "-$g" 2>/dev/null || true; done
echo "compat-mapreduce-recovery: killed nodemanager$VICTIM and its containers while $APP's maps ran there"
set +e; wait "$JOB_PID"; CODE=$?; set -e; JOB_PID=
tail -n 3 "$WORK/nm-kill.log"
echo "compat-mapreduce-recovery: job with a lost NodeManager took $((SECONDS - START)) s"
check "NM kill -9: the job succeeds" test "$CODE" = 0
check "NM kill -9: its output holds every input line once" output_is_right nm-kill-out
check "NM kill -9: the ResourceManager expired the node" grep -q "node expired" "$RM_LOG"
check "NM kill -9: the AM heard of its lost containers with Hadoop's diagnostics" \
  grep -rqs 'Container released on a \*lost\* node' "$CLUSTER"/nm*/logs/"$APP"/
check "NM kill -9: the AM ran the lost maps again (a second attempt of a map)" \
  bash -c "grep -rqs 'attempt_.*_m_[0-9]*_1' '$CLUSTER'/nm*/logs/$APP/ || grep -q '_m_[0-9]*_1' '$WORK/nm-kill.log'"

if [ "$FAILED" = 0 ]; then
  echo "compat-mapreduce-recovery: OK (Hadoop 3.4.2 MapReduce survives a ResourceManager and a NodeManager kill -9 on Tusk)"
else
  echo "compat-mapreduce-recovery: FAILED" >&2; exit 1
fi

#!/usr/bin/env bash
# Hadoop 3.4.2's own YARN CLI (ApplicationCLI = `yarn application`, NodeCLI = `yarn node`,
# QueueCLI = `yarn queue`; jars from Maven Central, unmodified) against `tusk local up`,
# configured only by the HADOOP_CONF_DIR that `tusk local up` writes: a running Tusk job
# is listed, reported and killed, the NodeManagers and the default queue are shown, and
# an unknown application gets Hadoop's not-found message and a non-zero exit.
# Each check prints PASS or FAIL; the script exits non-zero when any failed.
# Usage: scripts/compat-yarn.sh [path/to/tusk]   (needs Java and Maven; .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "compat-yarn: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
[ -x "$TUSK" ] || { echo "compat-yarn: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/tusk-compat-yarn.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

# Hadoop's daemons' classpath holds hadoop-yarn-client (the CLIs) and its dependencies.
CP_FILE=$(scripts/hadoop-classpath.sh)
source scripts/lib/hadoop-java.sh

tusk() { TUSK_HOME=$WORK "$TUSK" "$@"; }
tusk local up --dir "$CLUSTER" --datanodes 2 2> "$WORK/up.err" >/dev/null \
  || { cat "$WORK/up.err" >&2; exit 1; }
HADOOP_JAVA_CONF_DIR=$(sed -n 's/^export HADOOP_CONF_DIR=//p' "$WORK/up.err")
[ -f "$HADOOP_JAVA_CONF_DIR/yarn-site.xml" ] || { echo "compat-yarn: no HADOOP_CONF_DIR line from tusk local up" >&2; exit 1; }
echo "compat-yarn: HADOOP_CONF_DIR=$HADOOP_JAVA_CONF_DIR"
yarn_app() { hadoop_java "$CP_FILE" org.apache.hadoop.yarn.client.cli.ApplicationCLI application "$@"; }
yarn_node() { hadoop_java "$CP_FILE" org.apache.hadoop.yarn.client.cli.NodeCLI "$@"; }
yarn_queue() { hadoop_java "$CP_FILE" org.apache.hadoop.yarn.client.cli.QueueCLI "$@"; }

FAILED=0
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1; shift
  if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; FAILED=1; fi
}
has() { grep -Eq -- "$2" <<< "$1"; }

# A Tusk job that runs until it is killed: one map sleeping ten minutes.
APP=$(tusk job submit sleep --maps 1 --reduces 0 --map-ms 600000 | grep -o 'application_[0-9_]*' | head -1)
echo "compat-yarn: submitted $APP"
for _ in $(seq 100); do
  tusk job status "$APP" 2>/dev/null | grep -q RUNNING && break
  sleep 0.2
done

LIST=$(yarn_app -list) || true
echo "$LIST"
check "application -list shows the running job" has "$LIST" "^ *$APP[[:space:]].*[[:space:]]RUNNING[[:space:]]"
ALL=$(yarn_app -list -appStates ALL) || true
check "application -list -appStates ALL shows it" has "$ALL" "^ *$APP[[:space:]]"
FINISHED=$(yarn_app -list -appStates FINISHED) || true
check "application -list -appStates FINISHED leaves it out" bash -c '! grep -q "$1" <<< "$2"' _ "$APP" "$FINISHED"
STATUS=$(yarn_app -status "$APP") || true
echo "$STATUS"
check "application -status: state" has "$STATUS" "State : RUNNING"
check "application -status: queue" has "$STATUS" "Queue : default"
check "application -status: user" has "$STATUS" "User : $(id -un)"
check "application -status: type" has "$STATUS" "Application-Type : MAPREDUCE"

NODES=$(yarn_node -list -all) || true
echo "$NODES"
check "node -list -all: two NodeManagers" has "$NODES" "Total Nodes:2"
check "node -list -all: RUNNING" test "$(grep -c '[[:space:]]RUNNING[[:space:]]' <<< "$NODES")" = 2

QUEUE=$(yarn_queue -status default) || true
echo "$QUEUE"
check "queue -status default: name" has "$QUEUE" "Queue Name : default"
check "queue -status default: state" has "$QUEUE" "State : RUNNING"

UNKNOWN=${APP%_*}_9999
set +e
MISSING=$(yarn_app -status "$UNKNOWN" 2>&1); CODE=$?
set -e
echo "$MISSING (exit $CODE)"
check "application -status of an unknown id: Hadoop's message" has "$MISSING" "Application with id '$UNKNOWN' doesn't exist in RM"
check "application -status of an unknown id: non-zero exit" test "$CODE" -ne 0

set +e
KILL=$(yarn_app -kill "$APP"); CODE=$?
set -e
echo "$KILL (exit $CODE)"
check "application -kill: kills and exits 0" test "$CODE" = 0
check "application -kill: Hadoop's message" has "$KILL" "Killing application $APP"
check "Tusk agrees it is killed" has "$(tusk job status "$APP" 2>&1)" "KILLED"
check "application -status after -kill: KILLED" has "$(yarn_app -status "$APP")" "State : KILLED"

if [ "$FAILED" = 0 ]; then
  echo "compat-yarn: OK (Hadoop 3.4.2 ApplicationCLI, NodeCLI and QueueCLI against Tusk)"
else
  echo "compat-yarn: FAILED" >&2; exit 1
fi

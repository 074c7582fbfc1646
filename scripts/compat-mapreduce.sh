#!/usr/bin/env bash
# Hadoop 3.4.2's own MapReduce, unmodified (hadoop-mapreduce-examples, its MRAppMaster and
# YarnChild tasks; jars from Maven Central), run by Hadoop's job client on Tusk's
# ResourceManager and NodeManagers and Tusk's DFS, configured only by the HADOOP_CONF_DIR
# that `tusk local up` writes plus where the Hadoop jars are for the containers:
#   - wordcount: its output equals the counts computed here from the same input;
#   - yarn logs: its containers' logs, aggregated to the DFS by the NodeManagers, read
#     back by Hadoop's LogsCLI (-applicationId, -containerId, -log_files,
#     -show_application_log_info);
#   - teragen / terasort / teravalidate (small): the sort validates;
#   - a job whose tasks exit 1 fails with Hadoop's diagnostics, and a job after it
#     still succeeds (the ResourceManager and NodeManagers stay healthy).
# Each check prints PASS or FAIL; the script exits non-zero when any failed.
# With TUSK_TESTBED=testbeds/NAME.toml (root) the cluster is that testbed's instead of
# `tusk local`'s: every node in its own network namespace behind its emulated link.
# Usage: [TUSK_TESTBED=…] scripts/compat-mapreduce.sh [path/to/tusk]
#   (needs Java and Maven; .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "compat-mapreduce: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
[ -x "$TUSK" ] || { echo "compat-mapreduce: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }
# Containers run `$JAVA_HOME/bin/java`, as on Hadoop's NodeManagers.
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

WORK=$(mktemp -d /tmp/tusk-compat-mapreduce.XXXXXX)
CLUSTER=$WORK/cluster
DOWN=(local down --dir "$CLUSTER")
cleanup() {
  if [ "${FAILED:-1}" != 0 ] && [ -d "$CLUSTER/logs" ]; then
    tail -n 30 "$CLUSTER"/logs/*.log >&2 || true
  fi
  "$TUSK" "${DOWN[@]}" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Hadoop's daemons' classpath holds the job client, the MRAppMaster, the examples and
# streaming.
CP_FILE=$(scripts/hadoop-classpath.sh)
source scripts/lib/hadoop-java.sh
EXAMPLES=$(tr ':' '\n' < "$CP_FILE" | grep '/hadoop-mapreduce-examples-3.4.2.jar$')
STREAMING=$(tr ':' '\n' < "$CP_FILE" | grep '/hadoop-streaming-3.4.2.jar$')

tusk() { TUSK_HOME=$WORK "$TUSK" "$@"; }
if [ -n "${TUSK_TESTBED:-}" ]; then
  DOWN=(testbed down --dir "$CLUSTER")
  # `tusk local` aggregates logs by default; a testbed, whose studies measure, only when asked.
  tusk testbed up -D yarn.log-aggregation-enable=true "$TUSK_TESTBED" --dir "$CLUSTER" 2> "$WORK/up.err" >/dev/null \
    || { cat "$WORK/up.err" >&2; exit 1; }
else
  DOWN=(local down --dir "$CLUSTER")
  tusk local up --dir "$CLUSTER" --datanodes 2 2> "$WORK/up.err" >/dev/null \
    || { cat "$WORK/up.err" >&2; exit 1; }
fi
HADOOP_JAVA_CONF_DIR=$(sed -n 's/^export HADOOP_CONF_DIR=//p' "$WORK/up.err")
[ -f "$HADOOP_JAVA_CONF_DIR/mapred-site.xml" ] || { echo "compat-mapreduce: no HADOOP_CONF_DIR line from tusk local up" >&2; exit 1; }
echo "compat-mapreduce: ${TUSK_TESTBED:-tusk local}, HADOOP_CONF_DIR=$HADOOP_JAVA_CONF_DIR"

mapreduce_job_opts "$CP_FILE"

FAILED=0
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1; shift
  if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; FAILED=1; fi
}

# ---------------------------------------------------------------- wordcount
for i in 1 2 3; do
  for _ in $(seq 200); do echo "the quick brown fox $i jumps over the lazy dog $((i * 7))"; done
done > "$WORK/words.txt"
tusk fs -mkdir -p input
tusk fs -put "$WORK/words.txt" input/words.txt
set +e
hadoop_jar "$CP_FILE" "$EXAMPLES" wordcount "${JOB_OPTS[@]}" input wc-out > "$WORK/wc.log" 2>&1; CODE=$?
set -e
tail -n 5 "$WORK/wc.log"
check "wordcount: the job succeeds" test "$CODE" = 0
tr -s ' ' '\n' < "$WORK/words.txt" | sort | uniq -c | awk '{print $2 "\t" $1}' | sort > "$WORK/wc.expected"
tusk fs -cat 'wc-out/part-r-*' 2>/dev/null | sort > "$WORK/wc.actual" || true
check "wordcount: output equals the counts of the input" cmp -s "$WORK/wc.expected" "$WORK/wc.actual"
check "wordcount: _SUCCESS written by Hadoop's committer" tusk fs -test -e wc-out/_SUCCESS

# ---------------------------------------------------------------- yarn logs
# The NodeManagers aggregate a finished application's container logs to the DFS
# (`tusk local` turns yarn.log-aggregation-enable on); Hadoop's LogsCLI reads them.
yarn_cli() { # yarn_cli CLASS ARGS...: one of Hadoop's yarn CLIs, stdout only
  local class=$1; shift
  hadoop_java "$CP_FILE" "org.apache.hadoop.yarn.client.cli.$class" "$@" 2>/dev/null
}
WC_APP=$(yarn_cli ApplicationCLI application -list -appStates FINISHED | grep -o 'application_[0-9]*_[0-9]*' | head -1) || true
AGGREGATED=0
for _ in $(seq 30); do
  if yarn_cli ApplicationCLI application -status "$WC_APP" | grep -q 'Log Aggregation Status : SUCCEEDED'; then
    AGGREGATED=1; break
  fi
  sleep 1
done
check "yarn application -status: wordcount's log aggregation SUCCEEDED" test "$AGGREGATED" = 1
yarn_cli LogsCLI -applicationId "$WC_APP" > "$WORK/logs.all" || true
# Each container's section: "Container: <id> on <node>", then its files' "LogType:<name>".
log_types() { # log_types FILE CONTAINER: the LogType names printed for CONTAINER
  awk -v c="$2" '/^Container: /{on = ($2 == c)} on && /^LogType:/{sub(/^LogType:/, ""); print}' "$1" | sort -u
}
CONTAINERS=$(sed -n 's/^Container: \(container_[0-9_e]*\) on .*/\1/p' "$WORK/logs.all" | sort -u)
AM_CONTAINER=$(grep '_01_000001$' <<< "$CONTAINERS" | head -1) || true
TASK_CONTAINER=$(grep -v '_01_000001$' <<< "$CONTAINERS" | head -1) || true
echo "yarn logs -applicationId $WC_APP: $(wc -l <<< "$CONTAINERS") containers; AM $AM_CONTAINER"
check "yarn logs -applicationId: the AM and the map and reduce task containers" \
  test "$(grep -c . <<< "$CONTAINERS")" -ge 3
check "yarn logs -applicationId: the AM container's syslog and stdout" \
  bash -c 'grep -qx syslog <<< "$1" && grep -qx stdout <<< "$1"' _ "$(log_types "$WORK/logs.all" "$AM_CONTAINER")"
check "yarn logs -applicationId: the AM's syslog is the MRAppMaster's" \
  grep -q "Created MRAppMaster for application appattempt_${WC_APP#application_}_000001" "$WORK/logs.all"
ALL_TASKS=1
for c in $(grep -v '_01_000001$' <<< "$CONTAINERS"); do
  types=$(log_types "$WORK/logs.all" "$c")
  grep -qx syslog <<< "$types" && grep -qx stdout <<< "$types" || ALL_TASKS=0
done
check "yarn logs -applicationId: every task container's syslog and stdout" test "$ALL_TASKS" = 1
yarn_cli LogsCLI -applicationId "$WC_APP" -containerId "$TASK_CONTAINER" > "$WORK/logs.one" || true
check "yarn logs -containerId: that container's logs only" \
  test "$(sed -n 's/^Container: \([^ ]*\) on .*/\1/p' "$WORK/logs.one" | sort -u)" = "$TASK_CONTAINER"
yarn_cli LogsCLI -applicationId "$WC_APP" -log_files syslog > "$WORK/logs.syslog" || true
check "yarn logs -log_files syslog: only syslog files, of every container" \
  test "$(sed -n 's/^LogType://p' "$WORK/logs.syslog" | sort -u)" = syslog \
  -a "$(grep -c '^Container: ' "$WORK/logs.syslog")" = "$(grep -c . <<< "$CONTAINERS")"
yarn_cli LogsCLI -applicationId "$WC_APP" -show_application_log_info > "$WORK/logs.info" || true
check "yarn logs -show_application_log_info: the application's containers" \
  bash -c 'grep -q "Application State: Completed." "$1" && grep -q "$2" "$1"' _ "$WORK/logs.info" "$AM_CONTAINER"
# -am finds the AM containers through the ResourceManager's REST `appattempts`.
yarn_cli LogsCLI -applicationId "$WC_APP" -am 1 > "$WORK/logs.am" || true
check "yarn logs -am 1: the first attempt's AM container's logs only" \
  test "$(sed -n 's/^Container: \([^ ]*\) on .*/\1/p' "$WORK/logs.am" | sort -u)" = "$AM_CONTAINER"

# ---------------------------------------------------------------- terasort
set +e
hadoop_jar "$CP_FILE" "$EXAMPLES" teragen "${JOB_OPTS[@]}" -Dmapreduce.job.maps=2 20000 tera-in > "$WORK/tg.log" 2>&1 \
  && hadoop_jar "$CP_FILE" "$EXAMPLES" terasort "${JOB_OPTS[@]}" -Dmapreduce.job.reduces=2 tera-in tera-out > "$WORK/ts.log" 2>&1 \
  && hadoop_jar "$CP_FILE" "$EXAMPLES" teravalidate "${JOB_OPTS[@]}" tera-out tera-report > "$WORK/tv.log" 2>&1
CODE=$?
set -e
tail -n 3 "$WORK"/t?.log
check "teragen, terasort, teravalidate: the jobs succeed" test "$CODE" = 0
REPORT=$(tusk fs -cat 'tera-report/part-r-*' 2>/dev/null || true)
echo "teravalidate: $REPORT"
check "teravalidate: a checksum and no error" bash -c 'grep -q "^checksum" <<< "$1" && ! grep -q "^error" <<< "$1"' _ "$REPORT"
ROWS_BYTES=$(tusk fs -du 'tera-out/part-r-*' | awk '{n += $1} END {print n}')
check "terasort: 20000 rows of 100 bytes out" test "$ROWS_BYTES" = 2000000

# ---------------------------------------------------------------- a failing task
set +e
hadoop_jar "$CP_FILE" "$STREAMING" "${JOB_OPTS[@]}" -Dmapreduce.map.maxattempts=2 \
  -input input -output fail-out -mapper 'sh -c "exit 1"' -reducer NONE > "$WORK/fail.log" 2>&1
CODE=$?
set -e
tail -n 5 "$WORK/fail.log"
check "a task that exits 1: the job fails" test "$CODE" != 0
check "a task that exits 1: the task's error reaches the client" grep -q "subprocess failed with code 1" "$WORK/fail.log"
FAILED_APP=$(hadoop_java "$CP_FILE" org.apache.hadoop.yarn.client.cli.ApplicationCLI application \
  -list -appStates FAILED 2>/dev/null | grep -o 'application_[0-9_]*' | head -1) || true
STATUS=$(hadoop_java "$CP_FILE" org.apache.hadoop.yarn.client.cli.ApplicationCLI application \
  -status "$FAILED_APP" 2>/dev/null) || true
echo "$STATUS" | grep -E 'State|Diagnostics' || true
check "a task that exits 1: the ResourceManager reports the job FAILED with the AM's diagnostics" \
  grep -q "Diagnostics : Task failed task_" <<< "$STATUS"
set +e
hadoop_jar "$CP_FILE" "$EXAMPLES" wordcount "${JOB_OPTS[@]}" input wc-again > "$WORK/wc2.log" 2>&1; CODE=$?
set -e
check "after the failed job a job still succeeds" test "$CODE" = 0

if [ "$FAILED" = 0 ]; then
  echo "compat-mapreduce: OK (Hadoop 3.4.2 MapReduce on Tusk's YARN and DFS, ${TUSK_TESTBED:-tusk local})"
else
  echo "compat-mapreduce: FAILED" >&2; exit 1
fi

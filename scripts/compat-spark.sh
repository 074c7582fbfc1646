#!/usr/bin/env bash
# Apache Spark 3.5.9 on Tusk's YARN, unmodified: Spark's own SparkSubmit, YARN client,
# ApplicationMaster and executors (jars from Maven Central, Spark's shaded Hadoop 3.3.4
# client) submit scripts/spark/SparkOnTusk.java to Tusk's ResourceManager, in client mode
# and in cluster mode, configured only by the HADOOP_CONF_DIR that `tusk local up`
# writes plus where Spark's jars are on the nodes (spark.yarn.jars=local:...). In each
# mode one application runs, and its results in Tusk's DFS are checked:
#   - a word count of a text file: its output equals the counts computed here;
#   - its tasks ran in executors in the application's own YARN containers;
#   - (client mode) the web UI filter the AM hands the driver has a valid proxy URL;
#   - Parquet written by Spark, read back, groupBy + count + sum: the numbers equal
#     those computed here.
# Then an application whose driver fails (cluster mode, a missing input): Spark's client
# fails with the driver's exception as the ResourceManager's diagnostics.
# Each check prints PASS or FAIL; the script exits non-zero when any failed.
# Usage: scripts/compat-spark.sh [path/to/tusk]   (needs Java 17 and Maven; .ci/run installs them)
# COMPAT_SPARK_KEEP=1 keeps its work directory (the cluster's and the containers' logs).
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "compat-spark: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
[ -x "$TUSK" ] || { echo "compat-spark: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }
# Containers run `$JAVA_HOME/bin/java`, as on Hadoop's NodeManagers.
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

WORK=$(mktemp -d /tmp/tusk-compat-spark.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() {
  if [ "${FAILED:-1}" != 0 ] && [ -d "$CLUSTER/logs" ]; then
    tail -n 30 "$CLUSTER"/logs/*.log >&2 || true
  fi
  "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true
  [ -n "${COMPAT_SPARK_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

source scripts/lib/maven-classpath.sh
source scripts/lib/hadoop-java.sh
CP_FILE=$(maven_classpath scripts/spark)
javac -nowarn -cp "$(cat "$CP_FILE")" -d "$WORK/classes" scripts/spark/SparkOnTusk.java
APP_JAR=$WORK/spark-on-tusk.jar
jar cf "$APP_JAR" -C "$WORK/classes" .

tusk() { TUSK_HOME=$WORK "$TUSK" "$@"; }
tusk local up --dir "$CLUSTER" --datanodes 2 2> "$WORK/up.err" >/dev/null \
  || { cat "$WORK/up.err" >&2; exit 1; }
HADOOP_JAVA_CONF_DIR=$(sed -n 's/^export HADOOP_CONF_DIR=//p' "$WORK/up.err")
[ -f "$HADOOP_JAVA_CONF_DIR/yarn-site.xml" ] || { echo "compat-spark: no HADOOP_CONF_DIR line from tusk local up" >&2; exit 1; }
# Spark ships the files of HADOOP_CONF_DIR to its ApplicationMaster and executors.
export HADOOP_CONF_DIR=$HADOOP_JAVA_CONF_DIR
# Spark binds its driver, AM and executors to the first non-loopback address when the
# host name resolves to 127.0.0.1; the cluster here lives on the loopback interface.
export SPARK_LOCAL_IP=127.0.0.1
echo "compat-spark: HADOOP_CONF_DIR=$HADOOP_CONF_DIR"

# What spark-submit's launcher adds to the driver's JVM on Java 17; Spark's YARN client
# adds the same to its AM's and executors' command lines itself.
HADOOP_JAVA_OPTS="-Xmx512m -Dlog4j2.configurationFile=$PWD/scripts/spark/log4j2.properties $(java -cp "$APP_JAR:$(cat "$CP_FILE")" SparkOnTusk module-options)"
# Spark's jars are on every node (one machine here): containers put them on their
# classpath as they are, only the application's jar and Spark's configuration are
# localized from the DFS.
SPARK_JARS=$(tr ':' '\n' < "$CP_FILE" | sed 's/^/local:/' | paste -sd, -)
spark_submit() { # spark_submit MODE [SPARK-SUBMIT OPTIONS...] -- APP ARGS...
  local mode=$1 options=(); shift
  while [ "$1" != -- ]; do options+=("$1"); shift; done; shift
  hadoop_java "$CP_FILE" org.apache.spark.deploy.SparkSubmit \
    --master yarn --deploy-mode "$mode" --class SparkOnTusk \
    --conf spark.yarn.jars="$SPARK_JARS" \
    --conf spark.executor.instances=2 --conf spark.executor.cores=1 \
    --conf spark.executor.memory=512m --conf spark.driver.memory=512m \
    --conf spark.yarn.am.memory=512m \
    --conf spark.yarn.appMasterEnv.SPARK_LOCAL_IP=$SPARK_LOCAL_IP \
    --conf spark.executorEnv.SPARK_LOCAL_IP=$SPARK_LOCAL_IP \
    --conf spark.yarn.report.interval=500 "${options[@]}" \
    "$APP_JAR" "$@"
}

FAILED=0
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1; shift
  if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; FAILED=1; fi
}

for i in 1 2 3; do
  for _ in $(seq 200); do echo "the quick brown fox $i jumps over the lazy dog $((i * 7))"; done
done > "$WORK/words.txt"
tr -s ' ' '\n' < "$WORK/words.txt" | sort | uniq -c | awk '{print $2 "\t" $1}' | sort > "$WORK/wc.expected"
tusk fs -mkdir -p input
tusk fs -put "$WORK/words.txt" input/words.txt
ROWS=100000
# key, count, sum(id) of ids 0..ROWS-1 grouped by id % 7
awk -v n=$ROWS 'BEGIN { for (i = 0; i < n; i++) { c[i % 7]++; s[i % 7] += i }
  for (k = 0; k < 7; k++) printf "%d\t%d\t%d\n", k, c[k], s[k] }' | sort > "$WORK/by-key.expected"

for MODE in client cluster; do
  OUT=spark-$MODE
  set +e
  spark_submit "$MODE" -- input/words.txt "$OUT" "$ROWS" > "$WORK/$MODE.log" 2>&1; CODE=$?
  set -e
  APP=$(grep -o 'application_[0-9]*_[0-9]*' "$WORK/$MODE.log" | head -1) || true
  echo "$MODE mode: $APP"
  grep -E 'Exception' "$WORK/$MODE.log" | head -n 5 || true
  check "$MODE mode: the application succeeds" test "$CODE" = 0
  if [ "$MODE" = client ]; then
    check "client mode: the AM hands the driver's web UI filter a valid proxy URL" \
      bash -c '! grep -q "AmIpFilter: .*does not appear to be a valid URL" "$1"' _ "$WORK/$MODE.log"
  fi
  if [ "$MODE" = cluster ]; then
    check "cluster mode: the ResourceManager's report says SUCCEEDED to Spark's client" \
      grep -q 'final status: SUCCEEDED' "$WORK/$MODE.log"
  fi
  tusk fs -cat "$OUT/counts/part-*" 2>/dev/null | sort > "$WORK/wc.$MODE" || true
  check "$MODE mode: word count equals the counts of the input" cmp -s "$WORK/wc.expected" "$WORK/wc.$MODE"
  CONTAINERS=$(tusk fs -cat "$OUT/containers/part-*" 2>/dev/null) || true
  echo "$MODE mode: tasks ran in" $CONTAINERS
  check "$MODE mode: tasks ran in executors in the application's YARN containers" \
    bash -c '[ -n "$2" ] && ! grep -qv "^container_\(e[0-9]*_\)\?${1#application_}_[0-9]*_[0-9]*$" <<< "$2" \
      && ! grep -q "_000001$" <<< "$2"' _ "$APP" "$CONTAINERS"
  check "$MODE mode: Parquet written by Spark in the DFS" \
    bash -c 'TUSK_HOME=$1 "$2" fs -ls "$3/parquet" | grep -q "\.parquet$"' _ "$WORK" "$TUSK" "$OUT"
  tusk fs -cat "$OUT/by-key/part-*" 2>/dev/null | sort > "$WORK/by-key.$MODE" || true
  check "$MODE mode: Parquet groupBy(key) count and sum equal those of the rows written" \
    cmp -s "$WORK/by-key.expected" "$WORK/by-key.$MODE"
done

set +e
# One attempt, and no wait for executors before the driver fails.
spark_submit cluster --conf spark.yarn.maxAppAttempts=1 --conf spark.executor.instances=1 \
  --conf spark.scheduler.minRegisteredResourcesRatio=0 -- no-such-input spark-failed "$ROWS" \
  > "$WORK/failed.log" 2>&1; CODE=$?
set -e
grep -E '^Caused by: .*Input path does not exist' "$WORK/failed.log" | head -n 1 || true
check "a failing driver: the application fails" test "$CODE" != 0
check "a failing driver: its exception reaches Spark's client as YARN's diagnostics" \
  grep -q 'diagnostics: User class threw exception: .*' "$WORK/failed.log"
check "a failing driver: the diagnostics name the missing input" \
  grep -q 'Input path does not exist: .*/no-such-input' "$WORK/failed.log"

if [ "$FAILED" = 0 ]; then
  echo "compat-spark: OK (Spark 3.5.9 on Tusk's YARN and DFS, client and cluster mode)"
else
  for MODE in client cluster failed; do
    [ -f "$WORK/$MODE.log" ] && { echo "--- $MODE mode's log:"; grep -v ' INFO ' "$WORK/$MODE.log" | tail -n 40; } >&2
  done
  echo "compat-spark: FAILED" >&2; exit 1
fi

#!/usr/bin/env bash
# NameNode high availability end to end with processes: `tusk local up --ha` (three
# NameNodes sharing their edits through the replicated log, DataNodes reporting to all),
# Hadoop 3.4.2's own FsShell with ConfiguredFailoverProxyProvider (DIR/conf) and
# hdfs-native addressing hdfs://ns1. The active NameNode is killed with kill -9 twice
# over (restarting it in between): every file acknowledged before a kill is there
# afterwards with its bytes, writes go on through the new active, and the killed
# NameNode rejoins as a standby. A third kill is followed by FsShell with Hadoop's
# RequestHedgingProxyProvider, and ObserverReadProxyProvider reads; then Hadoop's own
# `hdfs haadmin` reads the states and hands the active role over.
# Usage: scripts/compat-hadoop-ha.sh [path/to/tusk]   (needs Java and Maven; .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "compat-hadoop-ha: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
[ -x "$TUSK" ] || { echo "compat-hadoop-ha: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/tusk-compat-ha.XXXXXX)
CLUSTER=$WORK/cluster
export TUSK_HOME=$WORK
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "compat-hadoop-ha: FAIL: $*" >&2; tail -n 20 "$CLUSTER"/logs/namenode*.log >&2 || true; exit 1; }

CP_FILE=scripts/compat-hadoop/classpath.txt
if [ ! -s "$CP_FILE" ] || [ scripts/compat-hadoop/pom.xml -nt "$CP_FILE" ]; then
  echo "compat-hadoop-ha: resolving Hadoop 3.4.2 FsShell from Maven Central..."
  mvn -q -f scripts/compat-hadoop/pom.xml dependency:build-classpath -Dmdep.outputFile="$PWD/$CP_FILE" >/dev/null
fi
python3 -c 'import hdfs_native' 2>/dev/null || python3 -m pip install -q hdfs-native 2>/dev/null \
  || python3 -m pip install -q --break-system-packages hdfs-native

URI=$("$TUSK" local up --ha --no-yarn --dir "$CLUSTER" --datanodes 3 -D dfs.permissions.enabled=false | tail -1)
[ "$URI" = "hdfs://ns1" ] || fail "local up --ha printed $URI"
source scripts/lib/hadoop-java.sh
HADOOP_JAVA_CONF_DIR=$CLUSTER/conf
fsshell() { hadoop_java "$CP_FILE" org.apache.hadoop.fs.FsShell "$@"; }

# The one active NameNode: its id (nnI) from haadmin, its daemon name namenodeI.
active_id() {
  local states
  states=$("$TUSK" haadmin -getAllServiceState)
  [ "$(grep -c ' active$' <<<"$states")" = 1 ] || return 1
  for i in 1 2 3; do
    local addr
    addr=$(grep "^dfs.namenode.rpc-address.ns1.nn$i=" "$CLUSTER/nameservice.conf" | cut -d= -f2)
    grep -q "^$addr .* active$" <<<"$states" && { echo "$i"; return 0; }
  done
  return 1
}
wait_active() {
  for _ in $(seq 300); do active_id >/dev/null 2>&1 && return 0; sleep 0.1; done
  "$TUSK" haadmin -getAllServiceState >&2 || true
  fail "no single active NameNode"
}
pid_of() { grep "^namenode$1 " "$CLUSTER/pids" | cut -d' ' -f2; }

head -c 3000000 /dev/urandom > "$WORK/local.bin"
wait_active
fsshell -mkdir -p /ha
fsshell -put "$WORK/local.bin" /ha/before.bin

for round in 1 2; do
  A=$(active_id)
  echo "compat-hadoop-ha: round $round: kill -9 of the active NameNode nn$A"
  kill -9 "$(pid_of "$A")"
  START=$(date +%s.%N)
  fsshell -put "$WORK/local.bin" "/ha/after$round.bin" || fail "Hadoop's FsShell could not write after the kill"
  echo "compat-hadoop-ha: round $round: a write through the new active took $(echo "$(date +%s.%N) - $START" | bc) s (JVM start included)"
  B=$(active_id) || fail "no active after the kill"
  [ "$B" != "$A" ] || fail "the killed NameNode is still active"
  for f in before after1 after$round; do
    fsshell -cat "/ha/$f.bin" | cmp -s - "$WORK/local.bin" || fail "/ha/$f.bin differs after round $round"
  done
  # The killed NameNode rejoins as a standby and catches up.
  "$TUSK" local start --dir "$CLUSTER" "namenode$A" >/dev/null
  for _ in $(seq 300); do
    [ "$("$TUSK" haadmin -getServiceState "nn$A" 2>/dev/null)" = standby ] && break
    sleep 0.1
  done
  [ "$("$TUSK" haadmin -getServiceState "nn$A")" = standby ] || fail "nn$A did not rejoin as standby"
done

# Hadoop's other failover proxy providers, unmodified: RequestHedgingProxyProvider (asks
# every NameNode at once) across one more kill -9 of the active, and
# ObserverReadProxyProvider (no observers here: its reads go to the active).
A=$(active_id)
echo "compat-hadoop-ha: kill -9 of nn$A, then RequestHedgingProxyProvider"
kill -9 "$(pid_of "$A")"
with_provider() { fsshell -D "dfs.client.failover.proxy.provider.ns1=org.apache.hadoop.hdfs.server.namenode.ha.$1" "${@:2}"; }
with_provider RequestHedgingProxyProvider -put "$WORK/local.bin" /ha/hedged.bin \
  || fail "Hadoop's FsShell with RequestHedgingProxyProvider could not write after the kill"
with_provider RequestHedgingProxyProvider -cat /ha/hedged.bin | cmp -s - "$WORK/local.bin" \
  || fail "/ha/hedged.bin differs"
with_provider ObserverReadProxyProvider -cat /ha/after2.bin | cmp -s - "$WORK/local.bin" \
  || fail "FsShell with ObserverReadProxyProvider read other bytes"
"$TUSK" local start --dir "$CLUSTER" "namenode$A" >/dev/null

# Hadoop's own `hdfs haadmin` (DFSHAAdmin, HAServiceProtocol): the states, a health
# check, a manual transition refused without --forcemanual (failover is automatic), and
# a forced transitionToStandby of the active handing the role over.
haadmin() { hadoop_java "$CP_FILE" org.apache.hadoop.hdfs.tools.DFSHAAdmin "$@"; }
wait_active
[ "$(haadmin -getAllServiceState 2>/dev/null | grep -c ' active')" = 1 ] || fail "hdfs haadmin -getAllServiceState: not one active"
A=$(active_id)
[ "$(haadmin -getServiceState "nn$A" 2>/dev/null)" = active ] || fail "hdfs haadmin -getServiceState nn$A"
haadmin -checkHealth "nn$A" || fail "hdfs haadmin -checkHealth nn$A"
if haadmin -transitionToStandby "nn$A" >/dev/null 2>&1; then fail "a manual transition without --forcemanual went through"; fi
echo Y | haadmin -transitionToStandby --forcemanual "nn$A" >/dev/null 2>&1 || fail "hdfs haadmin -transitionToStandby --forcemanual nn$A"
wait_active
B=$(active_id)
[ "$B" != "$A" ] || fail "nn$A still active after transitionToStandby"
[ "$(haadmin -getServiceState "nn$A" 2>/dev/null)" = standby ] || fail "nn$A not standby after transitionToStandby"
echo "compat-hadoop-ha: hdfs haadmin -transitionToStandby --forcemanual nn$A: nn$B active"
# The same through `tusk haadmin`.
"$TUSK" haadmin -checkHealth "nn$B" || fail "tusk haadmin -checkHealth nn$B"
if "$TUSK" haadmin -transitionToStandby "nn$B" 2>/dev/null; then fail "tusk haadmin: a transition without --forcemanual went through"; fi
"$TUSK" haadmin -transitionToStandby --forcemanual "nn$B" || fail "tusk haadmin -transitionToStandby --forcemanual nn$B"
wait_active
[ "$(active_id)" != "$B" ] || fail "nn$B still active after tusk haadmin -transitionToStandby"

# Tusk's own shell and hdfs-native through the nameservice.
"$TUSK" fs -cat /ha/after2.bin | cmp -s - "$WORK/local.bin" || fail "tusk fs -cat through hdfs://ns1"
HADOOP_CONF_DIR=$CLUSTER/conf timeout 120 python3 - <<'PY' || fail "hdfs-native through hdfs://ns1"
from hdfs_native import Client
client = Client("hdfs://ns1")
data = bytes(range(256)) * 4096
with client.create("/ha/native.bin") as w:
    w.write(data)
with client.read("/ha/native.bin") as r:
    assert r.read() == data, "hdfs-native read back other bytes"
names = sorted(s.path for s in client.list_status("/ha"))
assert names == ["/ha/after1.bin", "/ha/after2.bin", "/ha/before.bin", "/ha/hedged.bin", "/ha/native.bin"], names
PY
echo "compat-hadoop-ha: OK (three kill -9 failovers and a handover, nothing lost; Hadoop's FsShell with ConfiguredFailover-, RequestHedging- and ObserverReadProxyProvider, Hadoop's haadmin, tusk fs and hdfs-native through hdfs://ns1)"

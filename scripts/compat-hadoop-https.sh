#!/usr/bin/env bash
# Hadoop 3.4.2's own FsShell (Java, from Maven Central) against a Tusk cluster whose web
# servers serve HTTPS only (`tusk local up --https`: dfs.http.policy=HTTPS_ONLY, a
# self-signed certificate for localhost, ssl-server.xml for the daemons and
# ssl-client.xml with a PKCS#12 truststore for Java, all in DIR/conf): over
# swebhdfs:// it writes a 3 MB file, lists it and reads it back byte-identical with
# -cat and -get (both through the NameNode's redirect to a DataNode's HTTPS port).
# curl with the certificate lists over HTTPS; plain HTTP to the HTTPS port gets no
# answer; the NameNode and DataNodes listen on no HTTP port.
# Usage: scripts/compat-hadoop-https.sh [path/to/tusk]   (Java and Maven: .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/debug/tusk}
[ -x "$TUSK" ] || { echo "compat-hadoop-https: no tusk binary at $TUSK" >&2; exit 1; }
for tool in java mvn curl ss; do
  command -v "$tool" >/dev/null || { echo "compat-hadoop-https: $tool is required" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/tusk-compat-https.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
FAILED=0
pass() { echo "compat-hadoop-https: PASS: $*"; }
fail() { echo "compat-hadoop-https: FAIL: $*" >&2; FAILED=1; }
# check NAME COMMAND...: PASS or FAIL by the command's status.
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

source scripts/lib/maven-classpath.sh
source scripts/lib/hadoop-java.sh
CP_FILE=$(maven_classpath scripts/compat-hadoop)

TUSK_HOME=$WORK "$TUSK" local up --https --no-yarn --format --dir "$CLUSTER" --datanodes 2 \
  2> "$WORK/up.err" >/dev/null || { cat "$WORK/up.err" >&2; echo "compat-hadoop-https: FAIL: local up --https" >&2; exit 1; }
CONF=$CLUSTER/conf
PORT=$(cut -d: -f2 "$CLUSTER/namenode.http-addr")
SWEBHDFS=swebhdfs://localhost:$PORT
grep -q "dfs.namenode.https-address 127.0.0.1:$PORT" "$WORK/up.err" || fail "local up prints the HTTPS address"

# fsshell ARGS...: Hadoop's FsShell with the cluster's client configuration (its
# ssl-client.xml names the truststore swebhdfs:// checks the certificate against).
fsshell() { HADOOP_JAVA_CONF_DIR=$CONF hadoop_java "$CP_FILE" org.apache.hadoop.fs.FsShell "$@"; }

ME=$(id -un)
head -c 3000000 /dev/urandom > "$WORK/local.bin"
check "-mkdir over swebhdfs://" fsshell -mkdir -p "$SWEBHDFS/user/$ME/https"
check "-put 3 MB over swebhdfs://" fsshell -put "$WORK/local.bin" "$SWEBHDFS/user/$ME/https/data.bin"
LS=$(fsshell -ls "$SWEBHDFS/user/$ME/https" 2> "$WORK/ls.err" || true)
echo "$LS"
check "-ls over swebhdfs://" grep -Eq "^-rw-r--r-- +3 $ME .* 3000000 .* $SWEBHDFS/user/$ME/https/data.bin$" <<< "$LS"
fsshell -cat "$SWEBHDFS/user/$ME/https/data.bin" > "$WORK/cat.bin" 2> "$WORK/cat.err" || cat "$WORK/cat.err" >&2
check "-cat over swebhdfs:// byte-identical" cmp -s "$WORK/local.bin" "$WORK/cat.bin"
fsshell -get "$SWEBHDFS/user/$ME/https/data.bin" "$WORK/get.bin" 2> "$WORK/get.err" || cat "$WORK/get.err" >&2
check "-get over swebhdfs:// byte-identical" cmp -s "$WORK/local.bin" "$WORK/get.bin"
# What Hadoop wrote over HTTPS is in the DFS: Tusk's own client reads it over RPC.
"$TUSK" --conf "$CONF" fs -cat "/user/$ME/https/data.bin" > "$WORK/rpc.bin" 2> "$WORK/rpc.err" || cat "$WORK/rpc.err" >&2
check "tusk fs -cat (RPC) of the swebhdfs:// write" cmp -s "$WORK/local.bin" "$WORK/rpc.bin"

# The redirect a read gets names a DataNode's HTTPS port with https://.
LOCATION=$(curl -sS --cacert "$CONF/tusk-ca.pem" -o /dev/null -w '%{redirect_url}' \
  "https://localhost:$PORT/webhdfs/v1/user/$ME/https/data.bin?op=OPEN&user.name=$ME" || true)
DN_HTTPS=$(for f in "$CLUSTER"/datanode*.http-addr; do printf '%s ' "$(cat "$f")"; done)
check "OPEN redirects to https://<a DataNode's HTTPS address> ($LOCATION)" \
  bash -c '[[ "$1" =~ ^https://([0-9.]+:[0-9]+)/webhdfs/v1/ ]] && [[ " $2 " == *" ${BASH_REMATCH[1]} "* ]]' _ "$LOCATION" "$DN_HTTPS"

check "curl --cacert LISTSTATUS over HTTPS" bash -c \
  'curl -sSf --cacert "$1" "https://localhost:$2/webhdfs/v1/user/$3/https?op=LISTSTATUS&user.name=$3" | grep -q "\"pathSuffix\":\"data.bin\""' \
  _ "$CONF/tusk-ca.pem" "$PORT" "$ME"
check "curl without the certificate refuses the server" bash -c \
  '! curl -sS -o /dev/null "https://localhost:$1/webhdfs/v1/?op=LISTSTATUS" 2>/dev/null' _ "$PORT"
check "plain HTTP to the HTTPS port gets no HTTP answer" bash -c \
  '! curl -sS -o /dev/null --max-time 10 "http://localhost:$1/webhdfs/v1/?op=LISTSTATUS" 2>/dev/null' _ "$PORT"

# HTTPS_ONLY: each daemon listens on its RPC/data/IPC ports and its HTTPS port only;
# no HTTP port (Hadoop's default 9870/9864 or a picked one).
listening() { ss -Hltnp | grep -F "pid=$1," | awk '{print $4}' | sed 's/.*://' | sort -n | tr '\n' ' '; }
NN_PID=$(awk '$1 == "namenode" {print $2}' "$CLUSTER/pids")
NN_RPC=$(cut -d: -f2 "$CLUSTER/namenode.addr")
NN_PORTS=$(listening "$NN_PID")
EXPECTED=$(printf '%s\n' "$NN_RPC" "$PORT" | sort -n | tr '\n' ' ')
check "the NameNode listens on RPC $NN_RPC and HTTPS $PORT only ($NN_PORTS)" test "$NN_PORTS" = "$EXPECTED"
check "the NameNode log says no HTTP" grep -q "HTTP on nothing, HTTPS on 127.0.0.1:$PORT" "$CLUSTER/logs/namenode.log"
for i in 0 1; do
  check "DataNode $i serves no HTTP" grep -q "HTTP on nothing, HTTPS on $(cat "$CLUSTER/datanode$i.http-addr")" "$CLUSTER/logs/datanode$i.log"
done

if [ "$FAILED" -ne 0 ]; then
  echo "compat-hadoop-https: FAILED" >&2
  exit 1
fi
echo "compat-hadoop-https: OK"

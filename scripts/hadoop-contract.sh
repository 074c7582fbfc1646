#!/usr/bin/env bash
# Apache Hadoop 3.4.2's own FileSystem contract tests (the AbstractContract*Test classes of
# hadoop-common's test-jar, bound as HDFS binds them in its TestHDFSContract* classes), run
# unchanged through Hadoop's Java client against a Tusk local cluster: once with the
# client's default block size, once with 1 KiB blocks as HDFS's own test cluster uses.
# Usage: scripts/hadoop-contract.sh [path/to/tusk]   (needs Java and Maven; .ci/run installs them)
# CONTRACT_FS=hdfs://HOST:PORT runs both passes against that file system instead of
# starting Tusk (e.g. real HDFS from ../shared/anchors/hadoop/standalone-hdfs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "hadoop-contract: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
[ -n "${CONTRACT_FS:-}" ] || [ -x "$TUSK" ] || { echo "hadoop-contract: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/tusk-contract.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() { [ -n "${CONTRACT_FS:-}" ] || "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

SRC=scripts/hadoop-contract
CP_FILE=$SRC/classpath.txt
if [ ! -s "$CP_FILE" ] || [ $SRC/pom.xml -nt "$CP_FILE" ]; then
  echo "hadoop-contract: resolving Hadoop 3.4.2's contract tests from Maven Central..."
  mvn -q -f $SRC/pom.xml dependency:build-classpath -Dmdep.outputFile="$PWD/$CP_FILE.tmp" >/dev/null
  mv "$CP_FILE.tmp" "$CP_FILE"
fi
CP=$(cat "$CP_FILE")
javac -nowarn -cp "$CP" -d "$WORK/classes" $SRC/*.java

if [ -n "${CONTRACT_FS:-}" ]; then
  URI=$CONTRACT_FS
else
  # HDFS's test cluster takes 1 KiB blocks only because it lowers the NameNode's minimum.
  URI=$(TUSK_HOME=$WORK "$TUSK" local up --dir "$CLUSTER" --datanodes 3 --no-yarn \
    -D dfs.namenode.fs-limits.min-block-size=0 | tail -1)
fi
echo "hadoop-contract: testing $URI"

# pass NAME [hdfs-site properties as name=value...]: the whole suite in one JVM, with a
# core-site.xml naming the cluster and an hdfs-site.xml holding the client's settings.
pass() {
  local name=$1; shift
  local conf=$WORK/conf-$name kv
  mkdir -p "$conf"
  cat > "$conf/core-site.xml" <<XML
<configuration>
  <property><name>fs.defaultFS</name><value>$URI</value></property>
  <property><name>fs.contract.test.fs.hdfs</name><value>$URI</value></property>
</configuration>
XML
  { echo '<configuration>'
    for kv in "$@"; do echo "  <property><name>${kv%%=*}</name><value>${kv#*=}</value></property>"; done
    echo '</configuration>'; } > "$conf/hdfs-site.xml"
  java -Djava.net.preferIPv4Stack=true -cp "$conf:$SRC:$WORK/classes:$CP" RunContractTests "$name"
}

START=$SECONDS
status=0
pass default-blocks || status=1
# HDFS's own contract tests run with 1 KiB blocks (HDFSContract.BLOCK_SIZE) and 512-byte checksums.
pass 1k-blocks dfs.blocksize=1024 dfs.bytes-per-checksum=512 || status=1
echo "hadoop-contract: both passes in $((SECONDS - START)) s"
exit $status

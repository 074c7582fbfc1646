#!/usr/bin/env bash
# Hadoop 3.4.2's own FsShell (Java, jars from Maven Central) against a Tusk local cluster:
# -mkdir, -put, -ls, -cat, -mv, -get, -rm must work and give the expected output.
# Usage: scripts/compat-hadoop.sh [path/to/tusk]   (needs Java and Maven; .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/release/tusk}
[ -x "$TUSK" ] || TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "compat-hadoop: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
[ -x "$TUSK" ] || { echo "compat-hadoop: no tusk binary at $TUSK (cargo build first)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/tusk-compat.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

CP_FILE=scripts/compat-hadoop/classpath.txt
if [ ! -s "$CP_FILE" ] || [ scripts/compat-hadoop/pom.xml -nt "$CP_FILE" ]; then
  echo "compat-hadoop: resolving Hadoop 3.4.2 FsShell from Maven Central..."
  mvn -q -f scripts/compat-hadoop/pom.xml dependency:build-classpath -Dmdep.outputFile="$PWD/$CP_FILE" >/dev/null
fi
mkdir -p "$WORK/conf"
for f in core-site.xml hdfs-site.xml; do echo '<configuration></configuration>' > "$WORK/conf/$f"; done

URI=$(TUSK_HOME=$WORK "$TUSK" local up --dir "$CLUSTER" --datanodes 3 -D dfs.permissions.enabled=false | tail -1)
echo "compat-hadoop: Tusk at $URI"
fsshell() {
  java -Djava.net.preferIPv4Stack=true -cp "$WORK/conf:$(cat "$CP_FILE")" \
    -Dlog4j.configuration=none org.apache.hadoop.fs.FsShell -fs "$URI" "$@" 2> >(grep -v -e '^log4j' -e 'WARN util.NativeCodeLoader' >&2)
}
fail() { echo "compat-hadoop: FAIL: $*" >&2; exit 1; }

head -c 3000000 /dev/urandom > "$WORK/local.bin"
echo "hello from hadoop fsshell" > "$WORK/hello.txt"

fsshell -mkdir -p /compat/dir
fsshell -put "$WORK/local.bin" /compat/dir/data.bin
fsshell -put "$WORK/hello.txt" /compat/hello.txt
LS=$(fsshell -ls /compat/dir)
echo "$LS"
echo "$LS" | grep -q "Found 1 items" || fail "-ls header"
echo "$LS" | grep -Eq '^-rw-r--r-- +3 .* 3000000 .* /compat/dir/data.bin$' || fail "-ls line"
[ "$(fsshell -cat /compat/hello.txt)" = "hello from hadoop fsshell" ] || fail "-cat"
fsshell -mv /compat/dir/data.bin /compat/moved.bin
fsshell -get /compat/moved.bin "$WORK/back.bin"
cmp "$WORK/local.bin" "$WORK/back.bin" || fail "-get content differs"
fsshell -test -e /compat/dir/data.bin && fail "-mv left the source"
fsshell -rm /compat/moved.bin | grep -q "Deleted /compat/moved.bin" || fail "-rm"
fsshell -test -e /compat/moved.bin && fail "-rm left the file"
# Tusk's own shell sees what Hadoop's wrote.
[ "$("$TUSK" fs -fs "$URI" -cat /compat/hello.txt)" = "hello from hadoop fsshell" ] || fail "tusk fs -cat of a Hadoop-written file"
# --- nsadmin: Hadoop's DFSAdmin -report and -safemode, FsShell -rm into the trash
dfsadmin() {
  java -Djava.net.preferIPv4Stack=true -cp "$WORK/conf:$(cat "$CP_FILE")" \
    -Dlog4j.configuration=none org.apache.hadoop.hdfs.tools.DFSAdmin -fs "$URI" "$@" 2> >(grep -v -e '^log4j' -e 'WARN util.NativeCodeLoader' >&2)
}
REPORT=$(dfsadmin -report)
echo "$REPORT" | head -20
echo "$REPORT" | grep -Eq '^Configured Capacity: [1-9][0-9]* \(' || fail "dfsadmin -report capacity"
echo "$REPORT" | grep -q "^Replicated Blocks:" || fail "dfsadmin -report block statistics"
echo "$REPORT" | grep -q "Missing blocks: 0" || fail "dfsadmin -report missing blocks"
echo "$REPORT" | grep -q "^Live datanodes (3):" || fail "dfsadmin -report live datanodes"
[ "$(echo "$REPORT" | grep -c '^Decommission Status : Normal')" = 3 ] || fail "dfsadmin -report node states"
[ "$(dfsadmin -safemode get)" = "Safe mode is OFF" ] || fail "dfsadmin -safemode get"
[ "$(dfsadmin -safemode enter)" = "Safe mode is ON" ] || fail "dfsadmin -safemode enter"
REFUSED=$(fsshell -mkdir /compat/in-safe-mode 2>&1 || true)
echo "$REFUSED" | grep -q "Cannot create directory /compat/in-safe-mode. Name node is in safe mode." || fail "a write in safe mode: $REFUSED"
fsshell -test -e /compat/in-safe-mode && fail "a write in safe mode was done"
[ "$("$TUSK" dfsadmin -fs "$URI" -safemode get)" = "Safe mode is ON" ] || fail "tusk dfsadmin -safemode get"
[ "$(dfsadmin -safemode leave)" = "Safe mode is OFF" ] || fail "dfsadmin -safemode leave"
[ "$(dfsadmin -safemode wait)" = "Safe mode is OFF" ] || fail "dfsadmin -safemode wait"
fsshell -mkdir /compat/after-safe-mode || fail "a write after safe mode"
[ "$(dfsadmin -refreshNodes)" = "Refresh nodes successful" ] || fail "dfsadmin -refreshNodes"
dfsadmin -listOpenFiles | grep -q "^Client Host" || fail "dfsadmin -listOpenFiles"
# A second cluster whose NameNode turns trash on: Hadoop's FsShell must move to trash.
cleanup() { for c in "$CLUSTER" "$WORK/trash-cluster"; do "$TUSK" local down --dir "$c" >/dev/null 2>&1 || true; done; rm -rf "$WORK"; }
TRASH_URI=$(TUSK_HOME=$WORK "$TUSK" local up --dir "$WORK/trash-cluster" --datanodes 1 --no-yarn \
  -D dfs.permissions.enabled=false -D dfs.replication=1 -D fs.trash.interval=60 | tail -1)
TRASH=/user/$(id -un)/.Trash/Current
URI=$TRASH_URI fsshell -put "$WORK/hello.txt" /kept.txt
URI=$TRASH_URI fsshell -rm /kept.txt
URI=$TRASH_URI fsshell -test -e /kept.txt && fail "-rm with trash on left the file"
[ "$(URI=$TRASH_URI fsshell -cat "$TRASH/kept.txt")" = "hello from hadoop fsshell" ] || fail "-rm did not move to $TRASH"
URI=$TRASH_URI fsshell -put "$WORK/hello.txt" /gone.txt
URI=$TRASH_URI fsshell -rm -skipTrash /gone.txt | grep -q "Deleted /gone.txt" || fail "-rm -skipTrash"
URI=$TRASH_URI fsshell -test -e "$TRASH/gone.txt" && fail "-rm -skipTrash moved to trash"
"$TUSK" fs -fs "$TRASH_URI" -put "$WORK/hello.txt" /tusk.txt
"$TUSK" fs -fs "$TRASH_URI" -rm /tusk.txt | grep -q "^Moved: '.*/tusk.txt' to trash at: .*$TRASH/tusk.txt" || fail "tusk fs -rm to trash"
[ "$(URI=$TRASH_URI fsshell -cat "$TRASH/tusk.txt")" = "hello from hadoop fsshell" ] || fail "tusk fs -rm trash content"
URI=$TRASH_URI fsshell -expunge
URI=$TRASH_URI fsshell -test -e "$TRASH" && fail "-expunge left Current"
URI=$TRASH_URI fsshell -ls "$(dirname "$TRASH")" | grep -Eq "$(dirname "$TRASH")/[0-9]{12}\$" || fail "-expunge made no checkpoint"
URI=$TRASH_URI fsshell -expunge -immediate
[ -z "$(URI=$TRASH_URI fsshell -ls "$(dirname "$TRASH")")" ] || fail "-expunge -immediate left checkpoints"
"$TUSK" local down --dir "$WORK/trash-cluster" >/dev/null
echo "compat-hadoop: OK (Hadoop FsShell -mkdir -put -ls -cat -mv -get -test -rm against Tusk; DFSAdmin -report -safemode -refreshNodes -listOpenFiles; -rm into the trash, -expunge)"

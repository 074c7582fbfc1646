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
if [ ! -s "$CP_FILE" ]; then
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
# --- snapshots: Hadoop's -createSnapshot/-renameSnapshot/-deleteSnapshot, -ls of .snapshot, -cat of a deleted file through its snapshot
"$TUSK" dfsadmin -fs "$URI" -allowSnapshot /compat | grep -q "Allowing snapshot on /compat succeeded" || fail "dfsadmin -allowSnapshot"
fsshell -createSnapshot /compat s1 | grep -q "^Created snapshot /compat/.snapshot/s1$" || fail "-createSnapshot"
fsshell -rm /compat/hello.txt >/dev/null
fsshell -test -e /compat/hello.txt && fail "-rm left the snapshotted file"
fsshell -ls /compat/.snapshot | grep -Eq '^d.* /compat/.snapshot/s1$' || fail "-ls DIR/.snapshot"
fsshell -ls /compat/.snapshot/s1 | grep -Eq '^-rw-r--r-- +3 .* 26 .* /compat/.snapshot/s1/hello.txt$' || fail "-ls DIR/.snapshot/NAME"
[ "$(fsshell -cat /compat/.snapshot/s1/hello.txt)" = "hello from hadoop fsshell" ] || fail "-cat of a deleted file through its snapshot"
[ "$(fsshell -du -s /compat | tr -s ' ')" = "26 78 /compat" ] || fail "-du counts what only the snapshot holds"
[ "$(fsshell -du -s -x /compat | tr -s ' ')" = "0 0 /compat" ] || fail "-du -x leaves the snapshot out"
PUT=$(fsshell -put "$WORK/hello.txt" /compat/.snapshot/s1/again.txt 2>&1 || true)
[ "$PUT" = "put: Modification on a read-only snapshot is disallowed" ] || fail "-put into a snapshot is refused: $PUT"
fsshell -renameSnapshot /compat s1 s2
"$TUSK" -D fs.defaultFS="$URI" lsSnapshottableDir | grep -Eq '^drwxr-xr-x .* 1 65536 /compat$' || fail "tusk lsSnapshottableDir"
DIFF=$("$TUSK" -D fs.defaultFS="$URI" snapshotDiff /compat s2 .)
[ "$DIFF" = "$(printf 'Difference between snapshot s2 and current directory under directory /compat:\nM\t.\n-\t./hello.txt')" ] || fail "tusk snapshotDiff: $DIFF"
fsshell -deleteSnapshot /compat s2
[ -z "$(fsshell -ls /compat/.snapshot)" ] || fail "-deleteSnapshot left the snapshot"
"$TUSK" dfsadmin -fs "$URI" -disallowSnapshot /compat | grep -q "Disallowing snapshot on /compat succeeded" || fail "dfsadmin -disallowSnapshot"
echo "compat-hadoop: OK (Hadoop FsShell -mkdir -put -ls -cat -mv -get -test -rm, snapshots against Tusk)"

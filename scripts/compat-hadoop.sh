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
# --- append: -appendToFile (partial last block, new file, stdin, multi-chunk) and -truncate -w
printf 'first part\n' > "$WORK/a1.txt"
printf 'second part\n' > "$WORK/a2.txt"
fsshell -put "$WORK/a1.txt" /compat/append.txt
fsshell -appendToFile "$WORK/a2.txt" /compat/append.txt
[ "$(fsshell -cat /compat/append.txt)" = "$(cat "$WORK/a1.txt" "$WORK/a2.txt")" ] || fail "-appendToFile to a partial block"
printf 'from stdin\n' | fsshell -appendToFile - /compat/append.txt
[ "$(fsshell -cat /compat/append.txt | tail -1)" = "from stdin" ] || fail "-appendToFile from stdin"
fsshell -appendToFile "$WORK/a1.txt" "$WORK/a2.txt" /compat/append-new.txt
[ "$(fsshell -cat /compat/append-new.txt)" = "$(cat "$WORK/a1.txt" "$WORK/a2.txt")" ] || fail "-appendToFile creating the file"
head -c 1000001 /dev/urandom > "$WORK/part1.bin"
head -c 1500003 /dev/urandom > "$WORK/part2.bin"
fsshell -put "$WORK/part1.bin" /compat/appended.bin
fsshell -appendToFile "$WORK/part2.bin" /compat/appended.bin
"$TUSK" fs -fs "$URI" -appendToFile "$WORK/part1.bin" /compat/appended.bin
fsshell -get /compat/appended.bin "$WORK/appended.back"
cat "$WORK/part1.bin" "$WORK/part2.bin" "$WORK/part1.bin" | cmp - "$WORK/appended.back" || fail "-appendToFile content differs"
TRUNC=$(fsshell -truncate -w 1234567 /compat/appended.bin)
echo "$TRUNC"
echo "$TRUNC" | grep -q "Truncated /compat/appended.bin to length: 1234567" || fail "-truncate -w output"
fsshell -get /compat/appended.bin "$WORK/truncated.back"
head -c 1234567 "$WORK/appended.back" | cmp - "$WORK/truncated.back" || fail "-truncate content differs"
"$TUSK" fs -fs "$URI" -truncate -w 1000 /compat/appended.bin | grep -q "Truncated /compat/appended.bin to length: 1000" || fail "tusk fs -truncate -w"
[ "$(fsshell -stat %b /compat/appended.bin)" = "1000" ] || fail "length after tusk fs -truncate"
fsshell -put "$WORK/a1.txt" /compat/c0.txt
fsshell -put "$WORK/a2.txt" /compat/c1.txt
"$TUSK" fs -fs "$URI" -put "$WORK/part1.bin" /compat/c2.txt
fsshell -concat /compat/c0.txt /compat/c1.txt /compat/c2.txt
cat "$WORK/a1.txt" "$WORK/a2.txt" "$WORK/part1.bin" > "$WORK/concat.want"
fsshell -get /compat/c0.txt "$WORK/concat.back"
cmp "$WORK/concat.want" "$WORK/concat.back" || fail "-concat content differs"
fsshell -test -e /compat/c1.txt && fail "-concat left a source"
fsshell -put "$WORK/a2.txt" /compat/c3.txt
"$TUSK" fs -fs "$URI" -concat /compat/c0.txt /compat/c3.txt
cat "$WORK/concat.want" "$WORK/a2.txt" | cmp - <(fsshell -cat /compat/c0.txt) || fail "tusk fs -concat"
echo "compat-hadoop: OK (Hadoop FsShell -mkdir -put -ls -cat -mv -get -test -rm -appendToFile -truncate -concat against Tusk)"

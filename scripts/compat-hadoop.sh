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
# --- fsux: globs, -cp -chgrp -head -tail -text -getmerge -find, and error wording, side by side
# with Hadoop's FsShell: tusk fs must print what Hadoop's prints for the same cluster.
tuskfs() { "$TUSK" fs -fs "$URI" "$@"; }
same() { # same ARGS...: stdout and exit status of both shells are equal
  local h t hs ts
  h=$(fsshell "$@" 2>/dev/null) && hs=0 || hs=$?
  t=$(tuskfs "$@" 2>/dev/null) && ts=0 || ts=$?
  [ "$h" = "$t" ] && [ "$hs" = "$ts" ] || fail "tusk fs $* differs from Hadoop's:
--- hadoop (exit $hs)
$h
--- tusk (exit $ts)
$t"
}
same_err() { # same_err ARGS...: the error line both shells print
  local h t
  h=$(fsshell "$@" 2>&1 >/dev/null | grep -v -e '^WARN' -e 'NativeCodeLoader' | head -1) || true
  t=$(tuskfs "$@" 2>&1 >/dev/null | head -1) || true
  [ "$h" = "$t" ] || fail "tusk fs $* error differs: hadoop '$h', tusk '$t'"
}
fsshell -mkdir -p /fsux/out /fsux/logs/a /fsux/logs/b
for i in 0 1 2; do echo "part $i" > "$WORK/p$i"; fsshell -put "$WORK/p$i" /fsux/out/part-0000$i; done
echo la > "$WORK/la"; fsshell -put "$WORK/la" /fsux/logs/a/x.log
echo lb > "$WORK/lb"; fsshell -put "$WORK/lb" /fsux/logs/b/x.log
printf 'gz line\n' | gzip > "$WORK/z.gz"; fsshell -put "$WORK/z.gz" /fsux/z.gz
head -c 5000 /dev/urandom | base64 > "$WORK/big.txt"; fsshell -put "$WORK/big.txt" /fsux/big.txt
same -cat '/fsux/out/part-*'
same -ls '/fsux/out/part-0000[02]'
same -ls '/fsux/out/part-0000[^0]'
same -cat '/fsux/logs/{a,b}/*.log'
same -ls -R /fsux/logs
same -ls '/fsux/logs/*'
same -du -s '/fsux/out/*'
same -head /fsux/big.txt
same -tail /fsux/big.txt
same -text /fsux/z.gz
same -find /fsux -name '*.log'
same -find /fsux/logs
same -stat '%n %b' '/fsux/out/part-000?'
same_err -cat '/fsux/out/nothing-*'
same_err -cat /fsux/out
same_err -mkdir /fsux/nodir/sub
same_err -mkdir /fsux/big.txt/sub
same_err -mkdir -p /fsux/big.txt/sub
same -ls /fsux/out/../logs
same -cat '/fsux/out/part-00000' /fsux/out/../out/part-00001
fsshell -getmerge -nl /fsux/out "$WORK/merged.hadoop"
tuskfs -getmerge -nl /fsux/out "$WORK/merged.tusk"
cmp "$WORK/merged.hadoop" "$WORK/merged.tusk" || fail "-getmerge -nl differs"
tuskfs -cp /fsux/logs /fsux/logs-copy
same -cat '/fsux/logs-copy/*/x.log'
tuskfs -chgrp -R staff /fsux/logs-copy
[ "$(fsshell -stat %g /fsux/logs-copy/a/x.log)" = staff ] || fail "-chgrp -R"
fsshell -cp /fsux/out/part-00000 /fsux/h-copy
[ "$(tuskfs -cat /fsux/h-copy)" = "part 0" ] || fail "Hadoop's -cp read by tusk fs"
tuskfs -rm -f '/fsux/never-*' || fail "-rm -f of a glob matching nothing"
echo "compat-hadoop: fsux OK (globs, -head -tail -text -find -getmerge -cp -chgrp and errors equal to Hadoop's FsShell)"
echo "compat-hadoop: OK (Hadoop FsShell -mkdir -put -ls -cat -mv -get -test -rm against Tusk)"

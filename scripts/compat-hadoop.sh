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
# --- dtp: -checksum (BLOCK_CHECKSUM) equal to what real HDFS 3.4.2 printed for the same
# bytes and block size (values recorded from the anchor's standalone-hdfs.sh), in both
# combine modes and with 100 bytes per checksum (block size not a multiple of 512).
seq 1 300000 > "$WORK/seq.txt"
fsshell -D dfs.blocksize=1048576 -put "$WORK/seq.txt" /compat/seq.txt
fsshell -D dfs.blocksize=1048600 -D dfs.bytes-per-checksum=100 -put "$WORK/seq.txt" /compat/seq100.txt
want_md5=$(printf '/compat/seq.txt\tMD5-of-2048MD5-of-512CRC32C\t0000020000000000000008006cfad0673659a91836113a01265fb6e3\n/compat/seq100.txt\tMD5-of-10486MD5-of-100CRC32C\t0000006400000000000028f65b197a26b9e108a014abfa6e6ffba8f1')
want_crc=$(printf '/compat/seq.txt\tCOMPOSITE-CRC32C\teaa84e96\n/compat/seq100.txt\tCOMPOSITE-CRC32C\teaa84e96')
[ "$(fsshell -checksum /compat/seq.txt /compat/seq100.txt)" = "$want_md5" ] || fail "-checksum (MD5MD5CRC) differs from Hadoop's"
[ "$(fsshell -D dfs.checksum.combine.mode=COMPOSITE_CRC -checksum /compat/seq.txt /compat/seq100.txt)" = "$want_crc" ] || fail "-checksum (COMPOSITE_CRC) differs from Hadoop's"
[ "$("$TUSK" fs -fs "$URI" -checksum /compat/seq.txt /compat/seq100.txt)" = "$want_md5" ] || fail "tusk fs -checksum differs from Hadoop's"
[ "$("$TUSK" fs -fs "$URI" -D dfs.checksum.combine.mode=COMPOSITE_CRC -checksum /compat/seq.txt /compat/seq100.txt)" = "$want_crc" ] || fail "tusk fs -checksum (COMPOSITE_CRC) differs from Hadoop's"
# --- dtp: the DataNode IPC port. Hadoop's client reads a file a Tusk writer has not
# closed (it asks each DataNode's IPC port for the replica's visible length), and
# Hadoop's DFSAdmin triggers block reports and asks for node info on that port.
mkfifo "$WORK/open.fifo"
"$TUSK" fs -fs "$URI" -D dfs.blocksize=1048576 -put - /compat/open.bin < "$WORK/open.fifo" &
PUT_PID=$!
exec 7>"$WORK/open.fifo"
head -c 1500000 "$WORK/local.bin" >&7
# The first block complete and six 64 KiB packets of the second on its DataNodes.
want=$((1048576 + 6 * 65536))
got=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
  got=$(fsshell -cat /compat/open.bin._COPYING_ 2>/dev/null | wc -c || true)
  [ "$got" -ge "$want" ] && break
done
[ "$got" -eq "$want" ] || fail "-cat of a file being written gave $got bytes, not $want"
cmp <(fsshell -cat /compat/open.bin._COPYING_) <(head -c "$want" "$WORK/local.bin") || fail "-cat of a file being written: content differs"
exec 7>&-
wait "$PUT_PID" || fail "the writer of the open file failed"
IPC=$(grep -ho 'IPC [0-9.]*:[0-9]*' "$CLUSTER"/logs/datanode0.log | head -1 | cut -d' ' -f2)
dfsadmin() {
  java -Djava.net.preferIPv4Stack=true -cp "$WORK/conf:$(cat "$(scripts/hadoop-classpath.sh)")" \
    -Dlog4j.configuration=none org.apache.hadoop.hdfs.tools.DFSAdmin -fs "$URI" "$@" 2> >(grep -v -e '^log4j' -e 'WARN util.NativeCodeLoader' >&2)
}
dfsadmin -getDatanodeInfo "$IPC" | grep -q '^Uptime: [0-9]*, Software version: .*, Config version: core-3.0.0,hdfs-1$' || fail "dfsadmin -getDatanodeInfo"
dfsadmin -triggerBlockReport "$IPC" | grep -q "Triggering a full block report on $IPC" || fail "dfsadmin -triggerBlockReport"
echo "compat-hadoop: OK (Hadoop FsShell -mkdir -put -ls -cat -mv -get -test -rm against Tusk)"

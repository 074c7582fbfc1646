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
# --- nsmeta: ACLs, extended attributes, quotas (Hadoop's -setfacl/-getfacl, -setfattr/-getfattr, -count -q)
tusk_fs() { "$TUSK" fs -fs "$URI" "$@"; }
fsshell -mkdir -p /compat/meta/q /compat/meta/s
fsshell -setfacl -m user:bob:r-x,default:group:dev:rwx /compat/meta
fsshell -setfacl -m mask::r-- /compat/meta
FACL=$(fsshell -getfacl /compat/meta)
echo "$FACL"
echo "$FACL" | grep -qx 'user:bob:r-x	#effective:r--' || fail "-getfacl effective named user"
echo "$FACL" | grep -qx 'mask::r--' || fail "-getfacl mask"
echo "$FACL" | grep -qx 'default:group:dev:rwx' || fail "-getfacl default entry"
[ "$FACL" = "$(tusk_fs -getfacl /compat/meta)" ] || fail "tusk fs -getfacl differs from Hadoop's"
fsshell -ls -d /compat/meta | grep -Eq '^drwxr--r-x\+ ' || fail "-ls shows no + for an ACL"
fsshell -mkdir /compat/meta/child
fsshell -getfacl /compat/meta/child | grep -qx 'group:dev:rwx' || fail "a new directory did not inherit the default ACL"
fsshell -setfacl -x user:bob /compat/meta
fsshell -getfacl /compat/meta | grep -q 'user:bob' && fail "-setfacl -x left the entry"
fsshell -setfacl -k /compat/meta
fsshell -getfacl /compat/meta | grep -q '^default:' && fail "-setfacl -k left default entries"
fsshell -setfacl -b /compat/meta
fsshell -ls -d /compat/meta | grep -Eq '^drwxr-xr-x ' || fail "-setfacl -b left an ACL"
fsshell -setfacl --set user::rwx,group::r-x,other::---,group:dev:rwx /compat/meta/child
fsshell -getfacl /compat/meta/child | grep -qx 'mask::rwx' || fail "-setfacl --set mask"
fsshell -setfacl -m user:bob:rwz /compat/meta 2>/dev/null && fail "-setfacl accepted a bad permission"
fsshell -setfattr -n user.color -v blue /compat/meta
[ "$(fsshell -getfattr -d /compat/meta)" = "$(printf '# file: /compat/meta\nuser.color="blue"')" ] || fail "-getfattr -d"
fsshell -getfattr -n user.color -e hex /compat/meta | grep -qx 'user.color=0x626c7565' || fail "-getfattr -e hex"
[ "$(fsshell -getfattr -d /compat/meta)" = "$(tusk_fs -getfattr -d /compat/meta)" ] || fail "tusk fs -getfattr differs from Hadoop's"
fsshell -setfattr -x user.color /compat/meta
fsshell -getfattr -n user.color /compat/meta 2>/dev/null && fail "-setfattr -x left the attribute"
hdfs_tool() {  # Hadoop's own DFSAdmin / StoragePolicyAdmin (hadoop-hdfs jars)
  local class=$1; shift
  java -Djava.net.preferIPv4Stack=true -cp "$WORK/conf:$(cat "$(scripts/hadoop-classpath.sh)")" \
    -Dlog4j.configuration=none "$class" -fs "$URI" "$@" 2> >(grep -v -e '^log4j' -e 'WARN util.NativeCodeLoader' >&2)
}
"$TUSK" dfsadmin -fs "$URI" -setQuota 2 /compat/meta/q
hdfs_tool org.apache.hadoop.hdfs.tools.DFSAdmin -setSpaceQuota 1k /compat/meta/s
hdfs_tool org.apache.hadoop.hdfs.tools.StoragePolicyAdmin -setStoragePolicy -path /compat/meta -policy COLD
hdfs_tool org.apache.hadoop.hdfs.tools.StoragePolicyAdmin -getStoragePolicy -path /compat/meta/q | grep -q 'COLD:2' || fail "storagepolicies -getStoragePolicy of an inherited policy"
hdfs_tool org.apache.hadoop.hdfs.tools.StoragePolicyAdmin -getStoragePolicy -path /compat/none 2>/dev/null && fail "-getStoragePolicy of a missing path"
fsshell -mkdir /compat/meta/q/a /compat/meta/q/b 2> "$WORK/quota.err" && fail "-mkdir past the namespace quota"; cat "$WORK/quota.err"
grep -q 'The NameSpace quota (directories and files) of directory /compat/meta/q is exceeded: quota=2 file count=3' "$WORK/quota.err" || fail "namespace quota message"
fsshell -put "$WORK/hello.txt" /compat/meta/s/h 2> "$WORK/space.err" && fail "-put past the space quota"
grep -q 'DiskSpace quota of /compat/meta/s is exceeded' "$WORK/space.err" || fail "space quota message"
COUNT=$(fsshell -count -q -v /compat/meta/q /compat/meta/s)
echo "$COUNT"
echo "$COUNT" | grep -Eq '^ +2 +0 +none +inf +2 +0 +0 /compat/meta/q$' || fail "-count -q of a namespace quota"
echo "$COUNT" | grep -Eq '^ +none +inf +1024 +1024 +1 +[01] +0 /compat/meta/s$' || fail "-count -q of a space quota"
[ "$COUNT" = "$(tusk_fs -count -q -v /compat/meta/q /compat/meta/s)" ] || fail "tusk fs -count -q differs from Hadoop's"
"$TUSK" dfsadmin -fs "$URI" -clrQuota /compat/meta/q
hdfs_tool org.apache.hadoop.hdfs.tools.DFSAdmin -clrSpaceQuota /compat/meta/s
fsshell -count -q /compat/meta/s | grep -Eq '^ +none +inf +none +inf ' || fail "dfsadmin -clrSpaceQuota"
fsshell -mkdir /compat/meta/q/c || fail "-clrQuota left the quota"

echo "compat-hadoop: OK (Hadoop FsShell -mkdir -put -ls -cat -mv -get -test -rm against Tusk)"

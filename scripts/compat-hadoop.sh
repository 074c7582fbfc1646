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
# One way to run a Hadoop tool: hadoop_java CLASSPATH_FILE CLASS ARGS...
source scripts/lib/hadoop-java.sh
HADOOP_JAVA_CONF_DIR=$WORK/conf
fsshell() { hadoop_java "$CP_FILE" org.apache.hadoop.fs.FsShell -fs "$URI" "$@"; }
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
  hadoop_java "$(scripts/hadoop-classpath.sh)" "$class" -fs "$URI" "$@"
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
for _ in 1 2; do  # a failed tusk fs -put leaves no ._COPYING_ (nor its lease: the retry fails the same way)
  tusk_fs -put "$WORK/hello.txt" /compat/meta/s/t 2> "$WORK/space.err" && fail "tusk fs -put past the space quota"
  grep -q 'DiskSpace quota of /compat/meta/s is exceeded' "$WORK/space.err" || fail "tusk fs -put retry: $(cat "$WORK/space.err")"
  fsshell -test -e /compat/meta/s/t._COPYING_ && fail "tusk fs -put left /compat/meta/s/t._COPYING_"
done
COUNT=$(fsshell -count -q -v /compat/meta/q /compat/meta/s)
echo "$COUNT"
echo "$COUNT" | grep -Eq '^ +2 +0 +none +inf +2 +0 +0 /compat/meta/q$' || fail "-count -q of a namespace quota"
echo "$COUNT" | grep -Eq '^ +none +inf +1024 +1024 +1 +[01] +0 /compat/meta/s$' || fail "-count -q of a space quota"
[ "$COUNT" = "$(tusk_fs -count -q -v /compat/meta/q /compat/meta/s)" ] || fail "tusk fs -count -q differs from Hadoop's"
"$TUSK" dfsadmin -fs "$URI" -clrQuota /compat/meta/q
hdfs_tool org.apache.hadoop.hdfs.tools.DFSAdmin -clrSpaceQuota /compat/meta/s
fsshell -count -q /compat/meta/s | grep -Eq '^ +none +inf +none +inf ' || fail "dfsadmin -clrSpaceQuota"
fsshell -mkdir /compat/meta/q/c || fail "-clrQuota left the quota"

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
tuskfs -chown averylongownername /fsux/out/part-00001
same -ls /fsux/out
same -ls -C -S -r /fsux
same -ls -R -h /fsux/logs /fsux/out
same -du -v /fsux/out
same -count -s -v -q /fsux
same -count -q -t -v /fsux
same -rmdir --ignore-fail-on-non-empty /fsux/logs
same -test -w /fsux/out
same -ls -Z /fsux
same -nosuch
same_err -put "$WORK/la" /fsux/nodir/
same_err -chown 'bad user' /fsux/h-copy
same_err -setfacl -m default:user:dave:r-x /fsux/h-copy
tuskfs -rm -f '/fsux/never-*' || fail "-rm -f of a glob matching nothing"
echo "compat-hadoop: fsux OK (globs, -head -tail -text -find -getmerge -cp -chgrp, -ls -du -count columns, usage errors and errors equal to Hadoop's FsShell)"
# --- nsadmin: Hadoop's DFSAdmin -report and -safemode, FsShell -rm into the trash
dfsadmin() { hadoop_java "$CP_FILE" org.apache.hadoop.hdfs.tools.DFSAdmin -fs "$URI" "$@"; }
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
# The other verbs: Hadoop's DFSAdmin and tusk dfsadmin print the same (stdout and stderr).
same_as_tusk() {  # ARGS...: both tools' output and exit code must be equal
  local j t
  j=$(dfsadmin "$@" 2>&1; echo "rc=$?")
  t=$("$TUSK" dfsadmin -fs "$URI" "$@" 2>&1; echo "rc=$?")
  [ "$j" = "$t" ] || fail "dfsadmin $* differs: Hadoop's: $j / tusk's: $t"
}
# saveNamespace: refused outside safe mode (HDFS's words from both), saved in it.
same_as_tusk -saveNamespace
dfsadmin -safemode enter >/dev/null
same_as_tusk -saveNamespace
dfsadmin -safemode leave >/dev/null
for verb in -printTopology "-setBalancerBandwidth 10m" "-restoreFailedStorage check" \
  -finalizeUpgrade "-upgrade query" "-rollingUpgrade query" -refreshUserToGroupsMappings \
  -refreshSuperUserGroupsConfiguration -refreshCallQueue -refreshServiceAcl "-help metasave"; do
  # shellcheck disable=SC2086
  same_as_tusk $verb
done
[ "$(dfsadmin -report | grep -v '^Last contact')" = "$("$TUSK" dfsadmin -fs "$URI" -report | grep -v '^Last contact')" ] \
  || fail "dfsadmin -report differs from tusk dfsadmin -report"
dfsadmin -metasave compat-meta.txt | grep -q "^Created metasave file compat-meta.txt in the log directory of namenode" || fail "dfsadmin -metasave"
grep -q "^Live Datanodes: 3$" "$CLUSTER/logs/compat-meta.txt" || fail "-metasave wrote no report in the NameNode's log directory"
NN_HTTP="dfs.namenode.http-address=$(cat "$CLUSTER/namenode.http-addr")"
mkdir "$WORK/image-j" "$WORK/image-t"
dfsadmin -D "$NN_HTTP" -fetchImage "$WORK/image-j" || fail "dfsadmin -fetchImage"
"$TUSK" dfsadmin -fs "$URI" -D "$NN_HTTP" -fetchImage "$WORK/image-t" || fail "tusk dfsadmin -fetchImage"
ls "$WORK/image-j" | grep -q '^fsimage_[0-9]*$' || fail "dfsadmin -fetchImage saved no fsimage_N"
[ "$(ls "$WORK/image-j")" = "$(ls "$WORK/image-t")" ] || fail "-fetchImage: different image names"
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
# --- webhdfs: Hadoop's own WebHdfsFileSystem (webhdfs://) against the NameNode's HTTP port
WEBHDFS="webhdfs://$(cat "$CLUSTER/namenode.http-addr")"
echo "compat-hadoop: WebHDFS at $WEBHDFS"
fsshell -mkdir -p "$WEBHDFS/compat/web"
fsshell -put "$WORK/hello.txt" "$WEBHDFS/compat/web/hello.txt"
fsshell -put "$WORK/local.bin" "$WEBHDFS/compat/web/data.bin"
LS=$(fsshell -ls "$WEBHDFS/compat/web")
echo "$LS"
echo "$LS" | grep -q "Found 2 items" || fail "-ls webhdfs:// header"
echo "$LS" | grep -Eq "^-rw-r--r-- +3 .* 3000000 .* $WEBHDFS/compat/web/data.bin$" || fail "-ls webhdfs:// line"
[ "$(fsshell -cat "$WEBHDFS/compat/web/hello.txt")" = "hello from hadoop fsshell" ] || fail "-cat webhdfs://"
fsshell -get "$WEBHDFS/compat/web/data.bin" "$WORK/web-back.bin"
cmp "$WORK/local.bin" "$WORK/web-back.bin" || fail "-get webhdfs:// content differs"
# What WebHDFS wrote is the same file over RPC.
[ "$("$TUSK" fs -fs "$URI" -cat /compat/web/hello.txt)" = "hello from hadoop fsshell" ] || fail "tusk fs -cat of a WebHDFS-written file"
fsshell -mv "$WEBHDFS/compat/web/hello.txt" "$WEBHDFS/compat/web/moved.txt"
# APPEND and GETFILECHECKSUM through WebHDFS; the checksum is the one RPC gives.
fsshell -appendToFile "$WORK/hello.txt" "$WEBHDFS/compat/web/moved.txt"
[ "$("$TUSK" fs -fs "$URI" -cat /compat/web/moved.txt)" = "$(cat "$WORK/hello.txt" "$WORK/hello.txt")" ] || fail "-appendToFile webhdfs://"
WEB_SUM=$(fsshell -checksum "$WEBHDFS/compat/web/data.bin" | cut -f2-)
RPC_SUM=$(fsshell -checksum /compat/web/data.bin | cut -f2-)
echo "compat-hadoop: -checksum webhdfs:// $WEB_SUM"
[ -n "$RPC_SUM" ] && [ "$WEB_SUM" = "$RPC_SUM" ] || fail "-checksum webhdfs:// ($WEB_SUM) differs from RPC ($RPC_SUM)"
# Extended attributes through WebHDFS (SETXATTR, GETXATTRS, REMOVEXATTR); RPC sees them.
fsshell -setfattr -n user.color -v blue "$WEBHDFS/compat/web/moved.txt"
fsshell -setfattr -n user.size -v 0x626967 "$WEBHDFS/compat/web/moved.txt"
WATTR=$(fsshell -getfattr -d "$WEBHDFS/compat/web/moved.txt")
echo "$WATTR"
[ "$WATTR" = "$(printf '# file: %s\nuser.color="blue"\nuser.size="big"' "$WEBHDFS/compat/web/moved.txt")" ] || fail "-getfattr -d webhdfs://"
fsshell -getfattr -n user.color -e hex "$WEBHDFS/compat/web/moved.txt" | grep -qx 'user.color=0x626c7565' || fail "-getfattr -e hex webhdfs://"
"$TUSK" fs -fs "$URI" -getfattr -n user.color /compat/web/moved.txt | grep -qx 'user.color="blue"' || fail "tusk fs -getfattr of a WebHDFS-set attribute"
fsshell -setfattr -x user.color "$WEBHDFS/compat/web/moved.txt"
fsshell -getfattr -n user.color "$WEBHDFS/compat/web/moved.txt" 2>/dev/null && fail "-setfattr -x webhdfs:// left the attribute"
# Snapshots through WebHDFS: -createSnapshot, -ls and -cat under .snapshot (Hadoop 3.4's
# SnapshotDiff tool takes only hdfs://, so the diff's JSON is tested in the minicluster).
fsshell -mkdir "$WEBHDFS/compat/websnap"
fsshell -put "$WORK/hello.txt" "$WEBHDFS/compat/websnap/old.txt"
"$TUSK" dfsadmin -fs "$URI" -allowSnapshot /compat/websnap >/dev/null
fsshell -createSnapshot "$WEBHDFS/compat/websnap" s1 | grep -q "^Created snapshot .*/compat/websnap/.snapshot/s1$" || fail "-createSnapshot webhdfs://"
fsshell -rm "$WEBHDFS/compat/websnap/old.txt" >/dev/null
fsshell -put "$WORK/hello.txt" "$WEBHDFS/compat/websnap/new.txt"
fsshell -createSnapshot "$WEBHDFS/compat/websnap" s2 >/dev/null
fsshell -ls "$WEBHDFS/compat/websnap/.snapshot" | grep -Eq "^d.* $WEBHDFS/compat/websnap/.snapshot/s2$" || fail "-ls webhdfs://DIR/.snapshot"
[ "$(fsshell -cat "$WEBHDFS/compat/websnap/.snapshot/s1/old.txt")" = "hello from hadoop fsshell" ] || fail "-cat of a deleted file through its snapshot, webhdfs://"
fsshell -put "$WORK/hello.txt" "$WEBHDFS/compat/websnap/later.txt"
fsshell -deleteSnapshot "$WEBHDFS/compat/websnap" s1
fsshell -deleteSnapshot "$WEBHDFS/compat/websnap" s2
"$TUSK" dfsadmin -fs "$URI" -disallowSnapshot /compat/websnap >/dev/null
# GETSTATUS (-df) and GETTRASHROOT (-rm with the trash on: into /user/<user>/.Trash) through WebHDFS.
fsshell -df "$WEBHDFS/" | grep -Eq "^$WEBHDFS +[1-9][0-9]* +[0-9]+ +[1-9][0-9]* +[0-9]+%$" || fail "-df webhdfs://"
fsshell -Dfs.trash.interval=60 -rm "$WEBHDFS/compat/websnap/later.txt"
fsshell -test -e "$WEBHDFS/user/$(id -un)/.Trash/Current/compat/websnap/later.txt" || fail "-rm to the trash root through webhdfs://"
fsshell -rm -r -skipTrash "$WEBHDFS/compat/websnap" "$WEBHDFS/user/$(id -un)/.Trash" >/dev/null
fsshell -rm -r "$WEBHDFS/compat/web" | grep -q "Deleted $WEBHDFS/compat/web" || fail "-rm -r webhdfs://"
fsshell -test -e /compat/web && fail "-rm -r webhdfs:// left the directory"
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
  hadoop_java "$(scripts/hadoop-classpath.sh)" org.apache.hadoop.hdfs.tools.DFSAdmin -fs "$URI" "$@"
}
dfsadmin -getDatanodeInfo "$IPC" | grep -q '^Uptime: [0-9]*, Software version: .*, Config version: core-3.0.0,hdfs-1$' || fail "dfsadmin -getDatanodeInfo"
dfsadmin -triggerBlockReport "$IPC" | grep -q "Triggering a full block report on $IPC" || fail "dfsadmin -triggerBlockReport"
for verb in "-triggerBlockReport -incremental" -getBalancerBandwidth -evictWriters -getVolumeReport; do
  # shellcheck disable=SC2086
  j=$(dfsadmin $verb "$IPC" 2>&1; echo "rc=$?")
  # shellcheck disable=SC2086
  t=$("$TUSK" dfsadmin -fs "$URI" $verb "$IPC" 2>&1; echo "rc=$?")
  [ "$j" = "$t" ] || fail "dfsadmin $verb differs: Hadoop's: $j / tusk's: $t"
done
# --- snapshots: Hadoop's -createSnapshot/-renameSnapshot/-deleteSnapshot, -ls of .snapshot, -cat and -du of a deleted file through its snapshot
fsshell -mkdir /snaps
fsshell -put "$WORK/hello.txt" /snaps/hello.txt
"$TUSK" dfsadmin -fs "$URI" -allowSnapshot /snaps | grep -q "Allowing snapshot on /snaps succeeded" || fail "dfsadmin -allowSnapshot"
fsshell -createSnapshot /snaps s1 | grep -q "^Created snapshot /snaps/.snapshot/s1$" || fail "-createSnapshot"
fsshell -rm /snaps/hello.txt >/dev/null
fsshell -test -e /snaps/hello.txt && fail "-rm left the snapshotted file"
fsshell -ls /snaps/.snapshot | grep -Eq '^d.* /snaps/.snapshot/s1$' || fail "-ls DIR/.snapshot"
fsshell -ls /snaps/.snapshot/s1 | grep -Eq '^-rw-r--r-- +3 .* 26 .* /snaps/.snapshot/s1/hello.txt$' || fail "-ls DIR/.snapshot/NAME"
[ "$(fsshell -cat /snaps/.snapshot/s1/hello.txt)" = "hello from hadoop fsshell" ] || fail "-cat of a deleted file through its snapshot"
[ "$(fsshell -du -s /snaps | tr -s ' ')" = "26 78 /snaps" ] || fail "-du counts what only the snapshot holds"
[ "$(fsshell -du -s -x /snaps | tr -s ' ')" = "0 0 /snaps" ] || fail "-du -x leaves the snapshot out"
PUT=$(fsshell -put "$WORK/hello.txt" /snaps/.snapshot/s1/again.txt 2>&1 || true)
[ "$PUT" = "put: Modification on a read-only snapshot is disallowed" ] || fail "-put into a snapshot is refused: $PUT"
fsshell -renameSnapshot /snaps s1 s2
"$TUSK" -D fs.defaultFS="$URI" lsSnapshottableDir | grep -Eq '^drwxr-xr-x .* 1 65536 /snaps$' || fail "tusk lsSnapshottableDir"
DIFF=$("$TUSK" -D fs.defaultFS="$URI" snapshotDiff /snaps s2 .)
[ "$DIFF" = "$(printf 'Difference between snapshot s2 and current directory under directory /snaps:\nM\t.\n-\t./hello.txt')" ] || fail "tusk snapshotDiff: $DIFF"
hdfstool() { hadoop_java "$CP_FILE" "org.apache.hadoop.hdfs.tools.snapshot.$1" -fs "$URI" "${@:2}"; }
JLS=$(hdfstool LsSnapshottableDir)
[ "$JLS" = "$("$TUSK" -D fs.defaultFS="$URI" lsSnapshottableDir)" ] || fail "tusk lsSnapshottableDir differs from Hadoop's: $JLS"
[ "$(hdfstool SnapshotDiff /snaps s2 .)" = "$DIFF" ] || fail "tusk snapshotDiff differs from Hadoop's"
hdfstool LsSnapshot /snaps | grep -q " /snaps/.snapshot/s2$" || fail "hdfs lsSnapshot"
# A cut inside a block the snapshot holds copies it (copy-on-truncate): the snapshot keeps every byte.
fsshell -put "$WORK/hello.txt" /snaps/cut.txt
fsshell -createSnapshot /snaps s3 >/dev/null
fsshell -truncate 5 /snaps/cut.txt
for _ in $(seq 60); do [ "$(fsshell -cat /snaps/cut.txt 2>/dev/null)" = "hello" ] && break; sleep 1; done
[ "$(fsshell -cat /snaps/cut.txt)" = "hello" ] || fail "-truncate inside a snapshotted block"
[ "$(fsshell -cat /snaps/.snapshot/s3/cut.txt)" = "hello from hadoop fsshell" ] || fail "the snapshot lost what -truncate cut"
fsshell -deleteSnapshot /snaps s3
fsshell -deleteSnapshot /snaps s2
[ -z "$(fsshell -ls /snaps/.snapshot)" ] || fail "-deleteSnapshot left the snapshot"
"$TUSK" dfsadmin -fs "$URI" -disallowSnapshot /snaps | grep -q "Disallowing snapshot on /snaps succeeded" || fail "dfsadmin -disallowSnapshot"
# --- fsckhttp: Hadoop's own `hdfs fsck` (DFSck reads the NameNode's /fsck servlet); its report equals tusk fsck's
fsshell -mkdir /fsckhttp
fsshell -put "$WORK/hello.txt" /fsckhttp/hello.txt
dfsck() {  # -D after -fs: hdfs_tool's generic options; the path before -files (a generic option too)
  hdfs_tool org.apache.hadoop.hdfs.tools.DFSck -Ddfs.namenode.http-address="$(cat "$CLUSTER/namenode.http-addr")" "$@" 2>/dev/null
}
JFSCK=$(dfsck /fsckhttp -files -blocks -locations) || fail "hdfs fsck exit code $? on a healthy path: $JFSCK"
TFSCK=$("$TUSK" fsck -fs "$URI" /fsckhttp -files -blocks -locations) || fail "tusk fsck on a healthy path"
[ "$(echo "$JFSCK" | tail -1)" = "The filesystem under path '/fsckhttp' is HEALTHY" ] || fail "hdfs fsck verdict: $JFSCK"
echo "$JFSCK" | grep -q "^/fsckhttp/hello.txt 26 bytes, replicated: replication=3, 1 block(s): " || fail "hdfs fsck -files: $JFSCK"
for key in "^/fsckhttp/hello.txt " "^0\. BP-" "^ Total blocks" "^ Total files" "^Status: " "^ Number of data-nodes" "is HEALTHY$"; do
  [ "$(echo "$JFSCK" | grep "$key")" = "$(echo "$TFSCK" | grep "$key")" ] || fail "hdfs fsck and tusk fsck differ on $key: $JFSCK / $TFSCK"
done
dfsck /fsckhttp >/dev/null || fail "hdfs fsck without options"
JLIST=$(dfsck / -list-corruptfileblocks) || fail "hdfs fsck -list-corruptfileblocks exit code"
[ "$JLIST" = "The filesystem under path '/' has 0 CORRUPT blocks" ] || fail "hdfs fsck -list-corruptfileblocks: $JLIST"
[ "$("$TUSK" fsck -fs "$URI" / -list-corruptfileblocks)" = "$JLIST" ] || fail "tusk fsck -list-corruptfileblocks differs from Hadoop's"
# The other options: DFSck through /fsck and tusk fsck print the same report.
BLK=$(echo "$TFSCK" | grep -o 'blk_[0-9]*' | head -1)
for opts in "/fsckhttp -files -blocks -replicaDetails -upgradedomains" "/ -includeSnapshots -files" \
  "/fsckhttp -storagepolicies" "/fsckhttp -maintenance -showprogress" "-blockId $BLK"; do
  # shellcheck disable=SC2086
  j=$(dfsck $opts | grep -v '^FSCK \(started\|ended\)'; echo "rc=${PIPESTATUS[0]}")
  # shellcheck disable=SC2086
  t=$("$TUSK" fsck -fs "$URI" $opts | grep -v '^FSCK \(started\|ended\)'; echo "rc=${PIPESTATUS[0]}")
  [ "$j" = "$t" ] || fail "hdfs fsck $opts differs from tusk fsck: $j / $t"
done
echo "$j" | grep -q "^Block replica on datanode/rack: .* is HEALTHY$" || fail "hdfs fsck -blockId (the last above): $j"
echo "compat-hadoop: fsckhttp OK (Hadoop's DFSck through /fsck: HEALTHY, exit 0, -files -blocks -locations equal to tusk fsck)"
# --- append after -setrep (issue 21 item 2)
# The NameNode deletes the excess replica; Hadoop's append must not be sent to it.
fsshell -mkdir -p /compat/setrep
fsshell -put "$WORK/hello.txt" /compat/setrep/f.txt
fsshell -setrep -w 2 /compat/setrep/f.txt >/dev/null || fail "-setrep -w 2"
SETREP_BLK=$("$TUSK" fsck -fs "$URI" /compat/setrep/f.txt -files -blocks | grep -o 'blk_[0-9]*' | head -1)
for _ in $(seq 30); do
  [ "$(find "$CLUSTER" -name "$SETREP_BLK" | wc -l)" -le 2 ] && break; sleep 1
done
[ "$(find "$CLUSTER" -name "$SETREP_BLK" | wc -l)" -eq 2 ] || fail "-setrep 2 left $(find "$CLUSTER" -name "$SETREP_BLK" | wc -l) replicas of $SETREP_BLK"
echo "appended after setrep" > "$WORK/more.txt"
# Hadoop's client goes on without a pipeline node that fails (one replica short), so
# its warnings are kept: a DataStreamer warning means the NameNode offered a bad node.
printf '%s\n' 'log4j.rootLogger=WARN, err' 'log4j.appender.err=org.apache.log4j.ConsoleAppender' \
  'log4j.appender.err.target=System.err' 'log4j.appender.err.layout=org.apache.log4j.PatternLayout' \
  'log4j.appender.err.layout.ConversionPattern=%p %c: %m%n' > "$WORK/log4j-warn.properties"
java -Djava.net.preferIPv4Stack=true -cp "$WORK/conf:$(cat "$CP_FILE")" \
  -Dlog4j.configuration="file:$WORK/log4j-warn.properties" org.apache.hadoop.fs.FsShell -fs "$URI" \
  -appendToFile "$WORK/more.txt" /compat/setrep/f.txt 2> "$WORK/append.err" || fail "-appendToFile after -setrep -w 2: $(cat "$WORK/append.err")"
! grep -q 'DataStreamer' "$WORK/append.err" || fail "-appendToFile after -setrep -w 2 recovered its pipeline: $(grep DataStreamer "$WORK/append.err")"
[ "$(fsshell -cat /compat/setrep/f.txt)" = "$(cat "$WORK/hello.txt" "$WORK/more.txt")" ] || fail "-cat after -appendToFile following -setrep"
echo "compat-hadoop: append after -setrep OK"
echo "compat-hadoop: OK (Hadoop 3.4.2 FsShell, DFSAdmin, StoragePolicyAdmin, snapshot tools and WebHdfsFileSystem against Tusk: every block above)"

#!/usr/bin/env bash
# Hadoop 3.4.2's own FsShell (Java, from Maven Central) against a secure Tusk cluster
# (`tusk local up --secure`: its own MIT KDC, Kerberos on the NameNode and DataNodes):
# with a kinit'ed ticket it writes, lists, reads, moves and deletes; another user's
# ticket gets Hadoop's permission error; no ticket and SIMPLE are refused; and with
# hadoop.rpc.protection=privacy on both sides the same works while a client that will
# not go beyond authentication finds no common layer. WebHDFS: Hadoop's
# WebHdfsFileSystem (-put, -ls, -cat webhdfs://) and curl --negotiate with the ticket.
# Then dfs.data.transfer.protection (privacy, integrity): Hadoop's client opens the SASL
# handshake on every data connection and wraps the rest; -put / -cat / -get
# byte-identical, and a client that skips the handshake refused by the DataNodes.
# Then dfs.encrypt.data.transfer: Hadoop's client encrypts with the NameNode's data
# encryption keys, -put / -cat byte-identical.
# Usage: scripts/compat-hadoop-secure.sh [path/to/tusk]   (a tusk built with
# --features kerberos; Java, Maven and krb5-kdc: .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/debug/tusk}
[ -x "$TUSK" ] || { echo "compat-hadoop-secure: no tusk binary at $TUSK" >&2; exit 1; }
for tool in java mvn kinit; do
  command -v "$tool" >/dev/null || { echo "compat-hadoop-secure: $tool is required (.ci/run installs it)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/tusk-compat-secure.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() { "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
fail() { echo "compat-hadoop-secure: FAIL: $*" >&2; exit 1; }

source scripts/lib/maven-classpath.sh
source scripts/lib/hadoop-java.sh
CP_FILE=$(maven_classpath scripts/compat-hadoop)

# up DIR [-D k=v ...]: a secure cluster; its realm's environment exported.
up() {
  TUSK_HOME=$WORK "$TUSK" local up --secure --no-yarn --format --dir "$CLUSTER" --datanodes 3 "$@" 2> "$WORK/up.err" >/dev/null \
    || { cat "$WORK/up.err" >&2; fail "local up --secure"; }
  export KRB5_CONFIG=$CLUSTER/kdc/krb5.conf KRB5_KDC_PROFILE=$CLUSTER/kdc/kdc.conf
  export KRB5CCNAME=FILE:$CLUSTER/kdc/$(id -un).cc
  HADOOP_JAVA_OPTS="-Djava.security.krb5.conf=$CLUSTER/conf/krb5.conf"
  export HADOOP_JAVA_OPTS
}
# fsshell CONF_DIR ARGS...: Hadoop's FsShell with that client configuration.
fsshell() { local conf=$1; shift; HADOOP_JAVA_CONF_DIR=$conf hadoop_java "$CP_FILE" org.apache.hadoop.fs.FsShell "$@"; }
# conf_with DIR KEY VALUE: a copy of the cluster's client configuration with KEY set in core-site.xml.
conf_with() {
  mkdir -p "$1"; cp "$CLUSTER"/conf/*.xml "$1"/
  sed -i "s#</configuration>#  <property><name>$2</name><value>$3</value></property>\n</configuration>#" "$1/core-site.xml"
}

up
ME=$(id -un)
CONF=$CLUSTER/conf
head -c 3000000 /dev/urandom > "$WORK/local.bin"
echo "hello from a kerberized fsshell" > "$WORK/hello.txt"
fsshell "$CONF" -mkdir -p "/user/$ME/compat"
fsshell "$CONF" -put "$WORK/local.bin" "/user/$ME/compat/data.bin"
fsshell "$CONF" -put "$WORK/hello.txt" "/user/$ME/hello.txt"
LS=$(fsshell "$CONF" -ls "/user/$ME/compat")
echo "$LS"
echo "$LS" | grep -Eq "^-rw-r--r-- +3 $ME .* 3000000 .* /user/$ME/compat/data.bin$" || fail "-ls line"
[ "$(fsshell "$CONF" -cat "/user/$ME/hello.txt")" = "hello from a kerberized fsshell" ] || fail "-cat"
fsshell "$CONF" -mv "/user/$ME/compat/data.bin" "/user/$ME/moved.bin"
fsshell "$CONF" -get "/user/$ME/moved.bin" "$WORK/back.bin"
cmp "$WORK/local.bin" "$WORK/back.bin" || fail "-get content differs"
fsshell "$CONF" -rm "/user/$ME/moved.bin" | grep -q "Deleted /user/$ME/moved.bin" || fail "-rm"
# Tusk's own shell, with the same ticket, reads what Hadoop's wrote.
[ "$("$TUSK" --conf "$CONF" fs -cat "/user/$ME/hello.txt")" = "hello from a kerberized fsshell" ] || fail "tusk fs -cat"

# A client whose pattern of NameNode principals (`dfs.namenode.kerberos.principal.pattern`;
# HDFS's default `*` takes any) leaves this one out refuses it before asking for a
# ticket: Hadoop's FsShell and Tusk's shell alike.
OTHER=nn/elsewhere.example@TUSK.LOCAL
conf_with "$WORK/other-nn" hadoop.rpc.protection authentication
sed -i "s#</configuration>#  <property><name>dfs.namenode.kerberos.principal.pattern</name><value>$OTHER</value></property>\n</configuration>#" \
  "$WORK/other-nn/hdfs-site.xml"
REFUSAL="Server has invalid Kerberos principal: nn/localhost@TUSK.LOCAL, doesn't match the pattern: $OTHER"
if fsshell "$WORK/other-nn" -ls / 2> "$WORK/other-nn.err"; then fail "Hadoop's client accepted a NameNode principal outside its pattern"; fi
grep -qF "$REFUSAL" "$WORK/other-nn.err" || { cat "$WORK/other-nn.err" >&2; fail "Hadoop's principal check"; }
if "$TUSK" --conf "$WORK/other-nn" fs -ls / 2> "$WORK/tusk-other-nn.err"; then fail "Tusk's client accepted a NameNode principal outside its pattern"; fi
grep -qF "$REFUSAL" "$WORK/tusk-other-nn.err" || { cat "$WORK/tusk-other-nn.err" >&2; fail "Tusk's principal check"; }

# hdfs-native (the Rust client's Python package), with the same ticket and the
# cluster's client configuration: 1 MiB through the DataNodes and back, owned by the
# ticket's user.
python3 -c 'import hdfs_native' 2>/dev/null || python3 -m pip install -q hdfs-native 2>/dev/null \
  || python3 -m pip install -q --break-system-packages hdfs-native
HADOOP_CONF_DIR=$CONF timeout 120 python3 - "$ME" <<'PY' || fail "hdfs-native with Kerberos"
import sys
from hdfs_native import Client
me = sys.argv[1]
client = Client()
data = bytes(range(256)) * 4096
with client.create(f"/user/{me}/native.bin") as w:
    w.write(data)
with client.read(f"/user/{me}/native.bin") as r:
    assert r.read() == data, "hdfs-native read back other bytes"
owner = client.get_file_info(f"/user/{me}/native.bin").owner
assert owner == me, owner
PY
echo "compat-hadoop-secure: hdfs-native OK"

# WebHDFS under Kerberos through Hadoop's WebHdfsFileSystem: SPNEGO with the ticket
# (HTTP/localhost, which `local up --secure` makes and names in DIR/conf), then
# GETDELEGATIONTOKEN, then the token on every call and in the DataNode redirects.
WEBHDFS="webhdfs://localhost:$(cut -d: -f2 "$CLUSTER/namenode.http-addr")"
fsshell "$CONF" -put "$WORK/hello.txt" "$WEBHDFS/user/$ME/web-hello.txt"
LS=$(fsshell "$CONF" -ls "$WEBHDFS/user/$ME")
echo "$LS" | grep -Eq "^-rw-r--r-- +3 $ME .* $WEBHDFS/user/$ME/web-hello.txt$" || { echo "$LS" >&2; fail "-ls webhdfs:// under Kerberos"; }
[ "$(fsshell "$CONF" -cat "$WEBHDFS/user/$ME/web-hello.txt")" = "hello from a kerberized fsshell" ] || fail "-cat webhdfs:// under Kerberos"
# curl's SPNEGO with the same ticket.
curl -sf --negotiate -u : "http://localhost:$(cut -d: -f2 "$CLUSTER/namenode.http-addr")/webhdfs/v1/user/$ME?op=LISTSTATUS" \
  | grep -q '"pathSuffix":"web-hello.txt"' || fail "curl --negotiate LISTSTATUS"
echo "compat-hadoop-secure: webhdfs OK"

# Another user's ticket: authenticated, and Hadoop's permission error.
/usr/sbin/kadmin.local -q "addprinc -randkey bob" >/dev/null 2>&1
/usr/sbin/kadmin.local -q "ktadd -k $WORK/bob.keytab bob" >/dev/null
kinit -kt "$WORK/bob.keytab" -c "FILE:$WORK/bob.cc" bob
if KRB5CCNAME=FILE:$WORK/bob.cc fsshell "$CONF" -mkdir "/user/$ME/bobs" 2> "$WORK/bob.err"; then fail "bob wrote into $ME's home"; fi
grep -q "Permission denied: user=bob, access=WRITE" "$WORK/bob.err" || { cat "$WORK/bob.err" >&2; fail "bob's refusal"; }

# No ticket.
if KRB5CCNAME=FILE:$WORK/none.cc fsshell "$CONF" -ls / 2> "$WORK/none.err"; then fail "no ticket was served"; fi
grep -q "Client cannot authenticate via:\[TOKEN, KERBEROS\]" "$WORK/none.err" || { cat "$WORK/none.err" >&2; fail "no-ticket refusal"; }

# SIMPLE against the secure NameNode.
conf_with "$WORK/simple" hadoop.security.authentication simple
if fsshell "$WORK/simple" -ls / 2> "$WORK/simple.err"; then fail "a SIMPLE client was served"; fi
grep -q "SIMPLE authentication is not enabled" "$WORK/simple.err" || { cat "$WORK/simple.err" >&2; fail "SIMPLE refusal"; }
# The audit log names each caller by its Kerberos principal, refusals included.
AUDIT=$CLUSTER/logs/hdfs-audit.log
grep -Pq "allowed=true\tugi=$ME@TUSK.LOCAL \(auth:KERBEROS\)\tip=/127.0.0.1\tcmd=rename\tsrc=/user/$ME/compat/data.bin\tdst=/user/$ME/moved.bin\t" "$AUDIT" \
  || { cat "$AUDIT" >&2; fail "audit line of -mv"; }
grep -Pq "allowed=false\tugi=bob@TUSK.LOCAL \(auth:KERBEROS\)\t.*\tcmd=mkdirs\tsrc=/user/$ME/bobs\t" "$AUDIT" \
  || { cat "$AUDIT" >&2; fail "audit line of bob's refusal"; }
echo "compat-hadoop-secure: authentication OK"

# Delegation tokens through Hadoop's own fetchdt (DelegationTokenFetcher): a token
# fetched with the ticket serves FsShell without any ticket (SASL TOKEN), renews,
# and is refused once cancelled.
dtool() { HADOOP_JAVA_CONF_DIR=$CONF hadoop_java "$CP_FILE" org.apache.hadoop.hdfs.tools.DelegationTokenFetcher "$@"; }
dtool --renewer "$ME" "$WORK/dt" > "$WORK/dt.out" 2>&1 || { cat "$WORK/dt.out" >&2; fail "fetchdt"; }
[ -s "$WORK/dt" ] || fail "fetchdt wrote no token file"
HADOOP_TOKEN_FILE_LOCATION=$WORK/dt KRB5CCNAME=FILE:$WORK/none.cc fsshell "$CONF" -ls "/user/$ME" > "$WORK/dt-ls.out" 2>&1 \
  || { cat "$WORK/dt-ls.out" >&2; fail "FsShell with a delegation token and no ticket"; }
grep -q "/user/$ME/hello.txt" "$WORK/dt-ls.out" || { cat "$WORK/dt-ls.out" >&2; fail "-ls with a delegation token"; }
dtool --renew "$WORK/dt" > "$WORK/dt-renew.out" 2>&1 || { cat "$WORK/dt-renew.out" >&2; fail "fetchdt --renew"; }
dtool --cancel "$WORK/dt" > "$WORK/dt-cancel.out" 2>&1 || { cat "$WORK/dt-cancel.out" >&2; fail "fetchdt --cancel"; }
if HADOOP_TOKEN_FILE_LOCATION=$WORK/dt KRB5CCNAME=FILE:$WORK/none.cc fsshell "$CONF" -ls "/user/$ME" > "$WORK/dt-gone.out" 2>&1; then
  fail "a cancelled delegation token was served"
fi
grep -q "can't be found in cache" "$WORK/dt-gone.out" || { cat "$WORK/dt-gone.out" >&2; fail "the cancelled token's refusal"; }
echo "compat-hadoop-secure: delegation tokens OK"

# Privacy on RPC, both sides.
"$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1
up -D hadoop.rpc.protection=privacy
conf_with "$WORK/private" hadoop.rpc.protection privacy
fsshell "$WORK/private" -mkdir -p "/user/$ME"
fsshell "$WORK/private" -put "$WORK/local.bin" "/user/$ME/private.bin"
fsshell "$WORK/private" -get "/user/$ME/private.bin" "$WORK/private-back.bin"
cmp "$WORK/local.bin" "$WORK/private-back.bin" || fail "privacy: -get content differs"
if fsshell "$CONF" -ls / 2> "$WORK/weak.err"; then fail "an authentication-only client was served by a privacy NameNode"; fi
grep -q "No common protection layer between client and server" "$WORK/weak.err" || { cat "$WORK/weak.err" >&2; fail "protection mismatch"; }
HADOOP_CONF_DIR=$WORK/private timeout 120 python3 - "$ME" <<'PY' || fail "hdfs-native with privacy"
import sys
from hdfs_native import Client
me = sys.argv[1]
client = Client()
data = b"wrapped both ways " * 10000
with client.create(f"/user/{me}/native-private.bin") as w:
    w.write(data)
with client.read(f"/user/{me}/native-private.bin") as r:
    assert r.read() == data, "hdfs-native read back other bytes under privacy"
PY
echo "compat-hadoop-secure: privacy OK"

# Data connections under dfs.data.transfer.protection, both sides: Hadoop's client opens
# the SASL handshake over each block token and wraps every op, packet and ack in
# DIGEST-MD5's auth-conf (rc4) or auth-int layer; the DataNodes' pipeline does the same.
for level in privacy integrity; do
  "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1
  up -D dfs.data.transfer.protection=$level
  conf_with "$WORK/dtp-$level" dfs.data.transfer.protection $level
  fsshell "$WORK/dtp-$level" -mkdir -p "/user/$ME"
  fsshell "$WORK/dtp-$level" -put "$WORK/local.bin" "/user/$ME/dtp.bin"
  fsshell "$WORK/dtp-$level" -cat "/user/$ME/dtp.bin" > "$WORK/dtp-cat.bin"
  cmp "$WORK/local.bin" "$WORK/dtp-cat.bin" || fail "$level: -cat content differs"
  fsshell "$WORK/dtp-$level" -get "/user/$ME/dtp.bin" "$WORK/dtp-$level-back.bin"
  cmp "$WORK/local.bin" "$WORK/dtp-$level-back.bin" || fail "$level: -get content differs"
  "$TUSK" --conf "$WORK/dtp-$level" fs -cat "/user/$ME/dtp.bin" > "$WORK/dtp-tusk.bin" || fail "$level: tusk fs -cat"
  cmp "$WORK/local.bin" "$WORK/dtp-tusk.bin" || fail "$level: tusk fs -cat content differs"
  # hdfs-native opens the handshake whenever it holds a block token and takes the
  # strongest layer offered (3des under privacy).
  HADOOP_CONF_DIR=$WORK/dtp-$level timeout 120 python3 - "$ME" "$WORK/local.bin" <<'PY' || fail "$level: hdfs-native"
import sys
from hdfs_native import Client
me, local = sys.argv[1], sys.argv[2]
client = Client()
data = open(local, "rb").read()
with client.read(f"/user/{me}/dtp.bin") as r:
    assert r.read() == data, "hdfs-native read back other bytes"
with client.create(f"/user/{me}/dtp-native.bin") as w:
    w.write(data[:1000000])
with client.read(f"/user/{me}/dtp-native.bin") as r:
    assert r.read() == data[:1000000], "hdfs-native's own file came back other"
PY
  # Without the key Hadoop's client skips the handshake: every DataNode refuses it.
  refusals() { cat "$CLUSTER"/logs/*.log | grep -c "Failed to read expected SASL data transfer protection handshake" || true; }
  BEFORE=$(refusals)
  if fsshell "$CONF" -cat "/user/$ME/dtp.bin" > /dev/null 2> "$WORK/dtp-plain.err"; then
    fail "$level: a client without SASL was served"
  fi
  [ "$(refusals)" -gt "$BEFORE" ] || { tail -5 "$WORK/dtp-plain.err" >&2; fail "$level: the DataNodes' refusal"; }
  echo "compat-hadoop-secure: dfs.data.transfer.protection=$level OK"
done

# dfs.encrypt.data.transfer: the NameNode's server defaults say so, so Hadoop's client
# (with no setting of its own) takes a data encryption key from the NameNode and
# encrypts every data connection with it (the DataNodes refuse anything else: see
# `cargo test -p tusk-cluster --test data_transfer_protection`).
"$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1
up -D dfs.encrypt.data.transfer=true
fsshell "$CONF" -mkdir -p "/user/$ME"
fsshell "$CONF" -put "$WORK/local.bin" "/user/$ME/encrypted.bin"
fsshell "$CONF" -cat "/user/$ME/encrypted.bin" > "$WORK/enc-cat.bin"
cmp "$WORK/local.bin" "$WORK/enc-cat.bin" || fail "encrypt: -cat content differs"
"$TUSK" --conf "$CONF" fs -cat "/user/$ME/encrypted.bin" > "$WORK/enc-tusk.bin" || fail "encrypt: tusk fs -cat"
cmp "$WORK/local.bin" "$WORK/enc-tusk.bin" || fail "encrypt: tusk fs -cat content differs"
echo "compat-hadoop-secure: dfs.encrypt.data.transfer OK"
echo "compat-hadoop-secure: OK"

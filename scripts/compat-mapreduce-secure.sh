#!/usr/bin/env bash
# Hadoop 3.4.2's own MapReduce on a secure Tusk cluster (`tusk local up --secure`: its own
# MIT KDC; Kerberos on the NameNode, DataNodes, ResourceManager and NodeManagers), run by
# Hadoop's job client with the user's kinit'ed ticket:
#   - wordcount: its output equals the counts computed here; the job's client got an
#     HDFS delegation token naming the ResourceManager as renewer, the ResourceManager
#     renewed it at submission as rm/localhost (the NameNode's audit log), and cancelled
#     it after the application ended (the token is refused from then on);
#   - a streaming job whose tasks report whether they can see a Kerberos ticket: none
#     can (they hold their application's tokens only) and still read their input;
#   - the job's container logs, aggregated to the DFS by the NodeManagers with the
#     application's tokens (the audit log), read back by Hadoop's LogsCLI;
#   - the ResourceManager's and NodeManagers' web servers negotiate SPNEGO
#     (hadoop.http.authentication.type=kerberos): 401 without a ticket, 200 with;
#   - refusals: a job whose token names a renewer other than the ResourceManager is
#     refused at submission with "Failed to renew token"; a client without a ticket
#     cannot reach the ResourceManager.
# Each check prints PASS or FAIL; the script exits non-zero when any failed.
# Usage: scripts/compat-mapreduce-secure.sh [path/to/tusk]   (a tusk built with
#   --features kerberos; Java, Maven and krb5-kdc: .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=${1:-${CARGO_TARGET_DIR:-target}/debug/tusk}
[ -x "$TUSK" ] || { echo "compat-mapreduce-secure: no tusk binary at $TUSK" >&2; exit 1; }
for tool in java mvn kinit klist; do
  command -v "$tool" >/dev/null || { echo "compat-mapreduce-secure: $tool is required (.ci/run installs it)" >&2; exit 1; }
done
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

WORK=$(mktemp -d /tmp/tusk-compat-mr-secure.XXXXXX)
CLUSTER=$WORK/cluster
cleanup() {
  if [ "${FAILED:-1}" != 0 ] && [ -d "$CLUSTER/logs" ]; then
    tail -n 30 "$CLUSTER"/logs/*.log >&2 || true
  fi
  "$TUSK" local down --dir "$CLUSTER" >/dev/null 2>&1 || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

CP_FILE=$(scripts/hadoop-classpath.sh)
source scripts/lib/hadoop-java.sh
EXAMPLES=$(tr ':' '\n' < "$CP_FILE" | grep '/hadoop-mapreduce-examples-3.4.2.jar$')
STREAMING=$(tr ':' '\n' < "$CP_FILE" | grep '/hadoop-streaming-3.4.2.jar$')

# An ended application's tokens are cancelled this long after it ends (Hadoop's RM waits
# yarn.nm.liveness-monitor.expiry-interval-ms, 10 min by default, for log aggregation).
NM_EXPIRY_MS=15000
TUSK_HOME=$WORK "$TUSK" local up --secure --format --dir "$CLUSTER" --datanodes 2 \
  -D yarn.nm.liveness-monitor.expiry-interval-ms=$NM_EXPIRY_MS -D hadoop.http.authentication.type=kerberos \
  2> "$WORK/up.err" >/dev/null \
  || { cat "$WORK/up.err" >&2; exit 1; }
export KRB5_CONFIG=$CLUSTER/kdc/krb5.conf
export KRB5CCNAME=FILE:$CLUSTER/kdc/$(id -un).cc
export HADOOP_JAVA_OPTS="-Djava.security.krb5.conf=$CLUSTER/conf/krb5.conf"
CONF=$CLUSTER/conf
export HADOOP_JAVA_CONF_DIR=$CONF
ME=$(id -un)
AUDIT=$CLUSTER/logs/hdfs-audit.log
echo "compat-mapreduce-secure: HADOOP_CONF_DIR=$CONF, user $ME"

mapreduce_job_opts "$CP_FILE"
yarn_cli() { local class=$1; shift; hadoop_java "$CP_FILE" "org.apache.hadoop.yarn.client.cli.$class" "$@" 2>/dev/null; }
tusk() { "$TUSK" --conf "$CONF" "$@"; }

FAILED=0
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1; shift
  if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; FAILED=1; fi
}
wait_for() { # wait_for SECONDS COMMAND...: polls COMMAND once a second
  local n=$1; shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 1; done
  return 1
}

# ---------------------------------------------------------------- wordcount
for i in 1 2 3; do
  for _ in $(seq 200); do echo "the quick brown fox $i jumps over the lazy dog $((i * 7))"; done
done > "$WORK/words.txt"
tusk fs -mkdir -p "/user/$ME/input"
tusk fs -put "$WORK/words.txt" "/user/$ME/input/words.txt"
set +e
hadoop_jar "$CP_FILE" "$EXAMPLES" wordcount "${JOB_OPTS[@]}" input wc-out > "$WORK/wc.log" 2>&1; CODE=$?
set -e
{ grep -v '^[[:space:]]*at ' "$WORK/wc.log" || true; } | tail -n 8
check "wordcount: the job succeeds under Kerberos" test "$CODE" = 0
check "audit log: the token was not cancelled at once: the application's logs may still be aggregated" \
  bash -c "! grep -q 'cmd=cancelDelegationToken' '$AUDIT'"
tr -s ' ' '\n' < "$WORK/words.txt" | sort | uniq -c | awk '{print $2 "\t" $1}' | sort > "$WORK/wc.expected"
tusk fs -cat "/user/$ME/wc-out/part-r-*" 2>/dev/null | sort > "$WORK/wc.actual" || true
check "wordcount: output equals the counts of the input" cmp -s "$WORK/wc.expected" "$WORK/wc.actual"
check "audit log: the job client got a delegation token with its ticket" \
  grep -qE "allowed=true	ugi=$ME@TUSK.LOCAL \(auth:KERBEROS\)	ip=[^	]*	cmd=getDelegationToken	" "$AUDIT"
check "audit log: the ResourceManager renewed it as rm/localhost at submission" \
  grep -qE "allowed=true	ugi=rm/localhost@TUSK.LOCAL \(auth:KERBEROS\)	ip=[^	]*	cmd=renewDelegationToken	" "$AUDIT"
cancelled() { grep -qE "allowed=true	ugi=rm/localhost@TUSK.LOCAL \(auth:KERBEROS\)	ip=[^	]*	cmd=cancelDelegationToken	" "$AUDIT"; }

# ---------------------------------------------------------------- streaming: tokens only
# Each map task counts its input lines and says whether it can see a Kerberos ticket.
set +e
hadoop_jar "$CP_FILE" "$STREAMING" "${JOB_OPTS[@]}" -input input -output tickets-out \
  -mapper 'sh -c "wc -l; klist -s && echo ticket || echo no-ticket"' -reducer NONE \
  > "$WORK/streaming.log" 2>&1; CODE=$?
set -e
tail -n 3 "$WORK/streaming.log" || true
check "streaming: the job succeeds under Kerberos" test "$CODE" = 0
tusk fs -cat "/user/$ME/tickets-out/part-*" 2>/dev/null | tr -d '\t ' > "$WORK/tickets" || true
LINES=$(awk '/^[0-9]+$/ {n += $1} END {print n + 0}' "$WORK/tickets")
check "streaming: the tasks read all 600 input lines (with their tokens)" test "$LINES" = 600
check "streaming: no task could see a Kerberos ticket" \
  bash -c "grep -q '^no-ticket$' '$WORK/tickets' && ! grep -q '^ticket$' '$WORK/tickets'"

# ---------------------------------------------------------------- logs, owned by the user
WC_APP=$(yarn_cli ApplicationCLI application -list -appStates FINISHED | grep -o 'application_[0-9]*_[0-9]*' | sort | head -1) || true
check "yarn application -list (Kerberos to the ResourceManager) shows wordcount" test -n "$WC_APP"
aggregated() { yarn_cli ApplicationCLI application -status "$WC_APP" | grep -q 'Log Aggregation Status : SUCCEEDED'; }
check "wordcount's logs aggregated with the application's tokens" wait_for 30 aggregated
# The NodeManager wrote the file with the application's token (the audit log's ugi),
# not with its own ticket.
check "aggregated log file written with the application's token" \
  grep -qE "allowed=true	ugi=$ME[^	]* \(auth:TOKEN\)	ip=[^	]*	cmd=create	src=/tmp/logs/$ME/[^	]*/$WC_APP/" "$AUDIT"
yarn_cli LogsCLI -applicationId "$WC_APP" > "$WORK/logs.all" || true
check "yarn logs reads the AM's syslog back" grep -q "^LogType:syslog" "$WORK/logs.all"

# ---------------------------------------------------------------- cancelled after the end
check "the ResourceManager cancelled wordcount's token after the application ended" \
  wait_for $((NM_EXPIRY_MS / 1000 + 45)) cancelled

# ---------------------------------------------------------------- web servers (SPNEGO)
RM_WEB=localhost:$(cut -d: -f2 "$CLUSTER/resourcemanager.http-addr")
NM_WEB=localhost:$(cut -d: -f2 "$CLUSTER/nodemanager0.http-addr")
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "ResourceManager web: 401 without a ticket" test "$(code "http://$RM_WEB/ws/v1/cluster/info")" = 401
check "ResourceManager web: 200 with SPNEGO" test "$(code --negotiate -u : "http://$RM_WEB/ws/v1/cluster/info")" = 200
check "NodeManager web: 401 without a ticket" test "$(code "http://$NM_WEB/ws/v1/node/info")" = 401
check "NodeManager web: 200 with SPNEGO" test "$(code --negotiate -u : "http://$NM_WEB/ws/v1/node/info")" = 200

# ---------------------------------------------------------------- refusals
# A client naming another renewer (its yarn.resourcemanager.principal says `other`, while
# it still accepts the ResourceManager's rm/ principal): the ResourceManager may not renew
# the token and refuses the application.
mkdir -p "$WORK/other-renewer"; cp "$CONF"/* "$WORK/other-renewer/"
sed -i "s#rm/_HOST@TUSK.LOCAL#other/_HOST@TUSK.LOCAL#; s#</configuration>#  <property><name>yarn.resourcemanager.principal.pattern</name><value>rm/*@TUSK.LOCAL</value></property>\n</configuration>#" \
  "$WORK/other-renewer/yarn-site.xml"
set +e
HADOOP_JAVA_CONF_DIR=$WORK/other-renewer hadoop_jar "$CP_FILE" "$EXAMPLES" wordcount "${JOB_OPTS[@]}" input wc-refused > "$WORK/refused.log" 2>&1; CODE=$?
set -e
check "a token the ResourceManager may not renew: the job is refused" test "$CODE" != 0
check "... with 'Failed to renew token'" grep -q "Failed to renew token: Kind: HDFS_DELEGATION_TOKEN" "$WORK/refused.log"
# (Hadoop's client takes a failed SASL negotiation for a connection problem and retries
# for yarn.resourcemanager.connect.max-wait.ms: cut short here.)
set +e
KRB5CCNAME=FILE:$WORK/no-such-cache hadoop_java "$CP_FILE" org.apache.hadoop.yarn.client.cli.ApplicationCLI \
  application -Dyarn.resourcemanager.connect.max-wait.ms=3000 -Dyarn.resourcemanager.connect.retry-interval.ms=1000 \
  -list > /dev/null 2> "$WORK/no-ticket.err"; CODE=$?
set -e
check "a client without a ticket cannot reach the ResourceManager" test "$CODE" != 0
check "... Hadoop's client cannot authenticate via TOKEN or KERBEROS" grep -q "Client cannot authenticate via:\[TOKEN, KERBEROS\]" "$WORK/no-ticket.err"

if [ "$FAILED" = 0 ]; then echo "compat-mapreduce-secure: all checks passed"; fi
exit "$FAILED"

#!/usr/bin/env bash
# Runs deploy/systemd's units under a real systemd, on a machine whose PID 1 is not
# systemd: boots the host's own systemd in a systemd-nspawn container (private network,
# a copy of /etc, /usr as a copy-on-write overlay) with the units, deploy/conf (master =
# 127.0.0.1) and the tusk binary installed as docs/deploy.md says, then
# `systemctl start`s all four and checks: they are active with their sandboxing; the
# state, log and socket directories are created for user tusk; a file put as the HDFS
# superuser (tusk) is read back byte for byte by an unprivileged user through
# short-circuit reads; a DataNode killed with SIGKILL is restarted (Restart=on-failure);
# the file survives restarting the NameNode.
# Needs root and systemd-nspawn (Debian: systemd-container). Usage:
#   scripts/deploy-systemd.sh [path/to/tusk]
set -euo pipefail
cd "$(dirname "$0")/.."
TUSK=$(realpath "${1:-${CARGO_TARGET_DIR:-target}/debug/tusk}")
command -v systemd-nspawn >/dev/null || { echo "deploy-systemd: systemd-nspawn missing" >&2; exit 1; }

T=$(mktemp -d)
R=$T/root
NSPAWN=
cleanup() {
    if [[ -n $NSPAWN ]]; then
        kill "$NSPAWN" 2>/dev/null || true
        wait "$NSPAWN" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "deploy-systemd: FAIL: $*" >&2
    for f in "$T"/*.err; do [[ -f $f ]] && { echo "--- $f"; tail -5 "$f"; } >&2; done
    exit 1
}
wait_for() {
    local what=$1; shift
    for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    fail "timed out waiting for $what"
}

# The container's root: a copy of /etc (3-4 MB) made into a separate machine, the
# merged-/usr symlinks, empty mount points; /usr comes from the host as an overlay.
mkdir -p "$R"/{usr,var,dev,proc,sys,run,tmp,root} "$T/usr-upper/local/bin"
for l in bin lib lib64 sbin; do ln -s "usr/$l" "$R/$l"; done
cp -a /etc "$R/etc"
rm -f "$R/etc/os-release" "$R/etc/machine-id"
cp /usr/lib/os-release "$R/etc/os-release"
python3 -c 'import uuid; print(uuid.uuid4().hex)' >"$R/etc/machine-id"
# Only what this test needs starts at boot.
rm -rf "$R"/etc/systemd/system/*.wants
# The install steps of docs/deploy.md.
echo "tusk:x:990:990:Tusk:/var/lib/tusk:/usr/sbin/nologin" >>"$R/etc/passwd"
echo "tusk:x:990:" >>"$R/etc/group"
cp "$TUSK" "$T/usr-upper/local/bin/tusk"
mkdir -p "$R/etc/tusk/conf"
for f in deploy/conf/*.xml; do sed 's/master.example/127.0.0.1/g' "$f" >"$R/etc/tusk/conf/$(basename "$f")"; done
cp deploy/systemd/*.service "$R/etc/systemd/system/"

systemd-nspawn -q -D "$R" --private-network --register=no --keep-unit --link-journal=no \
    --machine="tusk-deploy-$$" --overlay="/usr:$T/usr-upper:/usr" \
    --boot -- systemd.unit=basic.target >"$T/nspawn.log" 2>&1 &
NSPAWN=$!
leader() { pgrep -P "$NSPAWN" -x systemd || pgrep -P "$NSPAWN" -f '/systemd/systemd'; }
wait_for "the container's systemd" leader
PID1=$(leader | head -1)
ct() { nsenter -t "$PID1" -a "$@"; }
booted() { ct systemctl is-system-running | grep -qE "running|degraded"; }
wait_for "the container to boot" booted

ct systemctl start tusk-namenode tusk-datanode tusk-resourcemanager tusk-nodemanager
for u in namenode datanode resourcemanager nodemanager; do
    wait_for "tusk-$u active" ct systemctl is-active --quiet "tusk-$u"
done
[[ $(ct stat -c '%U %a' /var/lib/tusk/name) == "tusk 750" ]] || fail "/var/lib/tusk/name not tusk's, 0750"
ct test -d /var/log/tusk/userlogs || fail "no /var/log/tusk/userlogs"
wait_for "the short-circuit socket" ct test -S /run/tusk-datanode/dn_socket
[[ $(ct stat -c %a /run/tusk-datanode/dn_socket) == 666 ]] || fail "socket not 0666"
# As a user: its uid and the login name the client reports (from $USER, like HADOOP_USER_NAME).
as() {
    local uid=$1 name=$2; shift 2
    ct setpriv --reuid="$uid" --regid="$uid" --clear-groups \
        env HOME=/ USER="$name" LOGNAME="$name" HADOOP_CONF_DIR=/etc/tusk/conf "$@"
}
head -c 3000000 /dev/urandom >"$T/data.bin"
put() { as 990 tusk TUSK_LOG=warn /usr/local/bin/tusk fs -D dfs.replication=1 -put -f - /data.bin <"$T/data.bin" 2>"$T/put.err"; }
wait_for "a write (DataNode registered)" put
cat_as_nobody() { as 65534 nobody TUSK_LOG=debug /usr/local/bin/tusk fs -cat /data.bin 2>"$T/cat.err" | cmp - "$T/data.bin"; }
cat_as_nobody || fail "nobody read other bytes"
! grep -q "short-circuit read refused" "$T/cat.err" || fail "short-circuit refused: $(cat "$T/cat.err")"
old=$(ct systemctl show -p MainPID --value tusk-datanode)
ct kill -9 "$old"
restarted() { [[ $(ct systemctl show -p NRestarts --value tusk-datanode) == 1 ]] && ct systemctl is-active --quiet tusk-datanode; }
wait_for "systemd to restart the killed DataNode" restarted
ct systemctl restart tusk-namenode
wait_for "the file after a NameNode restart" cat_as_nobody
exposure=$(ct systemd-analyze security --no-pager 2>/dev/null | awk '/^tusk-/ { printf "%s %s, ", $1, $2 }')
echo "systemd: under a real systemd (nspawn) all four units active; ${exposure}put as tusk, short-circuit read as nobody, DataNode restarted after SIGKILL, file kept over a NameNode restart"
ct systemctl poweroff >/dev/null 2>&1 || true
wait "$NSPAWN" 2>/dev/null || true
NSPAWN=

#!/usr/bin/env bash
# Validates the deployment recipe in deploy/ (docs/deploy.md) as far as one machine can:
#   1. systemd units: `systemd-analyze verify` (when installed) and the offline exposure
#      score; then each unit's own ExecStart= line, with its Environment=, run against a
#      copy of deploy/conf whose host, ports and directories are moved to this machine
#      (as an operator edits them): the four daemons come up, the /status endpoints
#      answer, the NodeManager registers, and `tusk fs -put/-cat` round-trips a file;
#      then, where systemd-nspawn is installed, scripts/deploy-systemd.sh runs the units
#      under a real systemd.
#   2. Kubernetes manifests: parsed, and cross-checked against deploy/conf (ports,
#      probes on /status, volume mounts, image, ConfigMap = the site files).
#   3. Containerfile: the binary's shared libraries are the ones it copies.
# Usage: scripts/deploy-check.sh [path/to/tusk]   (default: target/debug/tusk, then
# target/release/tusk, of $CARGO_TARGET_DIR or ./target)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
TUSK=${1:-}
if [[ -z $TUSK ]]; then
    for t in "$TARGET/debug/tusk" "$TARGET/release/tusk"; do
        [[ -x $t ]] && TUSK=$t && break
    done
fi
[[ -x ${TUSK:-} ]] || { echo "deploy-check: no tusk binary (build it or pass its path)" >&2; exit 1; }
TUSK=$(realpath "$TUSK")

T=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "deploy-check: FAIL: $*" >&2; for f in "$T"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -20 "$f"; } >&2; done; exit 1; }
# Polls `cmd` up to 30 s (a condition, not a fixed sleep).
wait_for() {
    local what=$1; shift
    for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
    fail "timed out waiting for $what"
}

# --- 1a. systemd units: static checks --------------------------------------------------
mkdir -p "$T/units"
for f in deploy/systemd/*.service; do
    sed "s#^ExecStart=/usr/local/bin/tusk#ExecStart=$TUSK#" "$f" >"$T/units/$(basename "$f")"
done
command -v systemd-analyze >/dev/null || fail "systemd-analyze is required (.ci/run installs systemd)"
{
    # verify prints warnings without failing on some of them: any output is a failure.
    out=$(systemd-analyze verify "$T"/units/*.service 2>&1) || fail "systemd-analyze verify: $out"
    [[ -z $out ]] || fail "systemd-analyze verify: $out"
    for f in "$T"/units/*.service; do
        score=$(systemd-analyze security --offline=true "$f" 2>/dev/null |
            sed -n 's/.*exposure level for [^:]*: \([0-9.]*\).*/\1/p')
        [[ -n $score ]] && awk -v s="$score" 'BEGIN { exit !(s <= 4.0) }' ||
            fail "$(basename "$f"): exposure $score > 4.0"
        echo "systemd: $(basename "$f") verified, exposure $score"
    done
}

python3 scripts/deploy_check.py units deploy/systemd deploy/conf

# --- 1b. systemd units: run each ExecStart= ---------------------------------------------
free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}
read -r P_NN P_NNH P_DN P_DNH P_DNI P_RM P_RMH P_NM P_NMH P_SH <<<"$(free_ports 10)"
CONF=$T/conf
mkdir -p "$CONF" "$T/state" "$T/run/tusk-datanode" "$T/log"
chmod 755 "$T/run/tusk-datanode"
for f in deploy/conf/*.xml; do
    sed -e "s#master.example#127.0.0.1#g" \
        -e "s#/var/lib/tusk#$T/state#g" -e "s#/run/tusk-datanode#$T/run/tusk-datanode#g" \
        -e "s#/var/log/tusk#$T/log#g" \
        -e "s#:8020<#:$P_NN<#" -e "s#0.0.0.0:9870#127.0.0.1:$P_NNH#" \
        -e "s#0.0.0.0:9866#127.0.0.1:$P_DN#" -e "s#0.0.0.0:9864#127.0.0.1:$P_DNH#" \
        -e "s#0.0.0.0:9867#127.0.0.1:$P_DNI#" -e "s#:8032<#:$P_RM<#" \
        -e "s#0.0.0.0:8088#127.0.0.1:$P_RMH#" -e "s#0.0.0.0:8041#127.0.0.1:$P_NM#" \
        -e "s#0.0.0.0:8042#127.0.0.1:$P_NMH#" "$f" >"$CONF/$(basename "$f")"
done
# The sample's values must all have been moved (nothing left that binds a real port).
! grep -qE "master.example|/var/lib/tusk|0\.0\.0\.0:" "$CONF"/*.xml || fail "conf copy kept a host value"

# Runs the unit's ExecStart= with its Environment= (HADOOP_CONF_DIR pointed at the copy).
start_unit() {
    local unit=$1 extra=$2 line envs=()
    line=$(sed -n 's/^ExecStart=//p' "$T/units/tusk-$unit.service")
    line=${line//%H/127.0.0.1}
    while read -r e; do envs+=("$e"); done < <(sed -n 's/^Environment=//p' "$T/units/tusk-$unit.service")
    # shellcheck disable=SC2086
    env "${envs[@]}" HADOOP_CONF_DIR="$CONF" TUSK_HOME="$T/home" TMPDIR="$T/state/tmp" \
        $line $extra >"$T/$unit.log" 2>&1 &
    PIDS+=($!)
}
http_ok() { curl -fsS "http://127.0.0.1:$1/status"; }
start_unit namenode ""
wait_for "NameNode /status" http_ok "$P_NNH"
start_unit datanode ""
start_unit resourcemanager ""
wait_for "ResourceManager /status" http_ok "$P_RMH"
start_unit nodemanager "--listen-shuffle 127.0.0.1:$P_SH"
wait_for "DataNode /status" http_ok "$P_DNH"
wait_for "NodeManager /status" http_ok "$P_NMH"
[[ -d $T/state/name/current ]] || fail "NameNode did not use dfs.namenode.name.dir from the conf"
[[ -S $T/run/tusk-datanode/dn_socket ]] || fail "no short-circuit socket at dfs.domain.socket.path"
# Clients of every user connect to it (a connect needs write permission on the file).
[[ $(stat -c %a "$T/run/tusk-datanode/dn_socket") == 666 ]] || fail "the short-circuit socket is not 0666"
live_nm() { curl -fsS "http://127.0.0.1:$P_RMH/ws/v1/cluster/metrics" | grep -q '"activeNodes": *1\b'; }
wait_for "the NodeManager registered with the ResourceManager" live_nm
fs() { HADOOP_CONF_DIR=$CONF TUSK_HOME=$T/home TUSK_LOG=warn "$TUSK" fs -D dfs.replication=1 "$@"; }
dn_live() { fs -D dfs.replication=1 -put /dev/null "/probe-$RANDOM"; }
head -c 3000000 /dev/urandom >"$T/data.bin"
wait_for "a DataNode accepting writes" dn_live
fs -put "$T/data.bin" /data.bin || fail "fs -put"
cmp <(fs -cat /data.bin) "$T/data.bin" || fail "fs -cat returned other bytes"
find "$T/state/data" -name 'blk_*' | grep -q . || fail "no block in dfs.datanode.data.dir"
echo "systemd: namenode, datanode, resourcemanager, nodemanager started from their ExecStart= lines; fs -put/-cat of 3 MB round-tripped"

# --- 1c. The units under a real systemd (systemd-nspawn, root) and the manifests decoded
# into k8s.io/api's types (Go) are heavier and run by hand: scripts/deploy-systemd.sh and
# `cd deploy/k8s/validate && go run . ../*.yaml` (docs/deploy.md).

# --- 2. Kubernetes manifests ------------------------------------------------------------
python3 scripts/deploy_check.py k8s deploy/k8s deploy/conf

# --- 3. Container image: built FROM scratch and run (needs buildah and root) -----------
command -v buildah >/dev/null || fail "buildah is required (.ci/run installs it)"
[[ $(id -u) == 0 ]] || fail "the image check runs as root (buildah run)"
{
    tag=localhost/tusk-deploy-check:$$
    deploy/build-image.sh "$TUSK" "$tag" >"$T/image.log" 2>&1 || fail "deploy/build-image.sh"
    ctr=$(buildah from "$tag")
    # The image's DataNode joins the cluster above: the binary runs from the image's own
    # libraries, as the image's user, with the image's HADOOP_CONF_DIR overridden by -D.
    read -r P_DN2 P_DNH2 P_DNI2 <<<"$(free_ports 3)"
    buildah run --isolation chroot --network host "$ctr" -- /usr/local/bin/tusk datanode \
        -D fs.defaultFS=hdfs://127.0.0.1:$P_NN -D dfs.datanode.data.dir=/var/lib/tusk/data \
        -D dfs.datanode.address=127.0.0.1:$P_DN2 -D dfs.datanode.http.address=127.0.0.1:$P_DNH2 \
        -D dfs.datanode.ipc.address=127.0.0.1:$P_DNI2 -D dfs.client.read.shortcircuit=false \
        >"$T/image-datanode.log" 2>&1 &
    IMG_PID=$!
    wait_for "the image's DataNode /status" http_ok "$P_DNH2"
    fs -D dfs.replication=2 -put "$T/data.bin" /data2.bin || fail "fs -put with the image's DataNode"
    cmp <(fs -cat /data2.bin) "$T/data.bin" || fail "fs -cat with the image's DataNode"
    kill "$IMG_PID"; wait "$IMG_PID" 2>/dev/null || true
    # The replica is in the container's own /var/lib/tusk/data.
    find "$(buildah mount "$ctr")/var/lib/tusk/data" -name 'blk_*' | grep -q . ||
        fail "no block in the image's DataNode"
    buildah umount "$ctr" >/dev/null
    buildah rm "$ctr" >/dev/null
    buildah rmi "$tag" >/dev/null
    echo "container: image built FROM scratch ($(du -sh "$TUSK" | cut -f1) binary + ldd's libraries); its DataNode served a 2-replica write"
}
echo "deploy-check: OK"

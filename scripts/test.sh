#!/usr/bin/env bash
# The test command: every Rust test (the testbed tests need root), then Hadoop's FsShell
# against Tusk (RPC and webhdfs://; then an HA nameservice through two kill -9 failovers
# of the active NameNode; then on a secure cluster, Kerberos and privacy; then
# swebhdfs:// over HTTPS), then Hadoop's `yarn` CLI (application, node,
# queue) against Tusk's ResourceManager, then Hadoop's MapReduce on a secure cluster
# (Kerberos, delegation tokens renewed and cancelled by the ResourceManager, containers
# holding tokens only), then Hadoop's own MapReduce jobs (examples,
# streaming) on Tusk's YARN and DFS, on `tusk local` and on a 3-node testbed, then the
# same MapReduce through a kill -9 of the ResourceManager and of a NodeManager, then
# the heartbeat sweep's Hadoop-MapReduce system in its smallest form, then
# Spark's own YARN client, AM and executors (client and cluster mode) on Tusk's YARN and
# DFS, then Hadoop's own FileSystem contract tests, then Hadoop's RPC client with YARN
# tokens against Tusk's SASL TOKEN auth, then Hadoop's shuffle client pieces against a
# NodeManager's mapreduce_shuffle, then WebHDFS through the Python hdfs package, then the
# deployment recipe (deploy/: systemd units, image, Kubernetes manifests), then TPC-H at SF
# 0.01 through the DFS, in the client and on the cluster (`tusk sql --cluster`), every
# answer checked against DuckDB.
# Kerberos and SQL are built in (`--features kerberos,sql`; .ci/run installs what they need).
# The scripts run the `tusk` binary that `cargo test` built for the CLI's integration
# tests (with the same features), and the scripts' own Rust tests build with the same
# features too (TUSK_CARGO_FEATURES), so nothing is compiled twice. Each step's time is
# printed (`test.sh: STEP took Ns`) and a summary at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
export TUSK_CARGO_FEATURES=tusk-cli/kerberos,tusk-cli/sql
TUSK=${CARGO_TARGET_DIR:-target}/debug/tusk
TIMES=()
step() {
  local start=$SECONDS
  "$@"
  TIMES+=("$(printf '%5d s  %s' $((SECONDS - start)) "$*")")
  echo "test.sh: $* took $((SECONDS - start)) s"
}
step cargo test --workspace --no-fail-fast --features "$TUSK_CARGO_FEATURES"
[ -x "$TUSK" ] || { echo "test.sh: cargo test built no $TUSK" >&2; exit 1; }
step scripts/compat-hadoop.sh "$TUSK"
step scripts/compat-hadoop-ha.sh "$TUSK"
step scripts/compat-hadoop-secure.sh "$TUSK"
step scripts/compat-hadoop-https.sh "$TUSK"
step scripts/compat-yarn.sh "$TUSK"
step scripts/compat-mapreduce-secure.sh "$TUSK"
step scripts/compat-mapreduce.sh "$TUSK"
step env TUSK_TESTBED=testbeds/repl-10gige.toml scripts/compat-mapreduce.sh "$TUSK"
step scripts/compat-mapreduce-recovery.sh "$TUSK"
step scripts/hadoop-mr-sweep.sh "$TUSK"
step scripts/compat-spark.sh "$TUSK"
step scripts/hadoop-contract.sh "$TUSK"
step scripts/hadoop-sasl.sh
step scripts/hadoop-shuffle.sh
step scripts/webhdfs-python.sh "$TUSK"
step scripts/deploy-check.sh "$TUSK"
step scripts/check-tpch.sh "$TUSK"
echo "test.sh: all steps passed in $SECONDS s"
printf '%s\n' "${TIMES[@]}"

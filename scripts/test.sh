#!/usr/bin/env bash
# The test command: every Rust test (the testbed tests need root), then Hadoop's FsShell
# against Tusk (RPC and webhdfs://; then on a secure cluster, Kerberos and privacy), then Hadoop's `yarn` CLI (application, node,
# queue) against Tusk's ResourceManager, then Hadoop's own MapReduce jobs (examples,
# streaming) on Tusk's YARN and DFS, on `tusk local` and on a 3-node testbed, then the
# same MapReduce through a kill -9 of the ResourceManager and of a NodeManager, then
# the heartbeat sweep's Hadoop-MapReduce system in its smallest form, then
# Spark's own YARN client, AM and executors (client and cluster mode) on Tusk's YARN and
# DFS, then Hadoop's own FileSystem contract tests, then Hadoop's RPC client with YARN
# tokens against Tusk's SASL TOKEN auth, then Hadoop's shuffle client pieces against a
# NodeManager's mapreduce_shuffle, then WebHDFS through the Python hdfs package, then the
# deployment recipe (deploy/: systemd units, image, Kubernetes manifests), then TPC-H at SF
# 0.01 through the DFS, every answer checked against DuckDB (builds --features sql).
# Kerberos and SQL are built in (`--features kerberos,sql`; .ci/run installs what they need).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --no-fail-fast --features tusk-cli/kerberos,tusk-cli/sql
cargo build -p tusk-cli --features kerberos,sql
scripts/compat-hadoop.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/compat-hadoop-secure.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/compat-yarn.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/compat-mapreduce.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
TUSK_TESTBED=testbeds/repl-10gige.toml scripts/compat-mapreduce.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/compat-mapreduce-recovery.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/hadoop-mr-sweep.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/compat-spark.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/hadoop-contract.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/hadoop-sasl.sh
scripts/hadoop-shuffle.sh
scripts/webhdfs-python.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/deploy-check.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"
scripts/check-tpch.sh "${CARGO_TARGET_DIR:-target}/debug/tusk"

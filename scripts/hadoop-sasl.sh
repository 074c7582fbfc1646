#!/usr/bin/env bash
# Hadoop 3.4.2's own RPC client and token storage against Tusk's SASL TOKEN auth
# (DIGEST-MD5) and YARN tokens: compiles scripts/hadoop-sasl/HadoopTokens.java and
# HadoopContainerManager.java against Hadoop's jars and runs the Rust tests that drive
# them (crates/rpc/tests/hadoop_client.rs; the NodeManager's ContainerManagementProtocolPB
# with NMTokens in crates/nodemanager/tests/hadoop_container_manager.rs), ignored by
# plain `cargo test`.
# Usage: scripts/hadoop-sasl.sh   (needs Java and Maven; .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "hadoop-sasl: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
SRC=scripts/hadoop-sasl
CP_FILE=$SRC/classpath.txt
if [ ! -s "$CP_FILE" ] || [ $SRC/pom.xml -nt "$CP_FILE" ]; then
  echo "hadoop-sasl: resolving Hadoop 3.4.2's YARN client from Maven Central..."
  mvn -q -f $SRC/pom.xml dependency:build-classpath -Dmdep.outputFile="$PWD/$CP_FILE.tmp" >/dev/null
  mv "$CP_FILE.tmp" "$CP_FILE"
fi
WORK=$(mktemp -d /tmp/tusk-hadoop-sasl.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
javac -nowarn -cp "$(cat "$CP_FILE")" -d "$WORK/classes" $SRC/HadoopTokens.java \
  $SRC/HadoopContainerManager.java
export HADOOP_SASL_CLASSPATH="$WORK/classes:$(cat "$CP_FILE")"
# With the features scripts/test.sh built everything with, so nothing compiles twice.
cargo test --workspace ${TUSK_CARGO_FEATURES:+--features "$TUSK_CARGO_FEATURES"} \
  --test hadoop_client --test hadoop_container_manager -- --ignored

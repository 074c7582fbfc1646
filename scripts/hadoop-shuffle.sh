#!/usr/bin/env bash
# Hadoop 3.4.2's own shuffle client pieces against a Tusk NodeManager: FetchWithHadoop
# (scripts/hadoop-shuffle/) computes UrlHash with SecureShuffleUtils, checks ReplyHash
# with verifyReply and reads each map with ShuffleHeader.readFields, the way Hadoop's
# reducers fetch; the NodeManager test that runs it (ignored in plain cargo test runs,
# which need no Java) sets up the map outputs and the job token.
# Usage: scripts/hadoop-shuffle.sh   (needs Java and Maven; .ci/run installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "hadoop-shuffle: Java and Maven are required (.ci/run installs them)" >&2; exit 1
fi
SRC=scripts/hadoop-shuffle
CP_FILE=$SRC/classpath.txt
if [ ! -s "$CP_FILE" ] || [ $SRC/pom.xml -nt "$CP_FILE" ]; then
  echo "hadoop-shuffle: resolving Hadoop 3.4.2's MapReduce client from Maven Central..."
  mvn -q -f $SRC/pom.xml dependency:build-classpath -Dmdep.outputFile="$PWD/$CP_FILE.tmp" >/dev/null
  mv "$CP_FILE.tmp" "$CP_FILE"
fi
# With the features scripts/test.sh built everything with, so nothing compiles twice.
HADOOP_SHUFFLE_CLASSPATH=$(cat "$CP_FILE") \
  cargo test --workspace ${TUSK_CARGO_FEATURES:+--features "$TUSK_CARGO_FEATURES"} \
  --test hadoop_shuffle -- --ignored --exact hadoops_own_fetcher_pieces_read_the_reply

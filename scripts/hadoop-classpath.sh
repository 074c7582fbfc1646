#!/usr/bin/env bash
# Prints the path of a file holding the Java classpath of Apache Hadoop 3.4.2's daemons
# (resolved from Maven Central once, then reused), for `tusk testbed up --hadoop-classpath`.
set -euo pipefail
cd "$(dirname "$0")"
CP_FILE=$PWD/hadoop-daemons/classpath.txt
if [ ! -s "$CP_FILE" ]; then
  command -v mvn >/dev/null || { echo "hadoop-classpath: Maven is required (.ci/run installs it)" >&2; exit 1; }
  mvn -q -f hadoop-daemons/pom.xml dependency:build-classpath -Dmdep.outputFile="$CP_FILE.tmp" >&2
  mv "$CP_FILE.tmp" "$CP_FILE"
fi
echo "$CP_FILE"

#!/usr/bin/env bash
# Prints the path of a file holding the Java classpath of Apache Hadoop 3.4.2's daemons
# (resolved from Maven Central once, then reused), for `tusk testbed up --hadoop-classpath`.
set -euo pipefail
cd "$(dirname "$0")"
source lib/maven-classpath.sh
maven_classpath hadoop-daemons

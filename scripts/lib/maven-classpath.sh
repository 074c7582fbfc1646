# Sourced by the scripts that run Java programs from Maven Central against Tusk
# (hadoop-classpath.sh, compat-spark.sh).
#
# maven_classpath DIR: prints the path of DIR/classpath.txt, the Java classpath of the
# dependencies of DIR/pom.xml, resolved from Maven Central once (again when the pom is
# newer than the file), then reused.
maven_classpath() {
  local dir
  dir=$(cd "$1" && pwd)
  local cp_file=$dir/classpath.txt
  if [ ! -s "$cp_file" ] || [ "$dir/pom.xml" -nt "$cp_file" ]; then
    command -v mvn >/dev/null || { echo "maven_classpath: Maven is required (.ci/run installs it)" >&2; return 1; }
    mvn -q -f "$dir/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cp_file.tmp" >&2
    mv "$cp_file.tmp" "$cp_file"
  fi
  echo "$cp_file"
}

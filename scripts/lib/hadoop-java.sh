# Sourced by the scripts that run Apache Hadoop's own Java programs against Tusk
# (compat-hadoop.sh, compat-yarn.sh, compat-mapreduce.sh, compat-spark.sh).
#
# hadoop_java CLASSPATH_FILE CLASS ARGS...: runs CLASS with $HADOOP_JAVA_CONF_DIR (the
# *-site.xml files it reads) ahead of the classpath in CLASSPATH_FILE. Its stderr,
# without log4j's noise, goes to this function's stderr before the function returns (a
# `2> >(filter)` process substitution is not waited for, so a caller reading the
# redirected file at once could find it still empty). Its exit status is the program's.
# $HADOOP_JAVA_OPTS, when set, holds more JVM options (split at spaces).
hadoop_java() {
  local cp_file=$1 class=$2; shift 2
  { java -Djava.net.preferIPv4Stack=true ${HADOOP_JAVA_OPTS:-} -cp "${HADOOP_JAVA_CONF_DIR:?}:$(cat "$cp_file")" \
      -Dlog4j.configuration=none "$class" "$@" 2>&1 1>&3 3>&- \
      | { grep -v -e '^log4j' -e 'WARN util.NativeCodeLoader' >&2 || true; }; } 3>&1
}

# mapreduce_job_opts CP_FILE: sets JOB_OPTS to what a Hadoop installation's
# mapred-site.xml says with HADOOP_MAPRED_HOME (where the containers find Hadoop's jars,
# those in CP_FILE) and small containers for a 2-core machine.
mapreduce_job_opts() {
  JOB_OPTS=(
    -Dmapreduce.application.classpath="$(tr ':' ',' < "$1")"
    -Dyarn.app.mapreduce.am.resource.mb=512 -Dyarn.app.mapreduce.am.command-opts=-Xmx384m
    -Dmapreduce.map.memory.mb=384 -Dmapreduce.map.java.opts=-Xmx256m
    -Dmapreduce.reduce.memory.mb=384 -Dmapreduce.reduce.java.opts=-Xmx256m
    -Dmapreduce.client.progressmonitor.pollinterval=200
  )
}

# hadoop_jar CP_FILE JAR ARGS...: Hadoop's `hadoop jar`.
hadoop_jar() {
  local cp_file=$1 jar=$2; shift 2
  hadoop_java "$cp_file" org.apache.hadoop.util.RunJar "$jar" "$@"
}

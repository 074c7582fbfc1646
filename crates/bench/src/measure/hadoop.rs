//! Real Hadoop 3.4.2 in the same run, for the benchmarks' `--vs-hadoop` columns: the
//! Hadoop anchor (a Maven project of small runners such as `TeraRunner` and
//! `YarnTinyJob`, see its README) started as a JVM with the anchor's own options
//! (`jvmopts.sh`), its `RESULT key=value ...` lines parsed; and what every run of
//! Hadoop's own daemons shares (on the testbed, or on loopback for `same_jar`): their JVM
//! options, `JAVA_HOME`, the configuration files beside the `*-site.xml`. Nothing here
//! stores a Hadoop figure: every one comes from a JVM this run started.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};

/// Where the anchor lives unless told: beside the project, as the design notes say.
pub const DEFAULT_ANCHOR_DIR: &str = "../shared/anchors/hadoop";

/// What every Hadoop daemon JVM runs with: small heaps and the quick JIT on a 2-core
/// host, IPv4, and the module openings Java 17 needs for Hadoop 3.4.
pub const DAEMON_JVM_OPTS: &[&str] = &[
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.net.preferIPv4Stack=true",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
];

/// Task and AM JVMs: the same quick start, smaller heaps.
pub const TASK_JVM_OPTS: &str =
    "-Xmx200m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true";

/// `$JAVA_HOME`, or the installation the `java` on the path belongs to.
pub fn java_home() -> Result<PathBuf> {
    if let Ok(home) = std::env::var("JAVA_HOME") {
        return Ok(PathBuf::from(home));
    }
    let out = Command::new("sh")
        .args(["-c", "readlink -f \"$(command -v java)\""])
        .output()?;
    let java = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    java.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .filter(|_| out.status.success())
        .ok_or_else(|| {
            BenchError::InvalidOptions("java is not installed (Hadoop's daemons need it)".into())
        })
}

/// Writes what Hadoop's daemons need in their configuration directory beside the
/// `*-site.xml` files: one `default` queue for the CapacityScheduler (half of it for
/// AMs), console logging, and the (empty) web app folders their HTTP servers look up
/// on the classpath, which the Maven jars do not carry.
pub fn write_shared_conf(conf: &Path) -> std::io::Result<()> {
    for app in ["hdfs", "datanode", "secondary", "journal", "static"] {
        std::fs::create_dir_all(conf.join("webapps").join(app))?;
    }
    std::fs::write(
        conf.join("capacity-scheduler.xml"),
        tusk_common::config::site_xml(&[
            ("yarn.scheduler.capacity.root.queues", "default".into()),
            (
                "yarn.scheduler.capacity.root.default.capacity",
                "100".into(),
            ),
            (
                "yarn.scheduler.capacity.root.default.maximum-capacity",
                "100".into(),
            ),
            (
                "yarn.scheduler.capacity.maximum-am-resource-percent",
                "0.5".into(),
            ),
        ]),
    )?;
    std::fs::write(
        conf.join("log4j.properties"),
        tusk_common::config::CLIENT_LOG4J_PROPERTIES,
    )
}

/// The Hadoop anchor directory (`run.sh`, `jvmopts.sh`, `pom.xml`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HadoopAnchor {
    pub dir: PathBuf,
}

/// One `RESULT bench=NAME k=v ...` line a runner printed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ResultLine {
    pub bench: String,
    pub fields: BTreeMap<String, String>,
}

impl ResultLine {
    /// `RESULT bench=x a=1 b=2` → bench `x`, fields `a`, `b`; any other line → `None`.
    pub fn parse(line: &str) -> Option<ResultLine> {
        let rest = line.trim().strip_prefix("RESULT ")?;
        let mut fields: BTreeMap<String, String> = rest
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let bench = fields.remove("bench")?;
        Some(ResultLine { bench, fields })
    }

    /// Field `key` as a number.
    pub fn number(&self, key: &str) -> Result<f64> {
        self.fields
            .get(key)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|x| x.is_finite())
            .ok_or_else(|| BenchError::TaskFailed {
                path: format!("hadoop {}", self.bench),
                message: format!("no number {key} in {:?}", self.fields),
            })
    }
}

/// What one runner JVM printed, and how long it lived.
#[derive(Clone, Debug)]
pub struct RunnerOutput {
    pub results: Vec<ResultLine>,
    pub process_seconds: f64,
}

impl RunnerOutput {
    /// The lines of one `bench=` kind, in order.
    pub fn lines<'a>(&'a self, bench: &'a str) -> impl Iterator<Item = &'a ResultLine> + 'a {
        self.results.iter().filter(move |r| r.bench == bench)
    }
}

impl HadoopAnchor {
    /// The anchor at `dir`; an error when it has no `jvmopts.sh` (not an anchor).
    pub fn at(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        if !dir.join("jvmopts.sh").is_file() || !dir.join("pom.xml").is_file() {
            return Err(BenchError::InvalidOptions(format!(
                "{}: not the Hadoop anchor (no jvmopts.sh / pom.xml)",
                dir.display()
            )));
        }
        let dir = dir.canonicalize()?;
        Ok(HadoopAnchor { dir })
    }

    /// Compiles the runners (`mvn compile`, which also writes `target/classpath.txt`)
    /// when they are not built yet, as the anchor's `run.sh` does.
    pub fn ensure_built(&self) -> Result<()> {
        if self.dir.join("target/classpath.txt").is_file() {
            return Ok(());
        }
        let status = Command::new("timeout")
            .args(["1200", "mvn", "-q", "-B", "compile"])
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .status()?;
        if !status.success() || !self.dir.join("target/classpath.txt").is_file() {
            return Err(BenchError::TaskFailed {
                path: self.dir.display().to_string(),
                message: format!("building the Hadoop anchor failed ({status})"),
            });
        }
        Ok(())
    }

    /// Runs `anchors.<main>` with `args` (`key=value`) in the working directory `cwd`
    /// (runners leave files in it), bounded by `timeout_secs`; the JVM must exit 0.
    pub fn run(
        &self,
        main: &str,
        args: &[String],
        cwd: &Path,
        timeout_secs: u64,
    ) -> Result<RunnerOutput> {
        self.ensure_built()?;
        std::fs::create_dir_all(cwd)?;
        let base = cwd.join("anchors-base");
        std::fs::create_dir_all(&base)?;
        let log = cwd.join(format!("{main}.err"));
        // jvmopts.sh builds the classpath from the anchor directory: source it there,
        // then start the JVM in `cwd`.
        let script = "cd \"$ANCHOR\" && . ./jvmopts.sh && cd \"$RUN_CWD\" && \
             exec timeout --signal=TERM --kill-after=30 \"$TIMEOUT\" java $JOPTS -cp \"$CP\" \"$@\"";
        let started = Instant::now();
        let out = Command::new("bash")
            .arg("-c")
            .arg(script)
            .arg("bash")
            .arg(format!("anchors.{main}"))
            .args(args)
            .env("ANCHOR", &self.dir)
            .env("RUN_CWD", cwd)
            .env("TIMEOUT", timeout_secs.to_string())
            .env("ANCHORS_BASEDIR", &base)
            .stdin(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .output()?;
        let process_seconds = started.elapsed().as_secs_f64();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            let err = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = err.lines().rev().take(15).collect();
            return Err(BenchError::TaskFailed {
                path: format!("hadoop anchors.{main}"),
                message: format!(
                    "{} after {process_seconds:.1} s; stderr ends:\n{}",
                    out.status,
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                ),
            });
        }
        Ok(RunnerOutput {
            results: stdout.lines().filter_map(ResultLine::parse).collect(),
            process_seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_parse_into_bench_and_fields() {
        let r = ResultLine::parse(
            "RESULT bench=tera.run trial=0 rows=20000 teragenS=1.5 terasortS=3.25",
        )
        .unwrap();
        assert_eq!(r.bench, "tera.run");
        assert_eq!(r.number("terasortS").unwrap(), 3.25);
        assert_eq!(r.fields["rows"], "20000");
        assert!(r.number("missing").is_err());
        assert_eq!(ResultLine::parse("PROCESS section=tera rc=0"), None);
        assert_eq!(ResultLine::parse("RESULT no-bench=1"), None);
    }

    #[test]
    fn a_directory_without_the_anchor_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            HadoopAnchor::at(dir.path()),
            Err(BenchError::InvalidOptions(_))
        ));
    }
}

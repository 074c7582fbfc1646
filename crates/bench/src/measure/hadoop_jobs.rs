//! Hadoop's own job client (`RunJar`, one JVM per job) run against a platform's client
//! configuration — Tusk's (`tusk local up`'s or a testbed's `DIR/conf`) or Hadoop's — and
//! the job's time as its ResourceManager reports it. The benches that run Hadoop 3.4.2's
//! jars unmodified (same-jar, and the studies' Hadoop-MapReduce columns) share it, so a
//! job's time means the same in each: the ResourceManager's submission (`startTime`) to
//! finish (`finishTime`), asked over ApplicationClientProtocolPB after the client exits.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::HADOOP_APPLICATION_CLIENT_PROTOCOL;
use tusk_rpc::{RpcClient, RpcClientOptions};

use crate::error::{BenchError, Result};
use crate::measure::hadoop::{java_home, TASK_JVM_OPTS};

/// Hadoop 3.4.2's examples jar, by the end of its path on the classpath.
pub const EXAMPLES_JAR: &str = "/hadoop-mapreduce-examples-3.4.2.jar";

/// The job client's logging, written beside its logs: the "Submitted application"
/// line is read from its INFO log (a conf dir may have no log4j.properties).
const LOG4J_FILE: &str = "job-client-log4j.properties";

/// Hadoop's job client, with the options every job of a run gets.
#[derive(Clone, Debug)]
pub struct HadoopJobClient {
    pub java_home: PathBuf,
    /// Hadoop 3.4.2's jars, `:`-separated (`scripts/hadoop-classpath.sh`).
    pub classpath: String,
    /// `-D` options (without the `-D`) handed to every job, before its own arguments.
    pub job_options: Vec<String>,
    /// One log per job run is written here.
    pub logs: PathBuf,
    /// Run the client inside this network namespace (`ip netns exec`): a testbed's node.
    pub netns: Option<String>,
}

/// One finished job.
#[derive(Clone, Debug)]
pub struct HadoopJobRun {
    pub application: String,
    /// The ResourceManager's submission → finish.
    pub job_seconds: f64,
    /// The job client's JVM start → exit.
    pub client_seconds: f64,
    /// The ResourceManager's report of the application, after it finished.
    pub report: h::ApplicationReportProto,
    /// The client's log.
    pub log: PathBuf,
}

impl HadoopJobClient {
    /// A client for the jars in `classpath_file`, with `job_options`, logging into `logs`.
    pub fn new(classpath_file: &Path, job_options: Vec<String>, logs: PathBuf) -> Result<Self> {
        let classpath = std::fs::read_to_string(classpath_file)?.trim().to_string();
        std::fs::create_dir_all(&logs)?;
        std::fs::write(
            logs.join(LOG4J_FILE),
            tusk_common::config::CLIENT_LOG4J_PROPERTIES,
        )?;
        Ok(HadoopJobClient {
            java_home: java_home()?,
            classpath,
            job_options,
            logs,
            netns: None,
        })
    }

    /// The jar on the classpath whose path ends with `suffix` (e.g. [`EXAMPLES_JAR`]).
    pub fn jar(&self, suffix: &str) -> Result<String> {
        self.classpath
            .split(':')
            .find(|jar| jar.ends_with(suffix))
            .map(str::to_string)
            .ok_or_else(|| {
                BenchError::InvalidOptions(format!(
                    "no jar ending in {suffix} on Hadoop's classpath (scripts/hadoop-classpath.sh writes it)"
                ))
            })
    }

    /// What every job should get on a small machine, on either platform: where the
    /// containers find Hadoop's jars (a Hadoop installation's mapred-site.xml says it
    /// with HADOOP_MAPRED_HOME), small quick JVMs, the client's polling, `replication`.
    pub fn default_job_options(classpath: &str, replication: u16) -> Vec<String> {
        vec![
            format!(
                "mapreduce.application.classpath={}",
                classpath.replace(':', ",")
            ),
            "yarn.app.mapreduce.am.resource.mb=512".into(),
            format!("yarn.app.mapreduce.am.command-opts={TASK_JVM_OPTS}"),
            "mapreduce.map.memory.mb=384".into(),
            format!("mapreduce.map.java.opts={TASK_JVM_OPTS}"),
            "mapreduce.reduce.memory.mb=384".into(),
            format!("mapreduce.reduce.java.opts={TASK_JVM_OPTS}"),
            "mapreduce.client.progressmonitor.pollinterval=100".into(),
            format!("dfs.replication={replication}"),
        ]
    }

    /// `hadoop jar JAR ARGS[0] -D… ARGS[1..]` against the client configuration in
    /// `conf_dir`, whose ResourceManager `rm` is: the first argument is the program's
    /// name (an example's, or a main class), the job options go right after it. An exit
    /// other than 0, or a final status other than SUCCEEDED, is an error that quotes the
    /// end of the client's log. `label` names the log file.
    pub async fn run(
        &self,
        conf_dir: &Path,
        rm: &RpcClient,
        jar: &str,
        args: &[String],
        label: &str,
    ) -> Result<HadoopJobRun> {
        let (program, rest) = args.split_first().ok_or_else(|| {
            BenchError::InvalidOptions("a Hadoop job needs at least its program's name".into())
        })?;
        let main = ["org.apache.hadoop.util.RunJar", jar, program.as_str()];
        self.run_main(conf_dir, rm, &main, rest, label).await
    }

    /// [`HadoopJobClient::run`] of a main class on the classpath instead of a jar's
    /// program, `java -cp CONF:CLASSPATH CLASS -D… ARGS`: for a program whose jar's
    /// driver needs more than the classpath has (TestDFSIO in jobclient's tests jar,
    /// whose `MapredTestDriver` also wants hadoop-common's tests).
    pub async fn run_class(
        &self,
        conf_dir: &Path,
        rm: &RpcClient,
        class: &str,
        args: &[String],
        label: &str,
    ) -> Result<HadoopJobRun> {
        self.run_main(conf_dir, rm, &[class], args, label).await
    }

    /// `java -cp CONF:CLASSPATH MAIN… -D… ARGS`, the job's time from the RM.
    async fn run_main(
        &self,
        conf_dir: &Path,
        rm: &RpcClient,
        main: &[&str],
        args: &[String],
        label: &str,
    ) -> Result<HadoopJobRun> {
        let log_path = self.logs.join(format!("{label}.log"));
        let log = std::fs::File::create(&log_path)?;
        let java = self.java_home.join("bin/java");
        let mut cmd = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(java);
                c
            }
            None => Command::new(java),
        };
        cmd.args(["-Djava.net.preferIPv4Stack=true", "-Xmx512m"])
            .arg(format!(
                "-Dlog4j.configuration=file:{}",
                self.logs.join(LOG4J_FILE).display()
            ))
            .arg("-cp")
            .arg(format!("{}:{}", conf_dir.display(), self.classpath))
            .args(main);
        for option in &self.job_options {
            cmd.arg(format!("-D{option}"));
        }
        cmd.args(args)
            .env("HADOOP_CONF_DIR", conf_dir)
            .env("JAVA_HOME", &self.java_home)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let started = Instant::now();
        let status = tokio::task::spawn_blocking(move || cmd.status())
            .await
            .map_err(|e| BenchError::TaskFailed {
                path: label.into(),
                message: e.to_string(),
            })??;
        let client_seconds = started.elapsed().as_secs_f64();
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let failed = |message: String| BenchError::TaskFailed {
            path: label.into(),
            message: format!(
                "{message}; the client's log ends:\n{}",
                tusk_common::logging::last_lines(&text, 15)
            ),
        };
        if !status.success() {
            return Err(failed(format!("the job client exited with {status}")));
        }
        let application = submitted_application(&text)
            .ok_or_else(|| failed("no \"Submitted application\" in the client's log".into()))?;
        let report = application_report(rm, &application)
            .await
            .map_err(&failed)?;
        if report.final_application_status() != h::FinalApplicationStatusProto::AppSucceeded {
            return Err(failed(format!(
                "final status {:?}",
                report.final_application_status()
            )));
        }
        Ok(HadoopJobRun {
            application,
            job_seconds: (report.finish_time() - report.start_time()) as f64 / 1e3,
            client_seconds,
            report,
            log: log_path,
        })
    }
}

/// Hadoop's examples `sort` of `input` into `output` with `reduces` reduces, over the
/// key/value text Tusk's own engine sorts (`KeyValueTextInputFormat`, Text keys and
/// values, text out): the program's name and its arguments.
pub fn key_value_sort_args(input: &str, output: &str, reduces: u32) -> Vec<String> {
    [
        "sort",
        "-r",
        &reduces.to_string(),
        "-inFormat",
        "org.apache.hadoop.mapreduce.lib.input.KeyValueTextInputFormat",
        "-outFormat",
        "org.apache.hadoop.mapreduce.lib.output.TextOutputFormat",
        "-outKey",
        "org.apache.hadoop.io.Text",
        "-outValue",
        "org.apache.hadoop.io.Text",
        input,
        output,
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

/// A client of a ResourceManager's ApplicationClientProtocolPB at `addr`.
pub fn rm_client(addr: &str) -> RpcClient {
    RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            protocol: HADOOP_APPLICATION_CLIENT_PROTOCOL.into(),
            ..Default::default()
        },
    )
}

/// The application id in the job client's "Submitted application application_…" line
/// (YarnClientImpl logs it once per job).
pub fn submitted_application(log: &str) -> Option<String> {
    log.lines().find_map(|line| {
        let (_, after) = line.split_once("Submitted application ")?;
        let id = after.split_whitespace().next()?;
        id.starts_with("application_").then(|| id.to_string())
    })
}

/// `application_<cluster timestamp>_<id>` as Hadoop's ApplicationIdProto.
pub fn application_id(text: &str) -> Option<h::ApplicationIdProto> {
    let mut parts = text.strip_prefix("application_")?.split('_');
    let cluster_timestamp = parts.next()?.parse().ok()?;
    let id = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some(h::ApplicationIdProto {
        cluster_timestamp: Some(cluster_timestamp),
        id: Some(id),
    })
}

/// The ResourceManager's report of `application`.
pub async fn application_report(
    rm: &RpcClient,
    application: &str,
) -> std::result::Result<h::ApplicationReportProto, String> {
    let id = application_id(application)
        .ok_or_else(|| format!("{application:?} is not an application id"))?;
    let resp: h::GetApplicationReportResponseProto = rm
        .call(
            "getApplicationReport",
            &h::GetApplicationReportRequestProto {
                application_id: Some(id),
            },
        )
        .await
        .map_err(|e| format!("getApplicationReport {application}: {e}"))?;
    resp.application_report
        .ok_or_else(|| format!("no report of {application}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_application_comes_from_the_clients_log() {
        let log = "2026-11-28 02:10:01,123 INFO mapreduce.JobSubmitter: number of splits:2\n\
                   2026-11-28 02:10:01,456 INFO impl.YarnClientImpl: Submitted application application_1764295801000_0007\n\
                   2026-11-28 02:10:02,000 INFO mapreduce.Job: Running job: job_1764295801000_0007\n";
        assert_eq!(
            submitted_application(log).as_deref(),
            Some("application_1764295801000_0007")
        );
        assert_eq!(submitted_application("no job here\n"), None);
        let id = application_id("application_1764295801000_0007").unwrap();
        assert_eq!((id.cluster_timestamp(), id.id()), (1764295801000, 7));
        assert!(application_id("application_12").is_none());
        assert!(application_id("container_1_2").is_none());
    }
}

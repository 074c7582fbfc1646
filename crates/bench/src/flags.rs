//! How the experiments' options are read from a command line: the experiments' own
//! `XxxOptions` derive [`clap::Args`], and these parse their sizes and durations.

use std::time::Duration;

use tusk_common::config::{parse_duration, parse_size};
use tusk_common::Timing;

/// A byte count with an optional k/m/g suffix (`128m`).
pub fn size(s: &str) -> Result<u64, String> {
    parse_size(s).ok_or_else(|| format!("not a size: {s}"))
}

/// A duration with a unit (`5s`, `200ms`); a bare number is seconds.
pub fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s, Duration::from_secs(1)).ok_or_else(|| format!("not a duration: {s}"))
}

/// A timing mode: `classic` (Hadoop's) or `event-driven` (Tusk's).
pub fn timing(s: &str) -> Result<Timing, String> {
    Timing::parse("--timings", s).map_err(|e| e.to_string())
}

/// A `KEY=VALUE` word (`--job-conf`).
pub fn key_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .ok_or_else(|| format!("{s}: expected KEY=VALUE"))
}

/// `KEY=VALUE` pairs kept in their order, written to and read from JSON as one object.
pub mod pairs_as_map {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        let map: BTreeMap<&str, &str> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        map.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        Ok(BTreeMap::<String, String>::deserialize(d)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Debug;
    use std::path::PathBuf;
    use std::time::Duration;

    use clap::Parser;

    use crate::experiments::{
        am_heartbeats, dfsio, heartbeat_sweep, heartbeats, interconnects, job_latency,
        nnthroughput, replication, replication_links, same_jar, short_circuit, startup, terasort,
    };

    #[derive(Parser)]
    struct Command<O: clap::Args> {
        #[command(flatten)]
        options: O,
    }

    fn try_parse<O: clap::Args>(args: &[&str]) -> Result<O, clap::Error> {
        Command::<O>::try_parse_from(std::iter::once("bench").chain(args.iter().copied()))
            .map(|command| command.options)
    }

    fn parse<O: clap::Args>(args: &[&str]) -> O {
        try_parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    fn parses<O: clap::Args>(args: &[&str]) -> bool {
        try_parse::<O>(args).is_ok()
    }

    /// No flags give the experiment's programmatic defaults, skipped fields included.
    fn assert_defaults<O: clap::Args + Debug>(expected: O) {
        assert_eq!(format!("{:?}", parse::<O>(&[])), format!("{expected:?}"));
    }

    #[test]
    fn no_flags_are_the_defaults() {
        assert_defaults(startup::StartupOptions::default());
        assert_defaults(dfsio::DfsioOptions::default());
        assert_defaults(interconnects::InterconnectsOptions {
            tusk_exe: PathBuf::new(),
            dir: PathBuf::from("/tmp/tusk-bench-interconnects"),
            ..Default::default()
        });
        assert_defaults(short_circuit::ShortCircuitOptions::default());
        assert_defaults(replication::ReplicationOptions::default());
        assert_defaults(nnthroughput::NnThroughputOptions::default());
        assert_defaults(am_heartbeats::AmHeartbeatOptions::new(PathBuf::new()));
        assert_defaults(job_latency::JobLatencyOptions {
            tusk_exe: PathBuf::new(),
            ..Default::default()
        });
        assert_defaults(heartbeat_sweep::SweepOptions::new(PathBuf::new()));
        assert_defaults(terasort::TerasortOptions {
            tusk_exe: PathBuf::new(),
            ..Default::default()
        });
        assert_defaults(replication_links::ReplicationLinksOptions {
            testbeds: ["1gige", "10gige", "ipoib-32g"]
                .map(|class| PathBuf::from(format!("testbeds/repl-{class}.toml")))
                .to_vec(),
            tusk_exe: PathBuf::new(),
            ..Default::default()
        });
        assert_eq!(
            format!(
                "{:?}",
                parse::<same_jar::SameJarOptions>(&["--hadoop-classpath", "cp"])
            ),
            format!(
                "{:?}",
                same_jar::SameJarOptions::new(PathBuf::from("cp"), PathBuf::new())
            )
        );
    }

    #[test]
    fn flags_set_their_fields() {
        let o: replication::ReplicationOptions = parse(&[
            "--sizes",
            "1m,2k",
            "--modes",
            "parallel",
            "--fs",
            "hdfs://nn:8020",
        ]);
        assert_eq!(o.sizes, vec![1 << 20, 2048]);
        assert_eq!(o.modes, vec![tusk_client::ReplicationMode::Parallel]);
        assert_eq!(o.target.fs.as_deref(), Some("hdfs://nn:8020"));

        let o: nnthroughput::NnThroughputOptions = parse(&[
            "--op",
            "create,mkdirs",
            "--n",
            "10",
            "--mode",
            "threads:4",
            "--window",
            "7",
        ]);
        assert_eq!(
            o.ops,
            vec![nnthroughput::NsOp::Create, nnthroughput::NsOp::Mkdirs]
        );
        assert_eq!(o.ns, vec![10]);
        assert_eq!(o.modes, vec![nnthroughput::CallMode::Threads(4)]);
        assert_eq!(o.window, 7);

        let o: heartbeats::HeartbeatOptions = parse(&[
            "--interval",
            "3s,200ms",
            "--duration",
            "5",
            "--namenode-pid",
            "9",
        ]);
        assert_eq!(
            o.intervals,
            vec![Duration::from_secs(3), Duration::from_millis(200)]
        );
        assert_eq!(o.duration, Duration::from_secs(5));
        assert_eq!(o.namenode_pid, Some(9));

        let o: am_heartbeats::AmHeartbeatOptions = parse(&[
            "--maps",
            "2",
            "--hold",
            "1",
            "--rm-conf",
            "a=b",
            "--rm-conf",
            "c=d",
        ]);
        assert_eq!((o.maps_per_app, o.hold_heartbeats), (2, 1));
        assert_eq!(o.rm_conf, vec!["a=b", "c=d"]);

        let o: job_latency::JobLatencyOptions = parse(&["--input", "2k", "--vs-hadoop"]);
        assert_eq!(o.input_bytes, 2048);
        assert_eq!(
            o.vs_hadoop,
            Some(PathBuf::from(crate::measure::hadoop::DEFAULT_ANCHOR_DIR))
        );

        let o: heartbeat_sweep::SweepOptions = parse(&[
            "--timings",
            "classic",
            "--hadoop-timeout",
            "2m",
            "--master-link",
            "10Gbit",
            "--dir",
            "/x",
        ]);
        assert_eq!(o.timings, vec![tusk_common::Timing::Classic]);
        assert_eq!(o.hadoop_timeout_secs, 120);
        assert_eq!(o.master_link_bytes_per_sec, 1.25e9);
        assert_eq!(o.base_dir, Some(PathBuf::from("/x")));

        let o: replication_links::ReplicationLinksOptions = parse(&[
            "--testbed",
            "a.toml,b.toml",
            "--writer-size",
            "2m",
            "--unscaled-sizes",
        ]);
        assert_eq!(
            o.testbeds,
            vec![PathBuf::from("a.toml"), PathBuf::from("b.toml")]
        );
        assert_eq!(o.writer_bytes, 2 << 20);
        assert!(!o.scale_sizes);

        let o: same_jar::SameJarOptions = parse(&[
            "--hadoop-classpath",
            "cp",
            "--testbed",
            "t.toml",
            "--vcores",
            "2",
        ]);
        let testbed = o.testbed.expect("--testbed given");
        assert_eq!(testbed.description, PathBuf::from("t.toml"));
        assert_eq!((testbed.scale, testbed.vcores), (None, Some(2)));

        let o: interconnects::InterconnectsOptions =
            parse(&["--jobs", "WordCount,sort", "--profiles", "10gige-ssd"]);
        use interconnects::Workload;
        assert_eq!(o.workloads, vec![Workload::WordCount, Workload::Sort]);
        assert_eq!(o.profiles.len(), 1);
        assert_eq!(o.profiles[0].name(), "10gige-ssd");
        assert!(!parses::<interconnects::InterconnectsOptions>(&[
            "--jobs", "grep"
        ]));

        let o: short_circuit::ShortCircuitOptions = parse(&["--size", "1g", "--trials", "2"]);
        assert_eq!((o.file_size, o.trials), (1 << 30, 2));
    }

    #[test]
    fn same_jar_needs_its_classpath_and_a_testbed_for_the_testbed_flags() {
        type SameJar = same_jar::SameJarOptions;
        assert!(!parses::<SameJar>(&[]));
        assert!(!parses::<SameJar>(&[
            "--hadoop-classpath",
            "cp",
            "--vcores",
            "2"
        ]));
        assert!(!parses::<SameJar>(&[
            "--hadoop-classpath",
            "cp",
            "--testbed-scale",
            "0.5"
        ]));
        let o: SameJar = parse(&["--hadoop-classpath", "cp"]);
        assert!(o.testbed.is_none());
    }

    #[test]
    fn job_conf_pairs_keep_their_order_and_are_an_object_in_json() {
        let o: terasort::TerasortOptions =
            parse(&["--job-conf", "b=2", "--job-conf", "a=x=y", "--local"]);
        let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(o.conf, pairs(&[("b", "2"), ("a", "x=y")]));
        assert!(o.local);
        let json = serde_json::to_value(&o).unwrap();
        assert_eq!(json["conf"], serde_json::json!({"a": "x=y", "b": "2"}));
        let back: terasort::TerasortOptions = serde_json::from_value(json).unwrap();
        assert_eq!(back.conf, pairs(&[("a", "x=y"), ("b", "2")]));
        assert!(!parses::<terasort::TerasortOptions>(&[
            "--job-conf",
            "novalue"
        ]));
    }

    #[test]
    fn bad_sizes_and_durations_are_refused() {
        assert!(!parses::<replication::ReplicationOptions>(&[
            "--sizes", "lots"
        ]));
        assert!(parses::<replication::ReplicationOptions>(&[
            "--sizes", "4k"
        ]));
        assert!(!parses::<heartbeats::HeartbeatOptions>(&[
            "--duration",
            "soon"
        ]));
        assert!(!parses::<heartbeat_sweep::SweepOptions>(&[
            "--hadoop-timeout",
            "soon"
        ]));
        assert!(!parses::<heartbeat_sweep::SweepOptions>(&[
            "--timings",
            "eager"
        ]));
    }
}

//! The registry of configuration keys some Tusk component reads: a key a resource sets
//! that is not here is warned about once (it does nothing). A key read under a prefix is
//! listed by that prefix, ending in `.`.
//! A test scans the workspace's sources so that a key read but not listed fails it.

/// Keys (and `prefix.` entries), sorted within each group.
pub const KNOWN: &[&str] = &[
    "dfs.client.failover.proxy.provider.",
    // HA: whether Hadoop's `haadmin` leaves transitions to the NameNodes (Tusk's always
    // do; `false` is warned about), for all nameservices or one.
    "dfs.ha.automatic-failover.enabled",
    "dfs.ha.automatic-failover.enabled.",
    // HA: the NameNode's own id in `dfs.ha.namenodes.NS` (else found by its address).
    "dfs.ha.namenode.id",
    "dfs.ha.namenodes.",
    "dfs.nameservices",
    "fs.defaultFS",
    "fs.trash.checkpoint.interval",
    "fs.trash.interval",
    "hadoop.log.dir",
    "hadoop.proxyuser.",
    // `authentication` (default), `integrity`, `privacy`: a list.
    "hadoop.rpc.protection",
    // `simple` (default) or `kerberos`.
    "hadoop.security.authentication",
    // Kerberos principals to local user names (`DEFAULT`, `RULE:[n:fmt](re)s/a/b/g/L`).
    "hadoop.security.auth_to_local",
    // The user → groups mapping: the operating system's (default) or `NullGroupsMapping`.
    "hadoop.security.group.mapping",
    "hadoop.security.groups.cache.secs",
    "hadoop.shell.safely.delete.limit.num.files",
    // HTTPS: the resource with the `ssl.server.*` keys (default `ssl-server.xml`).
    "hadoop.ssl.server.conf",
    "hadoop.tmp.dir",
    "hadoop.user.group.static.mapping.overrides",
    "ipc.client.async.calls.max",
    "ipc.client.connect.max.retries",
    "io.file.buffer.size",
    "ipc.client.connect.max.retries.on.timeouts",
    "ipc.client.connect.retry.interval",
    "ipc.client.connection.maxidletime",
    "ipc.client.idlethreshold",
    // HA clients: an unanswered call to a NameNode fails over after this long.
    "ipc.client.rpc-timeout.ms",
    "ipc.maximum.data.length",
    "ipc.server.connection.header.timeout.ms",
    "ipc.server.max.connections",
    "ipc.server.total.buffer.bytes",
    "net.topology.node.switch.mapping.impl",
    "net.topology.table.file.name",
    "net.topology.script.file.name",
    "dfs.batched.ls.limit",
    // `HTTP_ONLY` (default), `HTTPS_ONLY`, `HTTP_AND_HTTPS`.
    "dfs.http.policy",
    // HDFS's name for `hadoop.ssl.server.conf`, checked first.
    "dfs.https.server.keystore.resource",
    // The HTTPS keystore (read from ssl-server.xml or the daemon's own configuration).
    "ssl.server.keystore.keypassword",
    "ssl.server.keystore.location",
    "ssl.server.keystore.password",
    "ssl.server.keystore.type",
    // Commands the audit log leaves out (HDFS logs them only at debug level).
    "dfs.namenode.audit.log.debug.cmdlist",
    // The audit log's `trackingId=` (the caller's delegation token) and `callerContext=`.
    "dfs.namenode.audit.log.token.tracking.id",
    "hadoop.caller.context.enabled",
    "hadoop.caller.context.max.size",
    "hadoop.caller.context.signature.max.size",
    "dfs.namenode.delegation.key.update-interval",
    "dfs.namenode.delegation.token.max-lifetime",
    "dfs.namenode.delegation.token.renew-interval",
    "dfs.namenode.missing.checkpoint.periods.before.shutdown",
    "dfs.block.access.key.update.interval",
    "dfs.block.access.token.enable",
    "dfs.block.access.token.lifetime",
    "dfs.block.access.token.protobuf.enable",
    "dfs.block.local-path-access.user",
    "dfs.blockreport.intervalMsec",
    "dfs.blocksize",
    "dfs.bytes-per-checksum",
    "dfs.checksum.combine.mode",
    "dfs.client-write-packet-size",
    "dfs.client.block.write.locateFollowingBlock.retries",
    "dfs.client.block.write.replace-datanode-on-failure.best-effort",
    "dfs.client.block.write.replace-datanode-on-failure.enable",
    "dfs.client.block.write.replace-datanode-on-failure.policy",
    // HA client failover (Hadoop's defaults: 0, 0, 15, 500, 15000).
    "dfs.client.failover.connection.retries",
    "dfs.client.failover.connection.retries.on.timeouts",
    "dfs.client.failover.max.attempts",
    "dfs.client.failover.sleep.base.millis",
    "dfs.client.failover.sleep.max.millis",
    "dfs.client.read.shortcircuit",
    "dfs.client.read.shortcircuit.skip.checksum",
    // Retries of a NameNode that answered RetriableException (10).
    "dfs.client.retry.max.attempts",
    "dfs.client.socket-timeout",
    "dfs.client.write.max-packets-in-flight",
    "dfs.client.write.replication-mode",
    "dfs.datanode.keytab.file",
    // SASL on data connections: `authentication`, `integrity`, `privacy` (a list; unset = none).
    "dfs.data.transfer.protection",
    "dfs.datanode.kerberos.principal",
    // Data encryption keys on data connections (NameNode, DataNodes).
    "dfs.encrypt.data.transfer",
    "dfs.datanode.address",
    "dfs.datanode.balance.bandwidthPerSec",
    "dfs.datanode.capacity.override",
    "dfs.datanode.data.dir",
    "dfs.datanode.hostname",
    "dfs.datanode.http.address",
    "dfs.datanode.https.address",
    "dfs.datanode.ibr.mode",
    "dfs.datanode.ip",
    "dfs.datanode.ipc.address",
    "dfs.datanode.max.transfer.threads",
    "dfs.datanode.round-robin-volume-choosing-policy.additional-available-space",
    "dfs.datanode.socket.reuse.keepalive",
    "dfs.domain.socket.path",
    "dfs.heartbeat.interval",
    "dfs.hosts",
    "dfs.hosts.exclude",
    "dfs.ls.limit",
    "dfs.namenode.acls.enabled",
    "dfs.namenode.avoid.read.stale.datanode",
    "dfs.namenode.avoid.write.stale.datanode",
    "dfs.namenode.checkpoint.period",
    "dfs.namenode.checkpoint.txns",
    "dfs.namenode.complete.wait",
    "dfs.namenode.datanode.registration.ip-hostname-check",
    "dfs.namenode.fs-limits.max-component-length",
    "dfs.namenode.fs-limits.max-directory-items",
    "dfs.namenode.fs-limits.max-xattr-size",
    "dfs.namenode.fs-limits.max-xattrs-per-inode",
    "dfs.namenode.fs-limits.min-block-size",
    "dfs.namenode.heartbeat.recheck-interval",
    "dfs.namenode.http-address",
    "dfs.namenode.https-address",
    "dfs.namenode.kerberos.principal",
    // A glob of server principals a client accepts instead of the one above.
    "dfs.namenode.kerberos.principal.pattern",
    "dfs.namenode.keytab.file",
    "dfs.namenode.http-bind-host",
    "dfs.namenode.https-bind-host",
    "dfs.namenode.lease-hard-limit-sec",
    "dfs.namenode.lease-soft-limit-sec",
    "dfs.namenode.name.dir",
    "dfs.namenode.posix.acl.inheritance.enabled",
    "dfs.namenode.reconstruction.pending.timeout-sec",
    "dfs.namenode.redundancy.interval.seconds",
    "dfs.namenode.replication.min",
    "dfs.namenode.rpc-address",
    // HA: `dfs.namenode.rpc-address.NS.NN` (and http-address) per NameNode.
    "dfs.namenode.rpc-address.",
    "dfs.namenode.http-address.",
    "dfs.namenode.rpc-bind-host",
    "dfs.namenode.safemode.extension",
    "dfs.namenode.safemode.min.datanodes",
    "dfs.namenode.safemode.replication.min",
    "dfs.namenode.safemode.threshold-pct",
    "dfs.namenode.stale.datanode.interval",
    "dfs.namenode.write.stale.datanode.ratio",
    "dfs.namenode.xattrs.enabled",
    "dfs.permissions.enabled",
    "dfs.permissions.superusergroup",
    "dfs.quota.by.storage.type.enabled",
    "dfs.replication",
    "dfs.replication.max",
    "dfs.storage.policy.enabled",
    "dfs.web.authentication.kerberos.keytab",
    "dfs.web.authentication.kerberos.principal",
    "yarn.am.liveness-monitor.expiry-interval-ms",
    "yarn.app.mapreduce.am.command-opts",
    "yarn.app.mapreduce.am.job.reduce.preemption.limit",
    "yarn.app.mapreduce.am.resource.mb",
    "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms",
    "yarn.application.classpath",
    "yarn.log-aggregation-enable",
    "yarn.log-aggregation.TFile.remote-app-log-dir",
    "yarn.log-aggregation.TFile.remote-app-log-dir-suffix",
    "yarn.nm.liveness-monitor.expiry-interval-ms",
    "yarn.nodemanager.address",
    "yarn.nodemanager.aux-services",
    "yarn.nodemanager.aux-services.mapreduce_shuffle.class",
    "yarn.nodemanager.container-monitor.interval-ms",
    "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage",
    "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb",
    "yarn.nodemanager.env-whitelist",
    "yarn.nodemanager.hostname",
    "yarn.nodemanager.keytab",
    "yarn.nodemanager.local-dirs",
    "yarn.nodemanager.localizer.address",
    "yarn.nodemanager.log-dirs",
    "yarn.nodemanager.pmem-check-enabled",
    "yarn.nodemanager.principal",
    "yarn.nodemanager.remote-app-log-dir",
    "yarn.nodemanager.remote-app-log-dir-suffix",
    "yarn.nodemanager.resource.cpu-vcores",
    "yarn.nodemanager.resource.memory-mb",
    "yarn.nodemanager.sleep-delay-before-sigkill.ms",
    "yarn.nodemanager.user-home-dir",
    "yarn.nodemanager.vmem-check-enabled",
    "yarn.nodemanager.webapp.address",
    "yarn.resourcemanager.address",
    "yarn.resourcemanager.admin.address",
    "yarn.resourcemanager.am.max-attempts",
    "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs",
    "yarn.resourcemanager.connect.max-wait.ms",
    "yarn.resourcemanager.connect.retry-interval.ms",
    "yarn.resourcemanager.fs.state-store.uri",
    "yarn.resourcemanager.hostname",
    "yarn.resourcemanager.keytab",
    "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
    "yarn.resourcemanager.principal",
    "yarn.resourcemanager.recovery.enabled",
    "yarn.resourcemanager.resource-tracker.address",
    "yarn.resourcemanager.scheduler.address",
    "yarn.resourcemanager.scheduler.class",
    "yarn.resourcemanager.webapp.address",
    "yarn.resourcemanager.work-preserving-recovery.enabled",
    "yarn.scheduler.capacity.maximum-am-resource-percent",
    "yarn.scheduler.capacity.root.default.capacity",
    "yarn.scheduler.capacity.root.default.maximum-capacity",
    "yarn.scheduler.capacity.root.queues",
    "yarn.scheduler.maximum-allocation-mb",
    "yarn.scheduler.maximum-allocation-vcores",
    "yarn.scheduler.minimum-allocation-mb",
    "yarn.scheduler.minimum-allocation-vcores",
    "mapreduce.am.max-attempts",
    "mapreduce.application.classpath",
    "mapreduce.client.completion.pollinterval",
    "mapreduce.client.progressmonitor.pollinterval",
    "mapreduce.framework.name",
    "mapreduce.job.queuename",
    "mapreduce.job.reduce.slowstart.completedmaps",
    "mapreduce.job.reducer.preempt.delay.sec",
    "mapreduce.job.reducer.unconditional-preempt.delay.sec",
    "mapreduce.job.speculative.minimum-allowed-tasks",
    "mapreduce.job.speculative.speculative-cap-running-tasks",
    "mapreduce.job.speculative.speculative-cap-total-tasks",
    "mapreduce.jobhistory.done-dir",
    "mapreduce.map.java.opts",
    "mapreduce.map.maxattempts",
    "mapreduce.map.memory.mb",
    "mapreduce.map.output.compress",
    "mapreduce.map.output.compress.codec",
    "mapreduce.map.speculative",
    "mapreduce.output.replication",
    "mapreduce.reduce.java.opts",
    "mapreduce.reduce.maxattempts",
    "mapreduce.reduce.memory.mb",
    "mapreduce.reduce.shuffle.parallelcopies",
    "mapreduce.reduce.speculative",
    "mapreduce.shuffle.connection-keep-alive.enable",
    "mapreduce.shuffle.connection-keep-alive.timeout",
    "mapreduce.shuffle.port",
    "mapreduce.task.io.sort.factor",
    "mapreduce.task.io.sort.mb",
    "tusk.datanode.direct-io",
    "tusk.job.staging.dir",
    "tusk.mapreduce.speculative.cause-aware",
    "tusk.mapreduce.speculative.congestion.default-link-bits-per-sec",
    "tusk.mapreduce.speculative.congestion.disk-pct",
    "tusk.mapreduce.speculative.congestion.rbu",
    "tusk.mapreduce.speculative.early.finished-fraction",
    "tusk.mapreduce.speculative.early.runtime-factor",
    "tusk.mapreduce.speculative.minimum-runtime-ms",
    "tusk.mapreduce.speculative.slow-factor",
    // The NameNode's audit log file (default `${hadoop.log.dir}/hdfs-audit.log`; empty: none).
    "tusk.namenode.audit.log",
    // HA: `log-address.NS.NN` (the replicated log's peer port), `log.dir`, timers.
    "tusk.namenode.ha.",
    "tusk.node.disk.write-bytes-per-sec",
    "tusk.node.link.bits-per-sec",
    "tusk.nodemanager.node-id",
    "tusk.nodemanager.rack",
    "tusk.nodemanager.status-report.min-interval-ms",
    "tusk.nodemanager.status-watch.interval-ms",
    "tusk.nodemanager.status-window-ms",
    "tusk.reduce.shuffle.memory.bytes",
    "tusk.runtime.worker-threads",
    // `tusk sql --cluster`: the SQL application's AM memory and queue, its executors
    // (count, vcores, memory, heartbeat to Ballista's scheduler, idle release), and how
    // long the application stays without a query.
    "tusk.sql.cluster.am.memory-mb",
    "tusk.sql.cluster.executor.heartbeat-secs",
    "tusk.sql.cluster.executor.idle-timeout-ms",
    "tusk.sql.cluster.executor.memory-mb",
    "tusk.sql.cluster.executor.vcores",
    "tusk.sql.cluster.executors",
    "tusk.sql.cluster.idle-timeout-ms",
    "tusk.sql.cluster.queue",
    // Where `CREATE TABLE ... AS` writes its Parquet (default `/user/<user>/warehouse`).
    "tusk.sql.warehouse.dir",
    "tusk.task.io.sort.bytes",
    "tusk.yarn.am.allocate.max-wait-ms",
    "tusk.yarn.am.finish-grace-ms",
    "tusk.yarn.scheduler.fair.queues",
    "tusk.yarn.scheduler.node-locality-delay",
    // The switch: `true` = every status-aware policy, `false` = none, when
    // `.status-aware.policies` is unset; that list decides when both are set (a
    // disagreement is warned about).
    "tusk.yarn.scheduler.status-aware",
    // `true`: Disk-Rate holds a data-local map back only while another node holding
    // its input is open to it; `false`: the study's rule, every map held.
    "tusk.yarn.scheduler.status-aware.disk-rate.replica-aware",
    "tusk.yarn.scheduler.status-aware.disk-rate.threshold",
    // The disk figure Disk-Rate judges: `max-volume` (the busiest volume, the default),
    // `node-average` (the volumes' mean, the study's definition) or `task-volume` (a
    // data-local map's input volume when its ask names it, else the busiest).
    "tusk.yarn.scheduler.status-aware.disk-signal",
    "tusk.yarn.scheduler.status-aware.policies",
    "tusk.yarn.scheduler.status-aware.potential-reception.threshold",
    "tusk.yarn.scheduler.status-aware.receive-rate.threshold",
    "tusk.yarn.scheduler.status-aware.starvation-ms",
    "tusk.yarn.scheduler.status-aware.starvation-offers",
    "tusk.yarn.timing",
];

/// Whether some Tusk component reads `key`.
pub fn is_known(key: &str) -> bool {
    KNOWN
        .iter()
        .any(|k| *k == key || (k.ends_with('.') && key.starts_with(k)))
}

/// Hadoop's deprecated names that Tusk reads under their current name (Hadoop's
/// `Configuration` maps them the same way and warns).
pub const DEPRECATED: &[(&str, &str)] = &[
    ("fs.default.name", "fs.defaultFS"),
    ("dfs.block.size", "dfs.blocksize"),
    ("dfs.name.dir", "dfs.namenode.name.dir"),
    ("dfs.data.dir", "dfs.datanode.data.dir"),
    ("dfs.permissions", "dfs.permissions.enabled"),
    (
        "dfs.permissions.supergroup",
        "dfs.permissions.superusergroup",
    ),
    ("dfs.replication.min", "dfs.namenode.replication.min"),
    ("dfs.http.address", "dfs.namenode.http-address"),
    ("dfs.max.objects", "dfs.namenode.max.objects"),
    ("mapred.job.queue.name", "mapreduce.job.queuename"),
    ("io.sort.mb", "mapreduce.task.io.sort.mb"),
    ("io.sort.factor", "mapreduce.task.io.sort.factor"),
    (
        "mapred.reduce.parallel.copies",
        "mapreduce.reduce.shuffle.parallelcopies",
    ),
    (
        "topology.node.switch.mapping.impl",
        "net.topology.node.switch.mapping.impl",
    ),
];

/// The current name of a deprecated key.
pub fn current_name(key: &str) -> Option<&'static str> {
    DEPRECATED
        .iter()
        .find(|(old, _)| *old == key)
        .map(|(_, new)| *new)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key the workspace's sources read with a literal name is registered.
    #[test]
    fn every_key_read_in_the_sources_is_registered() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut missing = Vec::new();
        let mut stack = vec![crates];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                if path.is_dir() {
                    if !matches!(name.as_str(), "tests" | "target" | "fuzz") {
                        stack.push(path);
                    }
                } else if name.ends_with(".rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for key in read_keys(&text) {
                        // WebHDFS's query parameter of the same name, not a key.
                        if !is_known(&key) && key != "user.name" {
                            missing.push(format!("{key} ({})", path.display()));
                        }
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "keys read but not in config/keys.rs: {missing:#?}"
        );
    }

    /// Literal names passed to the typed getters: `get("k"`, `get_u64("k"`, ...
    fn read_keys(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for getter in [
            "get(",
            "get_str(",
            "get_u64(",
            "get_bool(",
            "get_duration(",
            "get_list(",
        ] {
            let mut rest = text;
            while let Some(at) = rest.find(getter) {
                rest = &rest[at + getter.len()..];
                let args = rest.trim_start();
                let Some(quoted) = args.strip_prefix('"') else {
                    continue;
                };
                let Some(end) = quoted.find('"') else {
                    continue;
                };
                let key = &quoted[..end];
                if key.contains('.') && !key.contains(' ') && !key.contains('{') {
                    out.push(key.to_string());
                }
            }
        }
        out
    }

    #[test]
    fn prefixes_and_deprecations() {
        assert!(is_known("dfs.replication"));
        assert!(is_known("yarn.app.mapreduce.am.resource.mb"));
        assert!(!is_known("yarn.app.mapreduce.am.staging-dir"));
        assert!(!is_known("dfs.namenode.secondary.http-address"));
        assert_eq!(current_name("fs.default.name"), Some("fs.defaultFS"));
    }
}

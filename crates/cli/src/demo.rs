//! `tusk demo`: the main job. Starts a local cluster (separate processes), writes and
//! reads files in both replication modes, shows where each block's replicas went,
//! checks the data, and shuts the cluster down.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{ensure, Context};
use clap::Args;
use tusk_client::{ClientOptions, CreateOptions, DfsClient, ReplicationMode};
use tusk_common::Configuration;

use crate::local::{self, UpArgs};

#[derive(Args)]
pub struct DemoArgs {
    /// State directory for the demo cluster (erased first).
    #[arg(long, default_value = "/tmp/tusk-demo")]
    dir: PathBuf,
    #[arg(long, default_value_t = 3)]
    datanodes: usize,
    /// Size of each file written, in MiB.
    #[arg(long, default_value_t = 48)]
    size_mib: u64,
}

pub async fn run(conf: Configuration, args: DemoArgs) -> anyhow::Result<()> {
    let mut conf = conf;
    if conf.get("dfs.blocksize").is_none() {
        // Small blocks so a modest file spans several blocks.
        conf.set("dfs.blocksize", (16u64 << 20).to_string());
    }
    let started = Instant::now();
    let up = UpArgs {
        dir: args.dir.clone(),
        datanodes: args.datanodes,
        format: true,
        no_yarn: true,
        nodemanagers: None,
        secure: false,
        https: false,
        ha: false,
    };
    let uri = local::up(&conf, &up)
        .await
        .context("starting the local cluster")?
        .uri;
    println!(
        "cluster up in {:.3} s at {uri} (1 NameNode + {} DataNodes, state in {})",
        started.elapsed().as_secs_f64(),
        args.datanodes,
        args.dir.display()
    );
    let result = exercise(&conf, &uri, &args).await;
    local::down(&args.dir)?;
    result?;
    println!("demo finished: data verified, cluster stopped");
    Ok(())
}

async fn exercise(conf: &Configuration, uri: &str, args: &DemoArgs) -> anyhow::Result<()> {
    let mut conf = conf.clone();
    conf.set("fs.defaultFS", uri);
    let base = ClientOptions::from_conf(&conf)?;
    let len = (args.size_mib << 20) as usize;
    let data: Vec<u8> = (0..len)
        .map(|i| (i as u64).wrapping_mul(2_654_435_761).rotate_left(7) as u8)
        .collect();
    let nodes = DfsClient::new(base.clone()).datanode_report(2).await?;
    let name_of = |uuid: &str| {
        nodes
            .iter()
            .find(|n| n.id.datanode_uuid == uuid)
            .map(|n| format!("{}:{}", n.id.ip_addr, n.id.xfer_port))
            .unwrap_or_else(|| uuid.to_string())
    };
    for mode in [ReplicationMode::Pipeline, ReplicationMode::Parallel] {
        let client = DfsClient::new(ClientOptions {
            replication_mode: mode,
            ..base.clone()
        });
        let path = format!("/demo/{}.bin", format!("{mode:?}").to_lowercase());
        let t = Instant::now();
        client
            .write_file(
                &path,
                &data,
                CreateOptions {
                    overwrite: true,
                    create_parent: true,
                    ..Default::default()
                },
            )
            .await
            .with_context(|| format!("writing {path}"))?;
        let write_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let back = client
            .read_file(&path)
            .await
            .with_context(|| format!("reading {path}"))?;
        let read_s = t.elapsed().as_secs_f64();
        ensure!(
            back == data,
            "{path}: data read back differs from data written"
        );
        let mb = len as f64 / 1e6;
        println!("\n{mode:?} replication: wrote {path} ({} MiB) in {write_s:.3} s ({:.0} MB/s), read back in {read_s:.3} s ({:.0} MB/s), identical", args.size_mib, mb / write_s, mb / read_s);
        let blocks = client.block_locations(&path, 0, u64::MAX).await?;
        for b in &blocks.blocks {
            let where_: Vec<String> = b
                .locs
                .iter()
                .map(|l| name_of(&l.id.datanode_uuid))
                .collect();
            println!(
                "  blk_{}  offset {:>9}  {:>9} bytes  replicas on {}",
                b.b.block_id,
                b.offset,
                b.b.num_bytes.unwrap_or(0),
                where_.join(", ")
            );
        }
    }
    Ok(())
}

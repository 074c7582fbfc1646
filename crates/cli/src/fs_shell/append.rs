//! `-appendToFile`, `-truncate` and `-concat`, as Hadoop's FsShell (`AppendToFile`,
//! `Truncate`, `Concat`).

use std::io::Read;
use std::time::Duration;

use tusk_client::CreateOptions;

use super::{describe, flags, io_message, sources_and_destination, Shell};

impl Shell {
    /// `-appendToFile [-n] <localsrc> ... <dst>`: appends local files (`-` for stdin)
    /// to `dst`, creating it when missing; `-n` starts a new block (NEW_BLOCK).
    pub(super) async fn append_to_file(&mut self, args: &[String]) -> Result<(), String> {
        let (f, ops) = flags(args, "n")?;
        let (srcs, shown) = sources_and_destination("appendToFile", ops)?;
        let dst = self.resolve(shown);
        // As Hadoop: every local source must exist before anything is written.
        for src in srcs.iter().filter(|s| *s != "-") {
            std::fs::metadata(src).map_err(|e| format!("`{src}': {}", io_message(&e)))?;
        }
        let exists = match self.client.get_file_info(&dst).await {
            Ok(Some(s)) if s.is_dir => return Err(format!("`{shown}': Is a directory")),
            Ok(found) => found.is_some(),
            Err(e) => return Err(describe(shown, &e)),
        };
        let mut w = if exists {
            self.client.append(&dst, f.contains(&'n')).await
        } else {
            self.client.create(&dst, CreateOptions::default()).await
        }
        .map_err(|e| describe(shown, &e))?;
        let copied = async {
            let mut buf = vec![0u8; 1 << 20];
            for src in srcs {
                let mut input: Box<dyn Read> = if src == "-" {
                    Box::new(std::io::stdin())
                } else {
                    Box::new(
                        std::fs::File::open(src)
                            .map_err(|e| format!("`{src}': {}", io_message(&e)))?,
                    )
                };
                loop {
                    let n = input.read(&mut buf).map_err(|e| format!("`{src}': {e}"))?;
                    if n == 0 {
                        break;
                    }
                    w.write(&buf[..n]).await.map_err(|e| describe(shown, &e))?;
                }
            }
            w.close().await.map_err(|e| describe(shown, &e))
        }
        .await;
        // A file this command created and could not fill is removed (its lease ends
        // with it), so the next try is not refused as "already being created".
        if copied.is_err() && !exists {
            let _ = self.client.delete(&dst, false).await;
        }
        copied
    }

    /// `-truncate [-w] <length> <path> ...`: cuts files to `length`; a cut inside a
    /// block finishes with block recovery, which `-w` waits for.
    pub(super) async fn truncate(&mut self, args: &[String]) -> Result<(), String> {
        let (f, ops) = flags(args, "w")?;
        let wait = f.contains(&'w');
        let Some((length, paths)) = ops.split_first().filter(|(_, p)| !p.is_empty()) else {
            return Err(format!(
                "-truncate: Not enough arguments: expected 2 but got {}",
                ops.len()
            ));
        };
        let length: u64 = length
            .parse()
            .map_err(|_| format!("Illegal length, a non-negative integer expected: {length}"))?;
        let mut waiting = Vec::new();
        for shown in paths {
            let path = self.resolve(shown);
            let status = match self.client.stat(&path).await {
                Ok(s) => s,
                Err(e) => {
                    self.report("truncate", shown, e);
                    continue;
                }
            };
            if status.is_dir {
                eprintln!("truncate: `{shown}': Is a directory");
                self.failed = true;
                continue;
            }
            match self.client.truncate(&path, length).await {
                Ok(true) => println!("Truncated {shown} to length: {length}"),
                Ok(false) if wait => waiting.push((shown.clone(), path)),
                Ok(false) => println!(
                    "Truncating {shown} to length: {length}. Wait for block recovery to complete before further updating this file."
                ),
                Err(e) => self.report("truncate", shown, e),
            }
        }
        for (shown, path) in waiting {
            println!("Waiting for {shown} ...");
            loop {
                match self.client.is_file_closed(&path).await {
                    Ok(true) => break,
                    Ok(false) => tokio::time::sleep(Duration::from_millis(200)).await,
                    Err(e) => return Err(describe(&shown, &e)),
                }
            }
            println!("Truncated {shown} to length: {length}");
        }
        Ok(())
    }

    /// `-concat <target> <src> ...`: moves the sources' blocks to the end of the target
    /// (all in one directory) and removes the sources.
    pub(super) async fn concat(&mut self, args: &[String]) -> Result<(), String> {
        let Some((target, srcs)) = args.split_first().filter(|(_, s)| !s.is_empty()) else {
            return Err(format!(
                "-concat: Not enough arguments: expected 2 but got {}",
                args.len()
            ));
        };
        let target_path = self.resolve(target);
        let srcs: Vec<String> = srcs.iter().map(|s| self.resolve(s)).collect();
        self.client
            .concat(&target_path, &srcs)
            .await
            .map_err(|e| describe(target, &e))
    }
}

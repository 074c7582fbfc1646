//! `-checksum [-v] PATH...`: the file's checksum as Hadoop's FsShell prints it, one
//! tab-separated line per file (`-v` adds the block size); `dfs.checksum.combine.mode`
//! chooses MD5-of-MD5-of-CRC (the default) or COMPOSITE_CRC.

use super::{flags, Shell};

impl Shell {
    pub(super) async fn checksum(&mut self, args: &[String]) -> Result<(), String> {
        let (f, paths) = flags(args, "v")?;
        if paths.is_empty() {
            return Err("-checksum: Not enough arguments: expected 1 but got 0".into());
        }
        let mode = self.client.options().checksum_combine_mode;
        for p in paths {
            let path = self.resolve(p);
            let status = match self.client.stat(&path).await {
                Ok(s) => s,
                Err(e) => {
                    self.report("checksum", p, e);
                    continue;
                }
            };
            if status.is_dir {
                eprintln!("checksum: `{p}': Is a directory");
                self.failed = true;
                continue;
            }
            match self.client.file_checksum(&path, mode).await {
                Ok(sum) if f.contains(&'v') => println!(
                    "{p}\t{}\t{}\tBlockSize={}",
                    sum.algorithm_name(),
                    sum.hex(),
                    status.block_size
                ),
                Ok(sum) => println!("{p}\t{}\t{}", sum.algorithm_name(), sum.hex()),
                Err(e) => self.report("checksum", p, e),
            }
        }
        Ok(())
    }
}

//! `-cp [-f] [-p | -p[topax]] [-d] <src> ... <dst>` (Hadoop's `CopyCommands.Cp`: within
//! the cluster, directories recursively, through `<dst>._COPYING_` unless `-d`; `-pa`
//! and `-px` copy ACLs and extended attributes) and
//! `-getmerge [-nl] [-skip-empty-file] <src> ... <localdst>`.

use std::io::Write;

use tusk_client::meta::{XATTR_CREATE, XATTR_REPLACE};
use tusk_client::FileStatus;

use super::local_copy::Source;
use super::{describe, Shell};

/// What `-p` keeps of the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Preserve {
    times: bool,
    ownership: bool,
    permission: bool,
    acl: bool,
    xattr: bool,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct CpOptions {
    overwrite: bool,
    direct: bool,
    preserve: Preserve,
}

/// Parses cp's flags; returns them and the operands.
fn cp_options(args: &[String]) -> Result<(CpOptions, Vec<String>), String> {
    let mut o = CpOptions::default();
    let mut operands = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-f" => o.overwrite = true,
            "-d" => o.direct = true,
            // Thread count and queue size: accepted, the copy runs one file at a time.
            "-t" | "-q" => {
                it.next()
                    .filter(|v| v.parse::<u32>().is_ok())
                    .ok_or_else(|| format!("{arg} needs a number"))?;
            }
            p if p.starts_with("-p") => {
                let letters = &p[2..];
                let all = letters.is_empty();
                if let Some(other) = letters.chars().find(|c| !"topax".contains(*c)) {
                    return Err(format!("Illegal option -p{other}"));
                }
                o.preserve = Preserve {
                    times: all || letters.contains('t'),
                    ownership: all || letters.contains('o'),
                    permission: all || letters.contains('p'),
                    acl: letters.contains('a'),
                    xattr: letters.contains('x'),
                };
            }
            _ => operands.push(arg.clone()),
        }
    }
    Ok((o, operands))
}

fn name_of(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

fn join(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

impl Shell {
    pub(super) async fn cp(&mut self, args: &[String]) -> Result<(), String> {
        let (options, ops) = cp_options(args)?;
        if ops.len() < 2 {
            return Err(format!(
                "-cp: Not enough arguments: expected 2 but got {}",
                ops.len()
            ));
        }
        let (srcs, dst) = ops.split_at(ops.len() - 1);
        let dst_shown = &dst[0];
        let dst = self.resolve(dst_shown);
        let into_dir = self
            .destination_dir(dst_shown, &dst, srcs.len(), options.overwrite)
            .await?;
        for src_shown in srcs {
            let src = self.resolve(src_shown);
            let status = match self.client.stat(&src).await {
                Ok(s) => s,
                Err(e) => {
                    self.report("cp", src_shown, e);
                    continue;
                }
            };
            let target = if into_dir {
                join(&dst, name_of(&src))
            } else {
                dst.clone()
            };
            if status.is_dir && (target == src || target.starts_with(&format!("{src}/"))) {
                eprintln!("cp: `{src_shown}' to `{target}': is a subdirectory of itself");
                self.failed = true;
                continue;
            }
            if let Err(e) = self.copy_tree(&src, &status, &target, &options).await {
                eprintln!("cp: {e}");
                self.failed = true;
            }
        }
        Ok(())
    }

    /// Copies a file, or a directory and everything below it, to `target`.
    async fn copy_tree(
        &self,
        src: &str,
        status: &FileStatus,
        target: &str,
        options: &CpOptions,
    ) -> Result<(), String> {
        if !status.is_dir {
            return self.copy_file(src, status, target, options).await;
        }
        match self.client.get_file_info(target).await {
            Ok(Some(t)) if !t.is_dir => return Err(format!("`{target}': Is not a directory")),
            Ok(Some(_)) => {}
            Ok(None) => {
                self.client
                    .mkdirs(target, status.permission, false)
                    .await
                    .map_err(|e| describe(target, &e))?;
            }
            Err(e) => return Err(describe(target, &e)),
        }
        let children = self.client.list(src).await.map_err(|e| describe(src, &e))?;
        for child in &children {
            Box::pin(self.copy_tree(
                &join(src, &child.path),
                child,
                &join(target, &child.path),
                options,
            ))
            .await?;
        }
        self.preserve(src, target, status, options.preserve).await
    }

    async fn copy_file(
        &self,
        src: &str,
        status: &FileStatus,
        target: &str,
        options: &CpOptions,
    ) -> Result<(), String> {
        match self.client.get_file_info(target).await {
            Ok(Some(t)) if t.is_dir => return Err(format!("`{target}': Is a directory")),
            Ok(Some(_)) if !options.overwrite => return Err(format!("`{target}': File exists")),
            Ok(_) => {}
            Err(e) => return Err(describe(target, &e)),
        }
        let r = self.client.open(src).await.map_err(|e| describe(src, &e))?;
        self.write_through_temp(
            &mut Source::Cluster(Box::new(r)),
            src,
            Some(status.length),
            target,
            options.direct,
        )
        .await?;
        self.preserve(src, target, status, options.preserve).await
    }

    /// Hadoop's `preserveAttributes`, in its order: times, ownership, permission (also
    /// for `-pa`), the ACL, the extended attributes.
    async fn preserve(
        &self,
        src_path: &str,
        target: &str,
        src: &FileStatus,
        p: Preserve,
    ) -> Result<(), String> {
        let fail = |e| describe(target, &e);
        if p.times {
            self.client
                .set_times(target, src.modification_time, src.access_time)
                .await
                .map_err(fail)?;
        }
        if p.ownership {
            self.client
                .set_owner(target, Some(&src.owner), Some(&src.group))
                .await
                .map_err(fail)?;
        }
        if p.permission || p.acl {
            self.client
                .set_permission(target, src.permission)
                .await
                .map_err(fail)?;
        }
        if p.acl && src.has_acl {
            let acl = self
                .client
                .acl_status(src_path)
                .await
                .map_err(|e| describe(src_path, &e))?;
            let entries = super::acl::full_acl(u32::from(src.permission), &acl.entries);
            self.client.set_acl(target, entries).await.map_err(fail)?;
        }
        if p.xattr {
            let xattrs = self
                .client
                .get_xattrs(src_path, vec![])
                .await
                .map_err(|e| describe(src_path, &e))?;
            for x in xattrs {
                self.client
                    .set_xattr(target, x, XATTR_CREATE | XATTR_REPLACE)
                    .await
                    .map_err(fail)?;
            }
        }
        Ok(())
    }

    pub(super) async fn getmerge(&mut self, args: &[String]) -> Result<(), String> {
        let newline = args.iter().any(|a| a == "-nl");
        let skip_empty = args.iter().any(|a| a == "-skip-empty-file");
        let ops: Vec<&String> = args
            .iter()
            .filter(|a| !matches!(a.as_str(), "-nl" | "-skip-empty-file"))
            .collect();
        if ops.len() < 2 {
            return Err(format!(
                "-getmerge: Not enough arguments: expected 2 but got {}",
                ops.len()
            ));
        }
        let (srcs, dst) = ops.split_at(ops.len() - 1);
        let local = std::path::Path::new(dst[0].as_str());
        if local.is_dir() {
            return Err(format!("`{}': Is a directory", local.display()));
        }
        // The files: each source file, and the files directly in each source directory.
        let mut files = Vec::new();
        for src_shown in srcs {
            let src = self.resolve(src_shown);
            match self.client.stat(&src).await {
                Ok(s) if s.is_dir => match self.client.list(&src).await {
                    Ok(children) => files.extend(
                        children
                            .into_iter()
                            .filter(|c| !c.is_dir)
                            .map(|c| (join(&src, &c.path), c.length)),
                    ),
                    Err(e) => self.report("getmerge", src_shown, e),
                },
                Ok(s) => files.push((src, s.length)),
                Err(e) => self.report("getmerge", src_shown, e),
            }
        }
        let mut out = std::fs::File::create(local)
            .map(std::io::BufWriter::new)
            .map_err(|e| format!("`{}': {e}", local.display()))?;
        let local_err = |e: std::io::Error| format!("`{}': {e}", local.display());
        let mut buf = vec![0u8; 1 << 20];
        for (file, length) in files {
            if skip_empty && length == 0 {
                continue;
            }
            let mut r = self
                .client
                .open(&file)
                .await
                .map_err(|e| describe(&file, &e))?;
            loop {
                let n = r.read(&mut buf).await.map_err(|e| describe(&file, &e))?;
                if n == 0 {
                    break;
                }
                out.write_all(&buf[..n]).map_err(local_err)?;
            }
            if newline {
                out.write_all(b"\n").map_err(local_err)?;
            }
        }
        out.flush().map_err(local_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs_shell::tests::words;

    #[test]
    fn cp_flags_parse_as_hadoops() {
        let (o, ops) = cp_options(&words(&["-f", "-pt", "/a", "/b"])).unwrap();
        assert!(o.overwrite && !o.direct);
        assert_eq!(
            o.preserve,
            Preserve {
                times: true,
                ..Default::default()
            }
        );
        let (o, _) = cp_options(&words(&["-ptopax", "/a", "/b"])).unwrap();
        assert!(o.preserve.acl && o.preserve.xattr && o.preserve.times);
        assert_eq!(ops, words(&["/a", "/b"]));
        let (o, _) = cp_options(&words(&["-p", "-d", "/a", "/b"])).unwrap();
        assert!(o.direct && o.preserve.times && o.preserve.ownership && o.preserve.permission);
        assert!(cp_options(&words(&["-pz", "/a", "/b"])).is_err());
    }
}

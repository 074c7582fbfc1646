//! Before a verb runs: which of its operands are cluster paths, which cluster they name,
//! and their glob expansion (Hadoop's `Command.expandArgument`).
//!
//! A command runs against one cluster: the one its `hdfs://host:port` operands name,
//! else `fs.defaultFS`. A command whose cluster paths name two clusters (or a URI and a
//! path of the default cluster) is refused rather than sent anywhere it was not meant to
//! go.

use tusk_client::{ClientOptions, DfsClient};
use tusk_common::Configuration;

use super::glob::{self, GlobError};
use super::Shell;

/// Which operands (arguments that are not flags) of a verb are cluster paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Every operand.
    AllRemote,
    /// All but the first (a mode, owner, group or replication).
    AfterFirst,
    /// All but the first when it is a `-stat` format.
    StatFormat,
    /// Local sources, then a cluster destination (the last operand).
    LocalThenRemote,
    /// Cluster sources, then a local destination (the last operand).
    RemoteThenLocal,
    /// Cluster sources, then a cluster destination that may match at most one path.
    RemoteThenDestination,
    /// `-find`: the operands before the expression.
    Find,
    /// No cluster paths (`-help`, `-usage`).
    NoPaths,
}

/// The shape of a verb's operands; `None` for verbs this module does not know (their
/// URIs still choose the cluster, their operands are not glob-expanded).
fn shape(verb: &str) -> Option<Shape> {
    Some(match verb {
        "-ls" | "-mkdir" | "-cat" | "-rm" | "-rmdir" | "-du" | "-dus" | "-df" | "-touchz"
        | "-touch" | "-test" | "-tail" | "-head" | "-text" | "-count" | "-checksum"
        | "-getfacl" | "-lsr" => Shape::AllRemote,
        "-chmod" | "-chown" | "-chgrp" | "-setrep" => Shape::AfterFirst,
        "-stat" => Shape::StatFormat,
        "-put" | "-copyFromLocal" | "-moveFromLocal" | "-appendToFile" => Shape::LocalThenRemote,
        "-get" | "-copyToLocal" | "-moveToLocal" | "-getmerge" => Shape::RemoteThenLocal,
        "-cp" | "-mv" => Shape::RemoteThenDestination,
        "-find" => Shape::Find,
        "-help" | "-usage" => Shape::NoPaths,
        _ => return None,
    })
}

/// A flag, not an operand: `-x...` (a lone `-` is stdin, an operand).
fn is_flag(arg: &str) -> bool {
    arg.len() > 1 && arg.starts_with('-')
}

/// Indices into `args` of the cluster-path operands, and which of them is a destination.
fn remote_positions(verb: &str, args: &[String]) -> (Vec<usize>, Option<usize>) {
    let operands: Vec<usize> = match shape(verb) {
        Some(Shape::Find) => (0..args.len())
            .take_while(|&i| !is_flag(&args[i]))
            .collect(),
        _ => (0..args.len()).filter(|&i| !is_flag(&args[i])).collect(),
    };
    let last = operands.last().copied();
    match shape(verb) {
        Some(Shape::AllRemote) | Some(Shape::Find) => (operands, None),
        Some(Shape::AfterFirst) => (operands.into_iter().skip(1).collect(), None),
        Some(Shape::StatFormat) => {
            let skip = usize::from(
                operands.len() > 1 && operands.first().is_some_and(|&i| args[i].contains('%')),
            );
            (operands.into_iter().skip(skip).collect(), None)
        }
        Some(Shape::LocalThenRemote) if operands.len() >= 2 => (vec![], last),
        Some(Shape::RemoteThenLocal) if operands.len() >= 2 => {
            (operands[..operands.len() - 1].to_vec(), None)
        }
        Some(Shape::RemoteThenDestination) if operands.len() >= 2 => {
            (operands[..operands.len() - 1].to_vec(), last)
        }
        Some(_) => (vec![], None),
        // Unknown verbs: every operand that is a URI names the cluster.
        None => (
            operands
                .into_iter()
                .filter(|&i| args[i].contains("://"))
                .collect(),
            None,
        ),
    }
}

impl Shell {
    /// Chooses the cluster for this command and expands its globs. Returns the arguments
    /// to run the verb with, or `None` when nothing is left to run (each failure already
    /// reported, `self.failed` set).
    pub(super) async fn prepare(
        &mut self,
        conf: &Configuration,
        verb: &str,
        args: &[String],
    ) -> Result<Option<Vec<String>>, String> {
        let (sources, destination) = remote_positions(verb, args);
        self.choose_cluster(conf, args, &sources, destination)?;
        if shape(verb).is_none() {
            return Ok(Some(args.to_vec()));
        }
        // Hadoop's `-rm -f`: a glob matching nothing is no error.
        let quiet = verb == "-rm" && args.iter().any(|a| is_flag(a) && a[1..].contains('f'));
        let mut out = Vec::with_capacity(args.len());
        let mut had_paths = false;
        let mut kept_paths = quiet;
        for (i, arg) in args.iter().enumerate() {
            if Some(i) == destination {
                out.push(self.expand_destination(arg).await?);
            } else if sources.contains(&i) {
                had_paths = true;
                let matches = self.expand_operand(verb, arg, quiet).await?;
                kept_paths |= !matches.is_empty();
                out.extend(matches);
            } else {
                out.push(arg.clone());
            }
        }
        Ok((!had_paths || kept_paths).then_some(out))
    }

    /// One operand: itself when it has no glob characters, else every match (reported
    /// as "No such file or directory" when none).
    async fn expand_operand(
        &mut self,
        verb: &str,
        arg: &str,
        quiet: bool,
    ) -> Result<Vec<String>, String> {
        let operand = glob::split_uri(arg)?;
        if !glob::has_glob(operand.path) {
            let unescaped = glob::unescape(operand.path);
            return Ok(vec![format!("{}{}", operand.prefix, shown(&unescaped))]);
        }
        let absolute = self.absolute(operand.path);
        let matches = match glob::expand(&self.client, &absolute).await {
            Ok(m) => m,
            Err(GlobError::Pattern(message)) => return Err(message),
            Err(GlobError::Client(e)) => return Err(super::describe(arg, &e)),
        };
        if matches.is_empty() && !quiet {
            eprintln!("{}: `{arg}': No such file or directory", &verb[1..]);
            self.failed = true;
        }
        let cwd = format!("{}/", self.home());
        Ok(matches
            .into_iter()
            .map(|(path, _)| {
                if operand.path.starts_with('/') {
                    format!("{}{path}", operand.prefix)
                } else {
                    path.strip_prefix(&cwd).unwrap_or(&path).to_string()
                }
            })
            .collect())
    }

    /// A destination pattern must match at most one path; none leaves it as written (no
    /// glob characters: normalised).
    async fn expand_destination(&mut self, arg: &str) -> Result<String, String> {
        let operand = glob::split_uri(arg)?;
        if !glob::has_glob(operand.path) {
            // A trailing `/` says "a directory" (Hadoop's `PathData.representsDirectory`):
            // kept, so a copy goes into it and fails when it is missing.
            let mut path = shown(&glob::unescape(operand.path));
            if operand.path.ends_with('/') && !path.ends_with('/') {
                path.push('/');
            }
            return Ok(format!("{}{path}", operand.prefix));
        }
        let absolute = self.absolute(operand.path);
        let matches = match glob::expand(&self.client, &absolute).await {
            Ok(m) => m,
            Err(GlobError::Pattern(message)) => return Err(message),
            Err(GlobError::Client(e)) => return Err(super::describe(arg, &e)),
        };
        match matches.as_slice() {
            [] => Ok(arg.to_string()),
            [(path, _)] => Ok(format!("{}{path}", operand.prefix)),
            _ => Err(format!("`{arg}': Too many matches")),
        }
    }

    /// Points `self.client` at the cluster the command's URIs name; refuses a command
    /// whose cluster paths name more than one cluster.
    fn choose_cluster(
        &mut self,
        conf: &Configuration,
        args: &[String],
        sources: &[usize],
        destination: Option<usize>,
    ) -> Result<(), String> {
        let default = tusk_client::options::namenode_addr(&self.default_fs).unwrap_or_default();
        let mut named: Option<(String, &str)> = None;
        let mut default_path: Option<&str> = None;
        for i in sources.iter().copied().chain(destination) {
            let arg = args[i].as_str();
            let operand = glob::split_uri(arg)?;
            let authority = operand.authority.unwrap_or_else(|| default.clone());
            if authority == default {
                default_path.get_or_insert(arg);
                continue;
            }
            match &named {
                Some((other, first)) if *other != authority => {
                    return Err(format!(
                        "`{first}' and `{arg}' are on different clusters; a command runs against one cluster"
                    ));
                }
                Some(_) => {}
                None => named = Some((authority, arg)),
            }
        }
        let Some((authority, first)) = named else {
            return Ok(());
        };
        if let Some(local) = default_path {
            return Err(format!(
                "`{first}' and `{local}' are on different clusters; a command runs against one cluster"
            ));
        }
        let mut conf = conf.clone();
        let uri = format!("hdfs://{authority}");
        conf.set("fs.defaultFS", uri.clone());
        let options = ClientOptions::from_conf(&conf).map_err(|e| e.to_string())?;
        self.client = DfsClient::new(options);
        self.default_fs = uri;
        Ok(())
    }

    /// The user's home directory, where relative paths start.
    pub(super) fn home(&self) -> String {
        format!("/user/{}", self.user)
    }

    /// An absolute, normalised path for a path operand (no scheme or authority).
    pub(super) fn absolute(&self, path: &str) -> String {
        if path.starts_with('/') {
            glob::normalize(path)
        } else {
            glob::normalize(&format!("{}/{path}", self.home()))
        }
    }
}

/// A path as Hadoop's `Path` prints it: normalised, relative paths kept relative.
fn shown(path: &str) -> String {
    if path.starts_with('/') {
        return glob::normalize(path);
    }
    let relative = glob::normalize(&format!("/{path}"));
    match &relative[1..] {
        "" => ".".to_string(),
        rest => rest.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn operands_print_normalised() {
        assert_eq!(shown("/out/sub/../part-1"), "/out/part-1");
        assert_eq!(shown("a/../b"), "b");
        assert_eq!(shown("a/.."), ".");
        assert_eq!(shown("../x"), "../x");
    }

    #[test]
    fn operand_shapes_pick_the_cluster_paths() {
        assert_eq!(
            remote_positions("-ls", &args(&["-R", "/a", "/b*"])),
            (vec![1, 2], None)
        );
        assert_eq!(
            remote_positions("-chmod", &args(&["-R", "755", "/a"])),
            (vec![2], None)
        );
        assert_eq!(
            remote_positions("-put", &args(&["-f", "x", "y", "/d"])),
            (vec![], Some(3))
        );
        assert_eq!(
            remote_positions("-get", &args(&["/a*", "local"])),
            (vec![0], None)
        );
        assert_eq!(
            remote_positions("-cp", &args(&["/a*", "/b", "/dst"])),
            (vec![0, 1], Some(2))
        );
        assert_eq!(
            remote_positions("-find", &args(&["/", "-name", "*.txt"])),
            (vec![0], None)
        );
        assert_eq!(
            remote_positions("-stat", &args(&["%n", "/a"])),
            (vec![1], None)
        );
        assert_eq!(
            remote_positions("-setfacl", &args(&["-m", "user:a:rwx", "hdfs://h:1/x"])),
            (vec![2], None)
        );
    }
}

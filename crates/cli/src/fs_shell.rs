//! `tusk fs`: Hadoop FsShell's verbs, arguments, output and exit codes.

mod acl;
mod append;
mod checksum;
mod copy;
mod count;
mod find;
pub(crate) mod format;
mod help;
mod local_copy;
mod ls;
mod operands;
mod owner;
mod read;
mod seqfile;
mod snapshot;
mod touch;
mod trash;
mod xattr;

use std::io::Write;

use tusk_client::{
    glob, ClientError, ClientOptions, CreateOptions, DfsClient, FileStatus, HadoopException,
};
use tusk_common::Configuration;

/// Runs one FsShell command line; returns the process exit code.
pub fn main(mut conf: Configuration, mut args: Vec<String>) -> i32 {
    while args.len() >= 2 && matches!(args[0].as_str(), "-fs" | "-D" | "-conf") {
        let applied = match args[0].as_str() {
            "-fs" => {
                conf.set("fs.defaultFS", args[1].clone());
                Ok(())
            }
            "-conf" => conf
                .add_resource(std::path::Path::new(&args[1]))
                .and_then(|()| conf.refresh_expansions()),
            _ => conf.apply_overrides(&[args[1].clone()]),
        };
        if let Err(e) = applied {
            eprintln!("fs: {e}");
            return 2;
        }
        args.drain(..2);
    }
    crate::conf::ensure_default_fs(&mut conf);
    let Some(verb) = args.first().cloned() else {
        eprintln!("{}", help::usage_all());
        return 255;
    };
    if matches!(verb.as_str(), "--help" | "-h") {
        println!("{}", help::help_all());
        return 0;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fs: {e}");
            return 1;
        }
    };
    let options = match ClientOptions::from_conf(&conf) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fs: {e}");
            return 2;
        }
    };
    let user = options.user.clone();
    let default_fs = conf.get_str("fs.defaultFS", "");
    runtime.block_on(async move {
        let shell = Shell {
            client: DfsClient::new(options),
            user,
            default_fs,
            failed: false,
            conf: conf.clone(),
        };
        shell.run(&conf, &verb, &args[1..]).await
    })
}

/// Every verb: name, operands as `-usage` prints them, and what `-help` says of it.
/// One line per verb; `help` renders them as Hadoop's FsShell does.
const VERBS: &[(&str, &str, &str)] = &[
    ("-appendToFile", "[-n] <localsrc> ... <dst>", "Appends the contents of all the given local files to the given dst file. The dst file will be created if it does not exist. If <localSrc> is -, then the input is read from stdin.\n-n  Write the data to a new block instead of the last one (NEW_BLOCK)."),
    ("-cat", "[-ignoreCrc] <src> ...", "Fetch all files that match the file pattern <src> and display their content on stdout."),
    ("-checksum", "[-v] <src> ...", "Dump checksum information for files that match the file pattern <src> to stdout. Note that this requires a round-trip to a datanode storing each block of the file, and thus is not efficient to run on a large number of files. The checksum of a file depends on its content, block size and the checksum algorithm and parameters used for creating the file.\n-v  Print the block size of the file."),
    ("-chgrp", "[-R] GROUP PATH...", "This is equivalent to -chown ... :GROUP ...\n-R  Modifies the files recursively."),
    ("-chmod", "[-R] <MODE[,MODE]... | OCTALMODE> PATH...", "Changes permissions of a file. MODE is [ugoa]*[+-=][rwxXt]+ or an octal mode.\n-R  Modifies the files recursively."),
    ("-chown", "[-R] [OWNER][:[GROUP]] PATH...", "Changes owner and group of a file.\n-R  Modifies the files recursively."),
    ("-concat", "<target path> <src path> <src path> ...", "Concatenate existing source files into the target file. Target file and source files should be in the same directory."),
    ("-copyFromLocal", "[-f] [-p] [-l] [-d] [-t <thread count>] [-q <thread pool queue size>] <localsrc> ... <dst>", "Copy files from the local file system into fs. Identical to the -put command."),
    ("-copyToLocal", "[-f] [-p] [-crc] [-ignoreCrc] [-t <thread count>] [-q <thread pool queue size>] <src> ... <localdst>", "Identical to the -get command."),
    ("-count", "[-q] [-h] [-v] [-t [<storage type>]] [-u] [-x] [-e] [-s] <path> ...", "Count the number of directories, files and bytes under the paths that match the specified file pattern. The output columns are: DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME, or, with -q: QUOTA REM_QUOTA SPACE_QUOTA REM_SPACE_QUOTA DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME.\n-q  Show quotas and their usage.\n-h  Shows file sizes in human readable format.\n-v  Displays a header line."),
    ("-cp", "[-f] [-p | -p[topax]] [-d] [-t <thread count>] [-q <thread pool queue size>] <src> ... <dst>", "Copy files that match the file pattern <src> to a destination. When copying multiple files, the destination must be a directory.\n-f  Overwrite the destination if it already exists.\n-p  Preserve timestamps, ownership and permission (-p[top] picks which).\n-d  Skip creation of the temporary file <dst>._COPYING_."),
    ("-createSnapshot", "<snapshotDir> [<snapshotName>]", "Create a snapshot on a directory"),
    ("-deleteSnapshot", "<snapshotDir> <snapshotName>", "Delete a snapshot from a directory"),
    ("-df", "[-h] [<path> ...]", "Shows the capacity, free and used space of the filesystem.\n-h  Formats the sizes of files in a human-readable fashion."),
    ("-du", "[-s] [-h] [-v] [-x] <path> ...", "Show the amount of space, in bytes, used by the files that match the specified file pattern.\n-s  Rather than showing the size of each individual file that matches the pattern, shows the total (summary) size.\n-h  Formats the sizes of files in a human-readable fashion."),
    ("-expunge", "[-immediate] [-fs <path>]", "Delete files from the trash that are older than the retention threshold, and checkpoint the current trash."),
    ("-find", "<path> ... <expression> ...", "Finds all files that match the specified expression and applies selected actions to them. If no <path> is specified then defaults to the current working directory. If no expression is specified then defaults to -print.\n-name pattern\n-iname pattern  Evaluates as true if the basename of the file matches the pattern using standard file system globbing. If -iname is used then the match is case insensitive.\n-print\n-print0  Always evaluates to true. Causes the current pathname to be written to standard output followed by a newline. If -print0 is used then an ASCII NULL character is appended."),
    ("-get", "[-f] [-p] [-crc] [-ignoreCrc] [-t <thread count>] [-q <thread pool queue size>] <src> ... <localdst>", "Copy files that match the file pattern <src> to the local name. <src> is kept."),
    ("-getfacl", "[-R] <path>", "Displays the Access Control Lists (ACLs) of files and directories. If a directory has a default ACL, then getfacl also displays the default ACL.\n-R  List the ACLs of all files and directories recursively."),
    ("-getfattr", "[-R] {-n name | -d} [-e en] <path>", "Displays the extended attribute names and values (if any) for a file or directory.\n-R  Recursively list the attributes for all files and directories.\n-n name  Dump the named extended attribute value.\n-d  Dump all extended attribute values associated with pathname.\n-e <encoding>  Encode values after retrieving them. Valid encodings are \"text\", \"hex\", and \"base64\"."),
    ("-getmerge", "[-nl] [-skip-empty-file] <src> <localdst>", "Get all the files in the directories that match the source file pattern and merge and sort them to only one file on local fs. <src> is kept.\n-nl  Add a newline character at the end of each file.\n-skip-empty-file  Do not add new line character for empty file."),
    ("-head", "<file>", "Show the first 1KB of the file."),
    ("-help", "[cmd ...]", "Displays help for given command or all commands if none is specified."),
    ("-ls", "[-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e] [<path> ...]", "List the contents that match the specified file pattern. Directory entries are of the form: permissions - userId groupId sizeOfDirectory(in bytes) modificationDate(yyyy-MM-dd HH:mm) directoryName; file entries: permissions numberOfReplicas userId groupId sizeOfFile(in bytes) modificationDate(yyyy-MM-dd HH:mm) fileName\n-d  Directories are listed as plain files.\n-h  Formats the sizes of files in a human-readable fashion.\n-R  Recursively list the contents of directories."),
    ("-mkdir", "[-p] <path> ...", "Create a directory in specified location.\n-p  Do not fail if the directory already exists"),
    ("-moveFromLocal", "[-f] [-p] [-l] [-d] <localsrc> ... <dst>", "Same as -put, except that the source is deleted after it's copied."),
    ("-moveToLocal", "<src> <localdst>", "Not implemented yet"),
    ("-mv", "<src> ... <dst>", "Move files that match the specified file pattern <src> to a destination <dst>. When moving multiple files, the destination must be a directory."),
    ("-put", "[-f] [-p] [-l] [-d] [-t <thread count>] [-q <thread pool queue size>] <localsrc> ... <dst>", "Copy files from the local file system into fs. Copying fails if the file already exists, unless the -f flag is given.\n-f  Overwrites the destination if it already exists."),
    ("-renameSnapshot", "<snapshotDir> <oldName> <newName>", "Rename a snapshot from oldName to newName"),
    ("-rm", "[-f] [-r|-R] [-skipTrash] [-safely] <src> ...", "Delete all files that match the specified file pattern.\n-f  If the file does not exist, do not display a diagnostic message or modify the exit status to reflect an error.\n-[rR]  Recursively deletes directories."),
    ("-rmdir", "[--ignore-fail-on-non-empty] <dir> ...", "Removes the directory entry specified by each directory argument, provided it is empty."),
    ("-setfacl", "[-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]", "Sets Access Control Lists (ACLs) of files and directories.\n-b  Remove all but the base ACL entries.\n-k  Remove the default ACL.\n-R  Apply operations to all files and directories recursively.\n-m  Modify ACL. New entries are added to the ACL, and existing entries are retained.\n-x  Remove specified ACL entries. Other ACL entries are retained.\n--set  Fully replace the ACL, discarding all existing entries."),
    ("-setfattr", "{-n name [-v value] | -x name} <path>", "Sets an extended attribute name and value for a file or directory.\n-n name  The extended attribute name.\n-v value  The extended attribute value.\n-x name  Remove the extended attribute."),
    ("-setrep", "[-R] [-w] <rep> <path> ...", "Set the replication level of a file. If <path> is a directory then the command recursively changes the replication factor of all files under the directory tree rooted at <path>.\n-w  It requests that the command waits for the replication to complete."),
    ("-stat", "[format] <path> ...", "Print statistics about the file/directory at <path> in the specified format. Format accepts permissions in octal (%a) and symbolic (%A), filesize in bytes (%b), type (%F), group name of owner (%g), name (%n), block size (%o), replication (%r), user name of owner (%u), access date (%x, %X), and modification date (%y, %Y)."),
    ("-tail", "[-f] [-s <sleep interval>] <file>", "Show the last 1KB of the file.\n-f  Shows appended data as the file grows.\n-s  With -f, defines the sleep interval between iterations in milliseconds."),
    ("-test", "-[defswrz] <path>", "Answer various questions about <path>, with result via exit status.\n-d  return 0 if <path> is a directory.\n-e  return 0 if <path> exists.\n-f  return 0 if <path> is a file.\n-s  return 0 if file <path> is greater than zero bytes in size.\n-z  return 0 if the file is zero bytes in size, else return 1."),
    ("-text", "[-ignoreCrc] <src> ...", "Takes a source file and outputs the file in text format. The allowed formats are zip (gzip) and TextRecordInputStream (SequenceFile)."),
    ("-touch", "[-a] [-m] [-t TIMESTAMP (yyyyMMdd:HHmmss) ] [-c] <path> ...", "Updates the access and modification times of the file specified by the <path> to the current time. If the file does not exist, then a zero length file is created at <path> with current time as the timestamp of that <path>.\n-a  Change only the access time\n-m  Change only the modification time\n-t TIMESTAMP  Use specified timestamp (in format yyyyMMdd:HHmmss) instead of current time\n-c  Do not create any files"),
    ("-touchz", "<path> ...", "Creates a file of zero length at <path> with current time as the timestamp of that <path>. An error is returned if the file exists with non-zero length."),
    ("-truncate", "[-w] <length> <path> ...", "Truncate all files that match the specified file pattern to the specified length.\n-w  Requests that the command wait for block recovery to complete, if necessary."),
    ("-usage", "[cmd ...]", "Displays the usage for given command or all commands if none is specified."),
];

struct Shell {
    client: DfsClient,
    user: String,
    default_fs: String,
    /// Set when any path of a multi-path command failed.
    failed: bool,
    /// The client's configuration (`fs.trash.interval` when the NameNode sets none).
    conf: Configuration,
}

/// Splits leading `-x` flags (letters of `known`, alone or together) from the
/// operands; `--` ends the flags. Anything else that looks like a flag is Hadoop's
/// "Illegal option" (`CommandFormat.UnknownOptionException`).
fn flags<'a>(args: &'a [String], known: &str) -> Result<(Vec<char>, &'a [String]), String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') && args[i].len() > 1 {
        if args[i] == "--" {
            i += 1;
            break;
        }
        let letters = &args[i][1..];
        if !letters.chars().all(|c| known.contains(c)) {
            return Err(format!("Illegal option {}", args[i]));
        }
        out.extend(letters.chars());
        i += 1;
    }
    Ok((out, &args[i..]))
}

/// Like [`flags`], with whole-word flags too (`-skipTrash`, `--ignore-fail-on-non-empty`):
/// returns each flag without its leading `-`, letters one by one.
fn word_flags<'a>(
    args: &'a [String],
    letters: &str,
    words: &[&str],
) -> Result<(Vec<String>, &'a [String]), String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') && args[i].len() > 1 {
        let flag = &args[i][1..];
        if words.contains(&flag) {
            out.push(flag.to_string());
        } else if flag.chars().all(|c| letters.contains(c)) {
            out.extend(flag.chars().map(String::from));
        } else {
            return Err(format!("Illegal option {}", args[i]));
        }
        i += 1;
    }
    Ok((out, &args[i..]))
}

/// Splits `<src> ... <dst>` operands of `-verb` into the sources and the destination;
/// fewer than two is Hadoop's "Not enough arguments".
fn sources_and_destination<'a>(
    verb: &str,
    ops: &'a [String],
) -> Result<(&'a [String], &'a str), String> {
    match ops.split_last() {
        Some((dst, srcs)) if !srcs.is_empty() => Ok((srcs, dst)),
        _ => Err(format!(
            "-{verb}: Not enough arguments: expected 2 but got {}",
            ops.len()
        )),
    }
}

/// Errors Hadoop's FsShell reports with the usage and exit code 255 (its
/// `IllegalArgumentException`s): unknown flags, operand counts, unknown verbs named to
/// `-help`/`-usage`. Returns the message without a leading `-verb: `.
fn usage_error<'a>(verb: &str, msg: &'a str) -> Option<&'a str> {
    let msg = msg
        .strip_prefix(verb)
        .and_then(|m| m.strip_prefix(": "))
        .unwrap_or(msg);
    let usage = [
        "Illegal option",
        "Not enough arguments",
        "Too many arguments",
        "No test flag given",
        "Only one test flag is allowed",
        "Unable to parse the specified timestamp",
    ]
    .iter()
    .any(|p| msg.starts_with(p))
        || msg.ends_with("': Unknown command")
        || msg.contains("does not match the expected pattern")
        || msg.contains("does not match expected pattern")
        || msg.ends_with("does not specify owner or group.")
        || msg.starts_with("For input string")
        || msg == "replication must be >= 1";
    usage.then_some(msg)
}

impl Shell {
    async fn run(mut self, conf: &Configuration, verb: &str, args: &[String]) -> i32 {
        let cmd = verb.trim_start_matches('-').to_string();
        let args = match self.prepare(conf, verb, args).await {
            Ok(Some(args)) => args,
            Ok(None) => return 1,
            Err(msg) => {
                eprintln!("{cmd}: {msg}");
                return 1;
            }
        };
        let args = args.as_slice();
        let result = match verb {
            "-ls" => self.ls(args).await,
            "-mkdir" => self.mkdir(args).await,
            "-put" | "-copyFromLocal" => self.put(&cmd, args, false).await,
            "-moveFromLocal" => self.put(&cmd, args, true).await,
            "-moveToLocal" => Err("Option '-moveToLocal' is not implemented yet.".into()),
            "-get" | "-copyToLocal" => self.get(&cmd, args).await,
            "-cat" => self.cat(args).await,
            "-mv" => self.mv(args).await,
            "-rm" => self.rm(args).await,
            "-expunge" => self.expunge(args).await,
            "-rmdir" => self.rmdir(args).await,
            "-stat" => self.stat(args).await,
            "-du" => self.du(args).await,
            "-df" => self.df(args).await,
            "-setrep" => self.setrep(args).await,
            "-chmod" => self.chmod(args).await,
            "-chown" => self.chown(args).await,
            "-touchz" => self.touchz(args).await,
            "-touch" => self.touch(args).await,
            "-test" => match self.test(args).await {
                Ok(code) => return code,
                Err(e) => Err(e),
            },
            "-getfacl" => self.getfacl(args).await,
            "-setfacl" => self.setfacl(args).await,
            "-getfattr" => self.getfattr(args).await,
            "-setfattr" => self.setfattr(args).await,
            "-count" => self.count(args).await,
            "-cp" => self.cp(args).await,
            "-chgrp" => self.chgrp(args).await,
            "-tail" => self.tail(args).await,
            "-head" => self.head(args).await,
            "-text" => self.text(args).await,
            "-getmerge" => self.getmerge(args).await,
            "-find" => self.find(args).await,
            "-help" => help::help(args),
            "-usage" => help::usage(args),
            // append
            "-appendToFile" => self.append_to_file(args).await,
            "-truncate" => self.truncate(args).await,
            "-concat" => self.concat(args).await,
            "-checksum" => self.checksum(args).await,
            // snapshots
            "-createSnapshot" => self.create_snapshot(args).await,
            "-deleteSnapshot" => self.delete_snapshot(args).await,
            "-renameSnapshot" => self.rename_snapshot(args).await,
            _ => {
                eprintln!("{verb}: Unknown command\n{}", help::usage_all());
                return 255;
            }
        };
        match result {
            Ok(()) if !self.failed => 0,
            Ok(()) => 1,
            Err(msg) => match usage_error(verb, &msg) {
                Some(usage) => {
                    eprintln!(
                        "{verb}: {usage}\n{}\n\n{}",
                        help::usage_all(),
                        help::usage_of(verb)
                    );
                    255
                }
                None => {
                    eprintln!("{cmd}: {msg}");
                    1
                }
            },
        }
    }

    /// Absolute path for an operand: URIs lose their scheme and authority (the command
    /// already runs against their cluster, see `operands`), relative paths are under
    /// `/user/<user>`, and `.`/`..` are resolved as Hadoop's `Path` does.
    fn resolve(&self, p: &str) -> String {
        let path = glob::split_uri(p).map(|o| o.path).unwrap_or(p);
        self.absolute(path)
    }

    fn report(&mut self, cmd: &str, path: &str, e: ClientError) {
        eprintln!("{cmd}: {}", describe(path, &e));
        self.failed = true;
    }

    /// A delete the NameNode answered with false, reported as Hadoop's FsShell does
    /// (`PathIOException`), naming the reason when it is the root.
    fn not_deleted(&mut self, cmd: &str, operand: &str, path: &str) {
        if path.bytes().all(|b| b == b'/') {
            eprintln!(
                "{cmd}: `{operand}': Input/output error: the root directory cannot be deleted"
            );
        } else {
            eprintln!("{cmd}: `{operand}': Input/output error");
        }
        self.failed = true;
    }

    async fn mkdir(&mut self, args: &[String]) -> Result<(), String> {
        let (f, paths) = flags(args, "p")?;
        if paths.is_empty() {
            return Err("-mkdir: Not enough arguments: expected 1 but got 0".into());
        }
        let parents = f.contains(&'p');
        for p in paths {
            let path = self.resolve(p);
            match self.client.get_file_info(&path).await {
                Ok(Some(s)) if s.is_dir && parents => continue,
                Ok(Some(s)) if s.is_dir => {
                    eprintln!("mkdir: `{p}': File exists");
                    self.failed = true;
                    continue;
                }
                Ok(Some(_)) => {
                    eprintln!("mkdir: `{p}': Not a directory");
                    self.failed = true;
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    self.report("mkdir", p, e);
                    continue;
                }
            }
            // As Hadoop's Mkdir: without -p only a missing parent is refused here (named
            // by its qualified path); a parent that is a file is the NameNode's to refuse,
            // with or without -p.
            let parent = parent_of(&path);
            if !parents && !matches!(self.client.get_file_info(&parent).await, Ok(Some(_))) {
                let fs = self.default_fs.trim_end_matches('/');
                eprintln!("mkdir: `{fs}{parent}': No such file or directory");
                self.failed = true;
                continue;
            }
            match self.client.mkdirs(&path, 0o755, true).await {
                Ok(_) => {}
                Err(e) if e.remote_exception() == Some(HadoopException::ParentNotDirectory) => {
                    eprintln!("mkdir: {}", remote_message(&e));
                    self.failed = true;
                }
                Err(e) => self.report("mkdir", p, e),
            }
        }
        Ok(())
    }

    /// Where a copy of `src_name` goes: into `dst` if it is a directory.
    async fn target(&self, dst: &str, src_name: &str, many: bool) -> Result<String, String> {
        let info = self
            .client
            .get_file_info(dst)
            .await
            .map_err(|e| describe(dst, &e))?;
        match info {
            Some(s) if s.is_dir => Ok(format!("{}/{}", dst.trim_end_matches('/'), src_name)),
            _ if many => Err(format!("`{dst}': Is not a directory")),
            _ => Ok(dst.to_string()),
        }
    }

    async fn cat(&mut self, args: &[String]) -> Result<(), String> {
        let stdout = std::io::stdout();
        for p in args {
            let path = self.resolve(p);
            match self.client.get_file_info(&path).await {
                Ok(Some(s)) if s.is_dir => {
                    eprintln!("cat: `{p}': Is a directory");
                    self.failed = true;
                    continue;
                }
                _ => {}
            }
            let mut r = match self.client.open(&path).await {
                Ok(r) => r,
                Err(e) => {
                    self.report("cat", p, e);
                    continue;
                }
            };
            let mut buf = vec![0u8; 1 << 20];
            loop {
                match r.read(&mut buf).await {
                    Ok(0) => break,
                    Ok(n) => {
                        if stdout.lock().write_all(&buf[..n]).is_err() {
                            return Ok(());
                        }
                    }
                    Err(e) => {
                        self.report("cat", p, e);
                        break;
                    }
                }
            }
        }
        let _ = stdout.lock().flush();
        Ok(())
    }

    async fn mv(&mut self, args: &[String]) -> Result<(), String> {
        if args.len() < 2 {
            return Err(format!(
                "-mv: Not enough arguments: expected 2 but got {}",
                args.len()
            ));
        }
        let (srcs, dst) = args.split_at(args.len() - 1);
        let dst_path = self.resolve(&dst[0]);
        if srcs.len() == 1 && !self.mv_target_parent_exists(&dst_path).await {
            // Hadoop's CommandWithDestination checks this before it renames: the
            // NameNode's rename only answers false, which would say nothing.
            return Err(format!("`{}': No such file or directory", dst[0]));
        }
        for src in srcs {
            let path = self.resolve(src);
            if let Err(e) = self.client.stat(&path).await {
                self.report("mv", src, e);
                continue;
            }
            let name = path.rsplit('/').next().unwrap_or_default().to_string();
            let target = match self.target(&dst_path, &name, srcs.len() > 1).await {
                Ok(t) => t,
                Err(e) => return Err(e),
            };
            if let Ok(Some(_)) = self.client.get_file_info(&target).await {
                eprintln!("mv: `{}': File exists", dst[0]);
                self.failed = true;
                continue;
            }
            match self.client.rename(&path, &target).await {
                Ok(true) => {}
                Ok(false) => {
                    eprintln!("mv: `{src}': Input/output error");
                    self.failed = true;
                }
                Err(e) => self.report("mv", src, e),
            }
        }
        Ok(())
    }

    /// Whether a single-source `-mv` can land at `dst`: it exists, or the directory it
    /// would be created in does (Hadoop's `PathData.parentExists`).
    async fn mv_target_parent_exists(&self, dst: &str) -> bool {
        let parent = match dst.trim_end_matches('/').rsplit_once('/') {
            _ if dst.ends_with('/') => dst,
            Some(("", _)) | None => "/",
            Some((parent, _)) => parent,
        };
        matches!(self.client.get_file_info(parent).await, Ok(Some(_)))
            || matches!(self.client.get_file_info(dst).await, Ok(Some(_)))
    }

    async fn rm(&mut self, args: &[String]) -> Result<(), String> {
        let (f, paths) = word_flags(args, "rRf", &["skipTrash", "safely"])?;
        let has = |flag: &str| f.iter().any(|x| x == flag);
        let recursive = has("r") || has("R");
        let force = has("f");
        let skip_trash = has("skipTrash");
        if paths.is_empty() && !force {
            return Err("-rm: Not enough arguments: expected 1 but got 0".into());
        }
        let limit = self
            .conf
            .get_str("hadoop.shell.safely.delete.limit.num.files", "100")
            .parse::<u64>()
            .unwrap_or(100);
        for p in paths {
            let path = self.resolve(p);
            match self.client.get_file_info(&path).await {
                Ok(Some(s)) if s.is_dir && !recursive => {
                    eprintln!("rm: `{p}': Is a directory");
                    self.failed = true;
                }
                Ok(Some(s))
                    if s.is_dir && has("safely") && !self.safe_to_delete(&path, limit).await =>
                {
                    eprintln!("Delete aborted at user request.\n");
                }
                Ok(Some(_)) if !skip_trash && self.move_to_trash(&path).await? => {}
                Ok(Some(_)) => match self.client.delete(&path, recursive).await {
                    Ok(true) => println!("Deleted {p}"),
                    Ok(false) => self.not_deleted("rm", p, &path),
                    Err(e) => self.report("rm", p, e),
                },
                Ok(None) if force => {}
                Ok(None) => {
                    eprintln!("rm: `{p}': No such file or directory");
                    self.failed = true;
                }
                Err(e) => self.report("rm", p, e),
            }
        }
        Ok(())
    }

    /// `-rm -safely`: a directory holding more than `limit` files is deleted only when
    /// the user says so (Hadoop's `confirmPrompt`; end of input is a no).
    async fn safe_to_delete(&self, path: &str, limit: u64) -> bool {
        let files = match self.client.content_summary(path).await {
            Ok(cs) => cs.file_count,
            Err(_) => return true,
        };
        if limit == 0 || files <= limit {
            return true;
        }
        loop {
            eprint!("Proceed deleting {files} files? (Y or N) ");
            let mut answer = String::new();
            match std::io::stdin().read_line(&mut answer) {
                Ok(0) | Err(_) => return false,
                Ok(_) => {}
            }
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return true,
                "n" | "no" => return false,
                other => eprintln!("Invalid input: {other}"),
            }
        }
    }

    /// `-rmdir [--ignore-fail-on-non-empty] <dir> ...`.
    async fn rmdir(&mut self, args: &[String]) -> Result<(), String> {
        let (f, dirs) = word_flags(args, "", &["-ignore-fail-on-non-empty"])?;
        if dirs.is_empty() {
            return Err("Not enough arguments: expected 1 but got 0".into());
        }
        let ignore_non_empty = !f.is_empty();
        for p in dirs {
            let path = self.resolve(p);
            match self.client.stat(&path).await {
                Ok(s) if !s.is_dir => {
                    eprintln!("rmdir: `{p}': Is not a directory");
                    self.failed = true;
                }
                Ok(_) => match self.client.delete(&path, false).await {
                    Ok(true) => {}
                    Ok(false) => self.not_deleted("rmdir", p, &path),
                    Err(e)
                        if ignore_non_empty
                            && e.remote_exception()
                                == Some(HadoopException::PathIsNotEmptyDirectory) => {}
                    Err(e) => self.report("rmdir", p, e),
                },
                Err(e) => self.report("rmdir", p, e),
            }
        }
        Ok(())
    }

    async fn stat(&mut self, args: &[String]) -> Result<(), String> {
        let (fmt, paths) = match args.first() {
            Some(f) if args.len() > 1 && !f.starts_with('/') && f.contains('%') => {
                (f.as_str(), &args[1..])
            }
            _ => ("%y", args),
        };
        for p in paths {
            let path = self.resolve(p);
            match self.client.stat(&path).await {
                Ok(s) => println!("{}", stat_format(fmt, p, &s)),
                Err(e) => self.report("stat", p, e),
            }
        }
        Ok(())
    }

    /// `-du [-s] [-h] [-v] [-x] <path> ...`: one table for the whole command, as
    /// Hadoop's `Du` prints it (columns as wide as their widest cell, two blanks apart).
    async fn du(&mut self, args: &[String]) -> Result<(), String> {
        let (f, paths) = flags(args, "shvx")?;
        let human = f.contains(&'h');
        let exclude_snapshots = f.contains(&'x');
        let paths: Vec<String> = if paths.is_empty() {
            vec![".".into()]
        } else {
            paths.to_vec()
        };
        let mut rows = Vec::new();
        for p in &paths {
            let path = self.resolve(p);
            let status = match self.client.stat(&path).await {
                Ok(s) => s,
                Err(e) => {
                    self.report("du", p, e);
                    continue;
                }
            };
            let items: Vec<(String, String)> = if f.contains(&'s') || !status.is_dir {
                vec![(path.clone(), p.clone())]
            } else {
                match self.client.list(&path).await {
                    Ok(children) => children
                        .iter()
                        .map(|c| {
                            (
                                format!("{}/{}", path.trim_end_matches('/'), c.path),
                                format!("{}/{}", p.trim_end_matches('/'), c.path),
                            )
                        })
                        .collect(),
                    Err(e) => {
                        self.report("du", p, e);
                        continue;
                    }
                }
            };
            for (full, shown) in items {
                match self.client.content_summary(&full).await {
                    Ok(cs) => {
                        let (mut length, mut space) = (cs.length, cs.space_consumed);
                        if exclude_snapshots {
                            length = length.saturating_sub(cs.snapshot_length.unwrap_or(0));
                            space = space.saturating_sub(cs.snapshot_space_consumed.unwrap_or(0));
                        }
                        rows.push(vec![
                            format::size(length, human),
                            format::size(space, human),
                            shown,
                        ]);
                    }
                    Err(e) => self.report("du", &shown, e),
                }
            }
        }
        if !rows.is_empty() && f.contains(&'v') {
            let header = [
                "SIZE",
                "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS",
                "FULL_PATH_NAME",
            ];
            rows.insert(0, header.iter().map(|h| h.to_string()).collect());
        }
        for line in format::table(&rows, &[false, false, false]) {
            println!("{line}");
        }
        Ok(())
    }

    /// `-df [-h] [<path> ...]`: one row per path, Hadoop's `Df` table.
    async fn df(&mut self, args: &[String]) -> Result<(), String> {
        let (f, paths) = flags(args, "h")?;
        let human = f.contains(&'h');
        let mut rows = vec![["Filesystem", "Size", "Used", "Available", "Use%"]
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()];
        for _ in 0..paths.len().max(1) {
            let stats = self
                .client
                .fs_stats()
                .await
                .map_err(|e| describe("/", &e))?;
            let used_pct = if stats.capacity > 0 {
                stats.used as f64 * 100.0 / stats.capacity as f64
            } else {
                0.0
            };
            rows.push(vec![
                self.default_fs.trim_end_matches('/').to_string(),
                format::size(stats.capacity, human),
                format::size(stats.used, human),
                format::size(stats.remaining, human),
                format!("{}%", used_pct.round() as u64),
            ]);
        }
        for line in format::table(&rows, &[false, true, true, true, true]) {
            println!("{line}");
        }
        Ok(())
    }

    /// `-setrep [-R] [-w] <rep> <path> ...`: every file under each path (always
    /// recursive, as Hadoop's), in listing order; `-w` then waits for each.
    async fn setrep(&mut self, args: &[String]) -> Result<(), String> {
        let (f, ops) = flags(args, "Rw")?;
        if ops.len() < 2 {
            return Err(format!(
                "Not enough arguments: expected 2 but got {}",
                ops.len()
            ));
        }
        let (n, paths) = ops.split_first().expect("two operands");
        // Hadoop parses a Java short and only then checks the range: a non-number is
        // the warning and the NumberFormatException, a number below 1 the one usage error.
        let replication: i16 = match n.parse() {
            Ok(r) => r,
            Err(_) => {
                eprintln!("setrep: Illegal replication, a positive integer expected");
                return Err(format!("For input string: \"{n}\""));
            }
        };
        let Ok(replication @ 1..) = u16::try_from(replication) else {
            return Err("replication must be >= 1".into());
        };
        let mut waiting = Vec::new();
        for p in paths {
            let path = self.resolve(p);
            let files = match self.files_under(&path).await {
                Ok(f) => f,
                Err(e) => {
                    self.report("setrep", p, e);
                    continue;
                }
            };
            for file in files {
                let shown = format!("{p}{}", &file[path.len().min(file.len())..]);
                match self.client.set_replication(&file, replication).await {
                    Ok(_) => println!("Replication {replication} set: {shown}"),
                    Err(e) => self.report("setrep", &shown, e),
                }
                waiting.push((file, shown));
            }
        }
        if f.contains(&'w') {
            for (file, shown) in waiting {
                self.wait_replication(&file, &shown, replication).await;
            }
        }
        Ok(())
    }

    /// `-setrep -w`: Hadoop's "Waiting for FILE ..." with a dot per check, a warning
    /// when replicas must go away, and " done".
    async fn wait_replication(&self, file: &str, shown: &str, replication: u16) {
        print!("Waiting for {shown} ...");
        let _ = std::io::stdout().flush();
        let mut warned = false;
        loop {
            let counts: Vec<usize> = match self.client.block_locations(file, 0, u64::MAX).await {
                Ok(b) => b.blocks.iter().map(|b| b.locs.len()).collect(),
                Err(_) => vec![],
            };
            let wrong = counts.iter().find(|&&c| c != replication as usize);
            let Some(&current) = wrong else {
                println!(" done");
                return;
            };
            if !warned && current > replication as usize {
                println!(
                    "\nWARNING: the waiting time may be long for DECREASING the number of replications."
                );
                warned = true;
            }
            print!(".");
            let _ = std::io::stdout().flush();
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    }

    /// A file itself, or every file below a directory.
    async fn files_under(&self, path: &str) -> Result<Vec<String>, ClientError> {
        Ok(self
            .tree(path, true)
            .await?
            .into_iter()
            .filter(|(_, s)| !s.is_dir)
            .map(|(p, _)| p)
            .collect())
    }

    /// The path and, with `recursive`, everything below it: depth first, each
    /// directory's entries in listing order right after it (the order Hadoop's shell
    /// walks a tree).
    async fn tree(
        &self,
        path: &str,
        recursive: bool,
    ) -> Result<Vec<(String, FileStatus)>, ClientError> {
        let s = self.client.stat(path).await?;
        let mut out = Vec::new();
        let mut stack = vec![(path.to_string(), s)];
        while let Some((item, status)) = stack.pop() {
            if recursive && status.is_dir {
                let children = self.client.list(&item).await?;
                for c in children.into_iter().rev() {
                    let full = format!("{}/{}", item.trim_end_matches('/'), c.path);
                    stack.push((full, c));
                }
            }
            out.push((item, status));
        }
        Ok(out)
    }

    async fn chmod(&mut self, args: &[String]) -> Result<(), String> {
        let (f, ops) = flags(args, "R")?;
        let Some((mode, paths)) = ops.split_first() else {
            return Err("-chmod: Not enough arguments: expected 2 but got 0".into());
        };
        for p in paths {
            let path = self.resolve(p);
            let items = match self.tree(&path, f.contains(&'R')).await {
                Ok(i) => i,
                Err(e) => {
                    self.report("chmod", p, e);
                    continue;
                }
            };
            for (item, status) in items {
                let new = apply_mode(mode, status.permission, status.is_dir).ok_or_else(|| {
                    format!("chmod : mode '{mode}' does not match the expected pattern.")
                })?;
                if let Err(e) = self.client.set_permission(&item, new).await {
                    self.report("chmod", &item, e);
                }
            }
        }
        Ok(())
    }

    async fn chown(&mut self, args: &[String]) -> Result<(), String> {
        let (f, ops) = flags(args, "R")?;
        let Some((spec, paths)) = ops.split_first() else {
            return Err("-chown: Not enough arguments: expected 2 but got 0".into());
        };
        let (owner, group) = owner_and_group(spec)?;
        for p in paths {
            let path = self.resolve(p);
            let items = match self.tree(&path, f.contains(&'R')).await {
                Ok(i) => i,
                Err(e) => {
                    self.report("chown", p, e);
                    continue;
                }
            };
            for (item, _) in items {
                if let Err(e) = self.client.set_owner(&item, owner, group).await {
                    self.report("chown", &item, e);
                }
            }
        }
        Ok(())
    }

    async fn touchz(&mut self, args: &[String]) -> Result<(), String> {
        for p in args {
            let path = self.resolve(p);
            match self.client.get_file_info(&path).await {
                Ok(Some(s)) if s.is_dir => {
                    eprintln!("touchz: `{p}': Is a directory");
                    self.failed = true;
                }
                Ok(Some(s)) if s.length != 0 => {
                    eprintln!("touchz: `{p}': Not a zero-length file");
                    self.failed = true;
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    if let Err(e) = self
                        .client
                        .write_file(&path, &[], CreateOptions::default())
                        .await
                    {
                        self.report("touchz", p, e);
                    }
                }
                Err(e) => self.report("touchz", p, e),
            }
        }
        Ok(())
    }

    /// `-test -[defswrz] path`: exit 0 when true, 1 when false. `-w` and `-r` ask
    /// the NameNode whether this user may write or read the path (checkAccess).
    async fn test(&mut self, args: &[String]) -> Result<i32, String> {
        let (f, ops) = flags(args, "defswrz")?;
        if ops.len() != 1 {
            let many = if ops.len() > 1 {
                "Too many"
            } else {
                "Not enough"
            };
            return Err(format!(
                "{many} arguments: expected 1 but got {}",
                ops.len()
            ));
        }
        let flag = match f.as_slice() {
            [] => return Err("No test flag given".into()),
            [flag] => *flag,
            _ => return Err("Only one test flag is allowed".into()),
        };
        let p = &ops[0];
        let path = self.resolve(p);
        let info = match self.client.get_file_info(&path).await {
            Ok(Some(i)) => i,
            Ok(None) => return Ok(1),
            Err(e) => {
                eprintln!("test: {}", describe(p, &e));
                return Ok(1);
            }
        };
        let truth = match flag {
            'd' => info.is_dir,
            'f' => !info.is_dir,
            's' => info.length > 0,
            'z' => info.length == 0,
            'w' | 'r' => {
                let mode = if flag == 'w' { 2 } else { 4 };
                match self.client.check_access(&path, mode).await {
                    Ok(()) => true,
                    Err(e) if e.remote_exception() == Some(HadoopException::AccessControl) => false,
                    Err(e) => {
                        eprintln!("test: {}", describe(p, &e));
                        return Ok(1);
                    }
                }
            }
            _ => true,
        };
        Ok(i32::from(!truth))
    }
}

/// `[OWNER][:[GROUP]]` as Hadoop's `ChownCommand` takes it: names of `-_./@` and
/// letters and digits, blanks around the whole allowed.
fn owner_and_group(spec: &str) -> Result<(Option<&str>, Option<&str>), String> {
    let allowed = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./@".contains(c))
    };
    let trimmed = spec.trim();
    let (owner, group) = match trimmed.split_once(':') {
        Some((o, g)) => (o, Some(g)),
        None => (trimmed, None),
    };
    if !allowed(owner) || !group.is_none_or(allowed) {
        return Err(format!(
            "'{spec}' does not match expected pattern for [owner][:group]."
        ));
    }
    let owner = Some(owner).filter(|o| !o.is_empty());
    let group = group.filter(|g| !g.is_empty());
    if owner.is_none() && group.is_none() {
        return Err(format!("'{spec}' does not specify owner or group."));
    }
    Ok((owner, group))
}

fn parent_of(path: &str) -> String {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) | None => "/".into(),
        Some((p, _)) => p.into(),
    }
}

/// Reads until `buf` is full or the file ends; returns how many bytes were read.
async fn read_full(
    r: &mut tusk_client::FileReader,
    buf: &mut [u8],
    operand: &str,
) -> Result<usize, String> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = r
            .read(&mut buf[filled..])
            .await
            .map_err(|e| describe(operand, &e))?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

/// FsShell's wording for common errors.
fn describe(path: &str, e: &ClientError) -> String {
    use HadoopException::*;
    match e.remote_exception() {
        Some(FileNotFound) => format!("`{path}': No such file or directory"),
        Some(FileAlreadyExists) => format!("`{path}': File exists"),
        // The NameNode's message already reads "Permission denied: user=..., access=...".
        Some(AccessControl) => {
            let message = remote_message(e);
            if message.starts_with("Permission denied") {
                message
            } else {
                format!("Permission denied: {message}")
            }
        }
        Some(ParentNotDirectory) => format!("`{path}': Is not a directory"),
        Some(PathIsNotEmptyDirectory) => format!("`{path}': Directory is not empty"),
        _ if e.remote_class().is_some() => remote_message(e),
        _ => format!("`{path}': {e}"),
    }
}

fn remote_message(e: &ClientError) -> String {
    match e {
        ClientError::Remote(r) => r.message.clone(),
        other => other.to_string(),
    }
}

fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

/// `-stat` format: %b size, %F type, %g group, %n name, %o block size, %r replication,
/// %u owner, %y date, %Y epoch ms, %a octal permissions, %A symbolic.
fn stat_format(fmt: &str, shown: &str, s: &FileStatus) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push_str(&s.length.to_string()),
            Some('F') => out.push_str(if s.is_dir {
                "directory"
            } else if s.length == 0 {
                "regular empty file"
            } else {
                "regular file"
            }),
            Some('g') => out.push_str(&s.group),
            Some('n') => out.push_str(shown.rsplit('/').next().unwrap_or(shown)),
            Some('o') => out.push_str(&s.block_size.to_string()),
            Some('r') => out.push_str(&s.replication.to_string()),
            Some('u') => out.push_str(&s.owner),
            Some('y') => out.push_str(&format::date_seconds(s.modification_time)),
            Some('Y') => out.push_str(&s.modification_time.to_string()),
            Some('x') => out.push_str(&format::date_seconds(s.access_time)),
            Some('X') => out.push_str(&s.access_time.to_string()),
            Some('a') => out.push_str(&format!("{:o}", s.permission)),
            Some('A') => out.push_str(&s.permission_string()[1..]),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Applies an octal (`755`) or symbolic (`u+x,go-w`, `a=r`) mode.
fn apply_mode(mode: &str, current: u16, is_dir: bool) -> Option<u16> {
    if mode.chars().all(|c| c.is_ascii_digit()) {
        return u16::from_str_radix(mode, 8).ok().filter(|m| *m <= 0o1777);
    }
    let mut perm = current;
    for clause in mode.split(',') {
        let op_at = clause.find(['+', '-', '='])?;
        let (who, rest) = clause.split_at(op_at);
        let op = rest.chars().next()?;
        let mut bits = 0u16;
        for c in rest[1..].chars() {
            bits |= match c {
                'r' => 0o444,
                'w' => 0o222,
                'x' => 0o111,
                'X' if is_dir || current & 0o111 != 0 => 0o111,
                'X' => 0,
                't' => 0o1000,
                _ => return None,
            };
        }
        let mut mask = 0u16;
        for c in if who.is_empty() {
            "a".chars()
        } else {
            who.chars()
        } {
            mask |= match c {
                'u' => 0o4700,
                'g' => 0o2070,
                'o' => 0o1007,
                'a' => 0o7777,
                _ => return None,
            };
        }
        let bits = bits & (mask | 0o1000);
        perm = match op {
            '+' => perm | bits,
            '-' => perm & !bits,
            _ => (perm & !(mask & 0o777)) | bits,
        };
    }
    Some(perm & 0o1777)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A command line's words, as the shell's parsers take them.
    pub(crate) fn words(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn modes_apply_like_chmod() {
        assert_eq!(apply_mode("755", 0, false), Some(0o755));
        assert_eq!(apply_mode("u+x", 0o644, false), Some(0o744));
        assert_eq!(apply_mode("go-r", 0o644, false), Some(0o600));
        assert_eq!(apply_mode("a=r", 0o777, false), Some(0o444));
        assert_eq!(apply_mode("q+x", 0o644, false), None);
        assert_eq!(apply_mode("99999", 0, false), None);
    }

    #[test]
    fn flags_split_from_operands() {
        let args: Vec<String> = ["-R", "-h", "/a"].iter().map(|s| s.to_string()).collect();
        let (f, rest) = flags(&args, "Rh").unwrap();
        assert_eq!(f, vec!['R', 'h']);
        assert_eq!(rest, &args[2..]);
        assert_eq!(flags(&args, "h").unwrap_err(), "Illegal option -R");
        assert_eq!(
            usage_error("-ls", "Illegal option -R"),
            Some("Illegal option -R")
        );
        assert_eq!(
            usage_error(
                "-mkdir",
                "-mkdir: Not enough arguments: expected 1 but got 0"
            ),
            Some("Not enough arguments: expected 1 but got 0")
        );
        assert_eq!(usage_error("-cat", "`/x': No such file or directory"), None);
        assert_eq!(
            owner_and_group(" alice:staff "),
            Ok((Some("alice"), Some("staff")))
        );
        assert_eq!(owner_and_group(":staff"), Ok((None, Some("staff"))));
        assert!(owner_and_group("bad user").is_err());
        assert!(owner_and_group(":").is_err());
        assert_eq!(parent_of("/a/b"), "/a");
        assert_eq!(parent_of("/a"), "/");
    }
}

//! `-ls [-C] [-d] [-h] [-q] [-R] [-t] [-S] [-r] [-u] [-e] [<path> ...]`, as Hadoop's `Ls`:
//! a directory's entries sorted (by name, or newest first with `-t`, largest first with
//! `-S`, reversed with `-r`; not with `-R`), a `Found N items` line before a non-empty
//! listing, and columns as wide as the widest value seen so far in the command (the
//! widths only grow, from one argument or directory listing to the next).

use tusk_client::FileStatus;

use super::format::{date_minutes, size};
use super::{flags, Shell};

#[derive(Debug, Default)]
struct LsOptions {
    /// `-C`: paths only.
    paths_only: bool,
    /// Not `-d`: a directory argument lists its entries.
    list_dirs: bool,
    human: bool,
    /// `-q`: `?` for characters that do not print.
    printable: bool,
    recursive: bool,
    by_time: bool,
    by_size: bool,
    reverse: bool,
    /// `-u`: access times, shown and sorted by.
    atime: bool,
}

/// Column widths, grown over every row printed so far (Hadoop's `adjustColumnWidths`).
#[derive(Debug)]
struct Widths {
    replication: usize,
    length: usize,
    owner: usize,
    group: usize,
}

impl Default for Widths {
    fn default() -> Self {
        Widths {
            replication: 3,
            length: 10,
            owner: 0,
            group: 0,
        }
    }
}

impl Widths {
    /// Widens for `rows`: replication and length measured as numbers (a directory's
    /// replication is 0, its `-` fits), the length before `-h` formats it.
    fn grow(&mut self, rows: &[(String, FileStatus)]) {
        for (_, s) in rows {
            self.replication = self.replication.max(s.replication.to_string().len());
            self.length = self.length.max(s.length.to_string().len());
            self.owner = self.owner.max(s.owner.len());
            self.group = self.group.max(s.group.len());
        }
    }
}

fn line(shown: &str, s: &FileStatus, w: &Widths, o: &LsOptions) -> String {
    let repl = if s.is_dir {
        "-".to_string()
    } else {
        s.replication.to_string()
    };
    let owner = pad_right(&s.owner, w.owner);
    let group = pad_right(&s.group, w.group);
    let time = if o.atime {
        s.access_time
    } else {
        s.modification_time
    };
    format!(
        "{}{}{repl:>rw$} {owner}{group}{:>lw$} {} {shown}",
        s.permission_string(),
        if s.has_acl { "+" } else { " " },
        size(s.length, o.human),
        date_minutes(time),
        rw = w.replication,
        lw = w.length,
    )
}

/// `%-Ns ` for a width above zero, `%s` otherwise (as Hadoop builds its format).
fn pad_right(value: &str, width: usize) -> String {
    if width == 0 {
        value.to_string()
    } else {
        format!("{value:<width$} ")
    }
}

/// `-q`: characters that do not print become `?` (Hadoop's `PrintableString`).
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn join(base: &str, name: &str) -> String {
    if base.ends_with('/') {
        format!("{base}{name}")
    } else {
        format!("{base}/{name}")
    }
}

impl Shell {
    pub(super) async fn ls(&mut self, args: &[String]) -> Result<(), String> {
        let (f, paths) = flags(args, "CdhqRtSrue")?;
        let has = |c| f.contains(&c);
        let o = LsOptions {
            paths_only: has('C'),
            list_dirs: !has('d'),
            human: has('h'),
            printable: has('q'),
            recursive: has('R') && !has('d'),
            by_time: has('t'),
            by_size: has('S') && !has('t'),
            reverse: has('r'),
            atime: has('u'),
        };
        let paths: Vec<String> = if paths.is_empty() {
            vec![".".into()]
        } else {
            paths.to_vec()
        };
        let mut widths = Widths::default();
        for p in &paths {
            let path = self.resolve(p);
            let status = match self.client.stat(&path).await {
                Ok(s) => s,
                Err(e) => {
                    self.report("ls", p, e);
                    continue;
                }
            };
            if status.is_dir && o.list_dirs {
                self.ls_dir(&path, p, &o, &mut widths).await;
            } else {
                let rows = [(p.clone(), status)];
                self.print_rows(&rows, &o, &mut widths);
            }
        }
        Ok(())
    }

    fn print_rows(&self, rows: &[(String, FileStatus)], o: &LsOptions, w: &mut Widths) {
        if !o.paths_only {
            w.grow(rows);
        }
        for (shown, s) in rows {
            let shown = if o.printable {
                printable(shown)
            } else {
                shown.clone()
            };
            if o.paths_only {
                println!("{shown}");
            } else {
                println!("{}", line(&shown, s, w, o));
            }
        }
    }

    async fn ls_dir(&mut self, path: &str, shown: &str, o: &LsOptions, w: &mut Widths) {
        let entries = match self.client.list(path).await {
            Ok(e) => e,
            Err(e) => return self.report("ls", shown, e),
        };
        let mut rows: Vec<(String, FileStatus)> = entries
            .into_iter()
            .map(|s| (join(shown, &s.path), s))
            .collect();
        if !o.recursive && !rows.is_empty() {
            if !o.paths_only {
                println!("Found {} items", rows.len());
            }
            sort(&mut rows, o);
        }
        if !o.paths_only {
            w.grow(&rows);
        }
        for row in &rows {
            self.print_rows(std::slice::from_ref(row), o, w);
            let (child_shown, s) = row;
            if o.recursive && s.is_dir {
                let child = join(path, &s.path);
                Box::pin(self.ls_dir(&child, child_shown, o, w)).await;
            }
        }
    }
}

/// Hadoop's order: newest first (`-t`), largest first (`-S`), else by path; `-r`
/// reverses; ties keep the NameNode's order.
fn sort(rows: &mut [(String, FileStatus)], o: &LsOptions) {
    let time = |s: &FileStatus| {
        if o.atime {
            s.access_time
        } else {
            s.modification_time
        }
    };
    rows.sort_by(|(pa, a), (pb, b)| {
        let order = if o.by_time {
            time(b).cmp(&time(a))
        } else if o.by_size {
            b.length.cmp(&a.length)
        } else {
            pa.cmp(pb)
        };
        if o.reverse {
            order.reverse()
        } else {
            order
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(owner: &str, length: u64, mtime: u64) -> FileStatus {
        FileStatus {
            path: String::new(),
            is_dir: false,
            length,
            replication: 3,
            block_size: 0,
            permission: 0o644,
            owner: owner.into(),
            group: "g".into(),
            modification_time: mtime,
            access_time: 0,
            file_id: 1,
            children: 0,
            has_acl: false,
            storage_policy: 0,
        }
    }

    #[test]
    fn columns_align_over_the_whole_listing() {
        let rows = vec![
            ("/a".to_string(), status("averylongname", 3, 0)),
            ("/b".to_string(), status("root", 20_000_000_000, 0)),
        ];
        let mut w = Widths::default();
        w.grow(&rows);
        let o = LsOptions::default();
        assert_eq!(
            line(&rows[0].0, &rows[0].1, &w, &o),
            "-rw-r--r--   3 averylongname g           3 1970-01-01 00:00 /a"
        );
        assert_eq!(
            line(&rows[1].0, &rows[1].1, &w, &o),
            "-rw-r--r--   3 root          g 20000000000 1970-01-01 00:00 /b"
        );
    }

    #[test]
    fn listings_sort_as_hadoops() {
        let mut rows = vec![
            ("/b".to_string(), status("u", 1, 20)),
            ("/a".to_string(), status("u", 5, 10)),
            ("/c".to_string(), status("u", 3, 30)),
        ];
        let names = |rows: &[(String, FileStatus)]| {
            rows.iter()
                .map(|(p, _)| p.clone())
                .collect::<Vec<_>>()
                .join(" ")
        };
        sort(&mut rows, &LsOptions::default());
        assert_eq!(names(&rows), "/a /b /c");
        let by_time = LsOptions {
            by_time: true,
            ..Default::default()
        };
        sort(&mut rows, &by_time);
        assert_eq!(names(&rows), "/c /b /a");
        let by_size_reversed = LsOptions {
            by_size: true,
            reverse: true,
            ..Default::default()
        };
        sort(&mut rows, &by_size_reversed);
        assert_eq!(names(&rows), "/b /c /a");
        assert_eq!(printable("a\tb"), "a?b");
    }
}

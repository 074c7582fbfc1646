//! `-find <path> ... <expression>`: Hadoop's `Find` with its expressions `-name`,
//! `-iname` (globs on the base name), `-print`, `-print0` and `-a`/`-and` (implicit).
//! Paths are visited depth first, each before its children, children in listing order.

use std::io::Write;

use tusk_client::FileStatus;

use super::glob::Pattern;
use super::Shell;

/// One term of the expression; all terms must hold (`-and`).
enum Term {
    Name { pattern: Pattern, fold_case: bool },
    Print { terminator: u8 },
}

fn parse(expression: &[String]) -> Result<Vec<Term>, String> {
    let mut terms = Vec::new();
    let mut it = expression.iter();
    while let Some(arg) = it.next() {
        let term = match arg.as_str() {
            "-name" | "-iname" => {
                let fold_case = arg == "-iname";
                let raw = it.next().ok_or_else(|| {
                    format!("Not enough arguments: expected 1 but got 0 for {arg}")
                })?;
                let text = if fold_case {
                    raw.to_lowercase()
                } else {
                    raw.clone()
                };
                Term::Name {
                    pattern: Pattern::compile(&text)?,
                    fold_case,
                }
            }
            "-print" => Term::Print { terminator: b'\n' },
            "-print0" => Term::Print { terminator: 0 },
            "-a" | "-and" => continue,
            other => return Err(format!("Unexpected argument: {other}")),
        };
        terms.push(term);
    }
    if !terms.iter().any(|t| matches!(t, Term::Print { .. })) {
        terms.push(Term::Print { terminator: b'\n' });
    }
    Ok(terms)
}

/// Applies the terms in order, stopping at the first that fails (as `-and` does).
fn apply(terms: &[Term], shown: &str, out: &mut impl Write) -> bool {
    let name = shown
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(shown);
    for term in terms {
        match term {
            Term::Name { pattern, fold_case } => {
                let name = if *fold_case {
                    name.to_lowercase()
                } else {
                    name.to_string()
                };
                if !pattern.matches(&name) {
                    return true;
                }
            }
            Term::Print { terminator } => {
                if out.write_all(shown.as_bytes()).is_err()
                    || out.write_all(&[*terminator]).is_err()
                {
                    return false;
                }
            }
        }
    }
    true
}

impl Shell {
    pub(super) async fn find(&mut self, args: &[String]) -> Result<(), String> {
        let split = args
            .iter()
            .position(|a| a.len() > 1 && a.starts_with('-'))
            .unwrap_or(args.len());
        let (paths, expression) = args.split_at(split);
        let terms = parse(expression)?;
        let paths: Vec<String> = if paths.is_empty() {
            vec![".".into()]
        } else {
            paths.to_vec()
        };
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        for p in &paths {
            let path = self.resolve(p);
            let status = match self.client.stat(&path).await {
                Ok(s) => s,
                Err(e) => {
                    self.report("find", p, e);
                    continue;
                }
            };
            // (path, shown, status), depth first.
            let mut stack: Vec<(String, String, FileStatus)> = vec![(path, p.clone(), status)];
            while let Some((path, shown, status)) = stack.pop() {
                if !apply(&terms, &shown, &mut out) {
                    return Ok(());
                }
                if !status.is_dir {
                    continue;
                }
                let children = match self.client.list(&path).await {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = out.flush();
                        self.report("find", &shown, e);
                        continue;
                    }
                };
                for child in children.into_iter().rev() {
                    let join =
                        |base: &str| format!("{}/{}", base.trim_end_matches('/'), child.path);
                    stack.push((join(&path), join(&shown), child));
                }
            }
        }
        let _ = out.flush();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs_shell::tests::words;

    #[test]
    fn expressions_select_and_print() {
        let terms = parse(&words(&["-iname", "*.TXT"])).unwrap();
        let mut out = Vec::new();
        apply(&terms, "/a/Notes.txt", &mut out);
        apply(&terms, "/a/data.bin", &mut out);
        assert_eq!(out, b"/a/Notes.txt\n");
        let terms = parse(&words(&["-name", "x*", "-print0"])).unwrap();
        let mut out = Vec::new();
        apply(&terms, "/x1", &mut out);
        assert_eq!(out, b"/x1\0");
        assert!(parse(&words(&["-bogus"])).is_err());
    }
}

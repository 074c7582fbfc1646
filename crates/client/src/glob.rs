//! Operands as Hadoop's FsShell reads them: URIs naming a cluster, paths normalised as
//! Hadoop's `Path` does (`.` and `..` resolved client side), and glob patterns
//! (`*`, `?`, `[ab]`, `[^a]`, `[!a]`, `{a,b}`, `\` escapes) expanded against the cluster
//! the way Hadoop's `Globber` does: literal components are looked up directly, pattern
//! components match a listing of their parent, and a pattern matching nothing yields no
//! path (the shell then says "No such file or directory" for that argument; a job's
//! input then says "matches 0 files").

use crate::{ClientError, DfsClient, FileStatus};

/// An operand split into the cluster it names and its path.
#[derive(Debug, PartialEq, Eq)]
pub struct Operand<'a> {
    /// `host:port` of an `hdfs://host:port/...` URI; `None` for the default cluster.
    pub authority: Option<String>,
    /// The path part as written (may be relative, may hold glob characters).
    pub path: &'a str,
    /// What to print before an absolute path so it reads as written (`hdfs://h:p`).
    pub prefix: &'a str,
}

/// Splits `hdfs://host[:port]/path`, `hdfs:///path`, `/path` and relative paths; other
/// schemes are refused as Hadoop refuses a scheme with no FileSystem.
pub fn split_uri(operand: &str) -> Result<Operand<'_>, String> {
    let Some(colon) = operand.find("://") else {
        return Ok(Operand {
            authority: None,
            path: operand,
            prefix: "",
        });
    };
    let scheme = &operand[..colon];
    if !scheme.eq_ignore_ascii_case("hdfs") {
        return Err(format!("No FileSystem for scheme \"{scheme}\""));
    }
    let rest = &operand[colon + 3..];
    let slash = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..slash];
    let path = if slash == rest.len() {
        "/"
    } else {
        &rest[slash..]
    };
    let prefix = &operand[..colon + 3 + slash];
    Ok(Operand {
        authority: (!authority.is_empty()).then(|| {
            if authority.contains(':') {
                authority.to_string()
            } else {
                format!("{authority}:8020")
            }
        }),
        path,
        prefix,
    })
}

/// Resolves `.` and `..` and collapses repeated slashes, as Hadoop's `Path` does
/// (`URI.normalize`); `..` above the root stays, for the NameNode to refuse.
pub fn normalize(absolute: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in absolute.split('/') {
        match c {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether `s` holds an unescaped glob character.
pub fn has_glob(s: &str) -> bool {
    let mut escaped = false;
    for c in s.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

/// `\X` → `X`, for literal components.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Expands every `{...}` group that contains a `/` into separate patterns (Hadoop's
/// `GlobExpander`); groups within one component are left to [`Pattern`].
pub fn flatten_slash_groups(pattern: &str) -> Vec<String> {
    let bytes: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut escaped = false;
    while i < bytes.len() {
        let c = bytes[i];
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '{' {
            if let Some((end, alternatives)) = group_at(&bytes, i) {
                if alternatives.iter().any(|a| a.contains('/')) {
                    let head: String = bytes[..i].iter().collect();
                    let tail: String = bytes[end + 1..].iter().collect();
                    return alternatives
                        .iter()
                        .flat_map(|a| flatten_slash_groups(&format!("{head}{a}{tail}")))
                        .collect();
                }
                i = end;
            }
        }
        i += 1;
    }
    vec![pattern.to_string()]
}

/// The `{...}` group opening at `start`: its closing index and top-level alternatives.
fn group_at(chars: &[char], start: usize) -> Option<(usize, Vec<String>)> {
    let mut depth = 0;
    let mut escaped = false;
    let mut alternatives = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate().skip(start) {
        if escaped {
            escaped = false;
            current.push(c);
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                current.push(c);
            }
            '{' => {
                if depth > 0 {
                    current.push(c);
                }
                depth += 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    alternatives.push(current);
                    return Some((i, alternatives));
                }
                current.push(c);
            }
            ',' if depth == 1 => alternatives.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    None
}

/// One path component's pattern.
#[derive(Debug, Clone)]
enum Token {
    Char(char),
    Any,
    Star,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Alternatives(Vec<Vec<Token>>),
}

/// A compiled glob for one path component.
#[derive(Debug, Clone)]
pub struct Pattern(Vec<Token>);

impl Pattern {
    /// Compiles a component; an unclosed `[` or `{` is an error, as in Hadoop's
    /// `GlobPattern` ("Unclosed character class", "Unclosed group").
    pub fn compile(component: &str) -> Result<Pattern, String> {
        let chars: Vec<char> = component.chars().collect();
        let (tokens, end) = parse(&chars, 0, false)?;
        debug_assert_eq!(end, chars.len());
        Ok(Pattern(tokens))
    }

    pub fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        match_tokens(&self.0, &name)
    }
}

/// Parses tokens until the end, or (inside a group) until `,` or `}`.
fn parse(chars: &[char], mut i: usize, in_group: bool) -> Result<(Vec<Token>, usize), String> {
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                i += 1;
                let escaped = *chars.get(i).ok_or("Illegal file pattern: trailing \\")?;
                out.push(Token::Char(escaped));
            }
            '*' => out.push(Token::Star),
            '?' => out.push(Token::Any),
            '[' => {
                let (token, end) = parse_class(chars, i)?;
                out.push(token);
                i = end;
            }
            '{' => {
                let mut alternatives = Vec::new();
                let mut j = i + 1;
                loop {
                    let (alt, end) = parse(chars, j, true)?;
                    alternatives.push(alt);
                    match chars.get(end) {
                        Some(',') => j = end + 1,
                        Some('}') => {
                            i = end;
                            break;
                        }
                        _ => {
                            return Err(format!(
                                "Illegal file pattern: Unclosed group near index {}",
                                chars.len()
                            ))
                        }
                    }
                }
                out.push(Token::Alternatives(alternatives));
            }
            ',' | '}' if in_group => return Ok((out, i)),
            other => out.push(Token::Char(other)),
        }
        i += 1;
    }
    Ok((out, i))
}

/// `[abc]`, `[a-z]`, `[^a]`, `[!a]` starting at `start`; returns the index of `]`.
fn parse_class(chars: &[char], start: usize) -> Result<(Token, usize), String> {
    let mut i = start + 1;
    let negated = matches!(chars.get(i), Some('^') | Some('!'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    while i < chars.len() {
        let mut c = chars[i];
        if c == ']' && !first {
            return Ok((Token::Class { negated, ranges }, i));
        }
        first = false;
        if c == '\\' {
            i += 1;
            c = *chars.get(i).ok_or("Illegal file pattern: trailing \\")?;
        }
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|e| *e != ']') {
            let hi = chars[i + 2];
            if hi < c {
                return Err(format!(
                    "Illegal file pattern: Illegal character range near index {}",
                    i + 2
                ));
            }
            ranges.push((c, hi));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    Err(format!(
        "Illegal file pattern: Unclosed character class near index {}",
        chars.len()
    ))
}

fn match_tokens(tokens: &[Token], name: &[char]) -> bool {
    let Some((first, rest)) = tokens.split_first() else {
        return name.is_empty();
    };
    match first {
        Token::Char(c) => name.first() == Some(c) && match_tokens(rest, &name[1..]),
        Token::Any => !name.is_empty() && match_tokens(rest, &name[1..]),
        Token::Class { negated, ranges } => match name.first() {
            Some(c) => {
                let inside = ranges.iter().any(|(lo, hi)| lo <= c && c <= hi);
                inside != *negated && match_tokens(rest, &name[1..])
            }
            None => false,
        },
        Token::Star => (0..=name.len()).any(|skip| match_tokens(rest, &name[skip..])),
        Token::Alternatives(alts) => alts.iter().any(|alt| {
            let mut joined = alt.clone();
            joined.extend_from_slice(rest);
            match_tokens(&joined, name)
        }),
    }
}

/// Every existing path matching the absolute pattern `pattern`, with its status, in
/// Hadoop's order (one flattened pattern after another, each in listing order).
pub async fn expand(
    client: &DfsClient,
    pattern: &str,
) -> Result<Vec<(String, FileStatus)>, GlobError> {
    let mut results = Vec::new();
    for flat in flatten_slash_groups(pattern) {
        let components: Vec<&str> = flat.split('/').filter(|c| !c.is_empty()).collect();
        // (path, known to be a directory): the root always is.
        let mut candidates: Vec<(String, Option<FileStatus>)> = vec![("/".to_string(), None)];
        for component in components {
            let mut next = Vec::new();
            let wild = has_glob(component);
            let pattern = if wild {
                Some(Pattern::compile(component).map_err(GlobError::Pattern)?)
            } else {
                None
            };
            for (path, status) in candidates {
                if status.as_ref().is_some_and(|s| !s.is_dir) {
                    continue;
                }
                match &pattern {
                    Some(p) => {
                        let children = match client.list(&path).await {
                            Ok(c) => c,
                            Err(e) if e.is_not_found() => continue,
                            Err(e) => return Err(GlobError::Client(e)),
                        };
                        for child in children {
                            if p.matches(&child.path) {
                                next.push((join(&path, &child.path), Some(child)));
                            }
                        }
                    }
                    None => {
                        let full = join(&path, &unescape(component));
                        match client.get_file_info(&full).await {
                            Ok(Some(s)) => next.push((full, Some(s))),
                            Ok(None) => {}
                            Err(e) if e.is_not_found() => {}
                            Err(e) => return Err(GlobError::Client(e)),
                        }
                    }
                }
            }
            candidates = next;
            if candidates.is_empty() {
                break;
            }
        }
        for (path, status) in candidates {
            let status = match status {
                Some(s) => s,
                None => match client.get_file_info(&path).await {
                    Ok(Some(s)) => s,
                    Ok(None) => continue,
                    Err(e) => return Err(GlobError::Client(e)),
                },
            };
            results.push((path, status));
        }
    }
    Ok(results)
}

/// Why a glob could not be expanded.
#[derive(Debug, thiserror::Error)]
pub enum GlobError {
    /// A malformed pattern (Hadoop: "Illegal file pattern: ...").
    #[error("{0}")]
    Pattern(String),
    #[error(transparent)]
    Client(ClientError),
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        Pattern::compile(p).unwrap().matches(s)
    }

    #[test]
    fn components_match_like_hadoops_glob_pattern() {
        assert!(m("part-*", "part-00000"));
        assert!(!m("part-*", "_SUCCESS"));
        assert!(m("*", ".hidden"));
        assert!(m("a?c", "abc") && !m("a?c", "ac"));
        assert!(m("[ab]x", "bx") && !m("[ab]x", "cx"));
        assert!(m("[^a]x", "bx") && !m("[^a]x", "ax"));
        assert!(m("[!a]x", "bx") && !m("[!a]x", "ax"));
        assert!(m("[a-c]", "b") && !m("[a-c]", "d"));
        assert!(m("{foo,ba*}.txt", "bar.txt") && m("{foo,ba*}.txt", "foo.txt"));
        assert!(!m("{foo,ba*}.txt", "qux.txt"));
        assert!(m("x{a,{b,c}}", "xc"));
        assert!(m("\\*", "*") && !m("\\*", "a"));
        assert!(Pattern::compile("[ab").is_err());
        assert!(Pattern::compile("{a,b").is_err());
    }

    #[test]
    fn glob_characters_and_escapes() {
        assert!(has_glob("/out/part-*"));
        assert!(has_glob("/a/{b,c}"));
        assert!(!has_glob("/a/b\\*"));
        assert!(!has_glob("/plain/path"));
        assert_eq!(unescape("b\\*c"), "b*c");
    }

    #[test]
    fn groups_with_slashes_flatten() {
        assert_eq!(flatten_slash_groups("/{a/b,c}/d"), vec!["/a/b/d", "/c/d"]);
        assert_eq!(flatten_slash_groups("/x/{a,b}"), vec!["/x/{a,b}"]);
    }

    #[test]
    fn paths_normalise_as_hadoops_path() {
        assert_eq!(normalize("/a/b/../c"), "/a/c");
        assert_eq!(normalize("/a/./b//c/"), "/a/b/c");
        assert_eq!(normalize("/user/u/.."), "/user");
        assert_eq!(normalize("/.."), "/..");
        assert_eq!(normalize("/"), "/");
    }

    #[test]
    fn uris_name_their_cluster() {
        let o = split_uri("hdfs://otherhost:9999/data").unwrap();
        assert_eq!(o.authority.as_deref(), Some("otherhost:9999"));
        assert_eq!(o.path, "/data");
        assert_eq!(o.prefix, "hdfs://otherhost:9999");
        let o = split_uri("hdfs://nn").unwrap();
        assert_eq!(o.authority.as_deref(), Some("nn:8020"));
        assert_eq!(o.path, "/");
        let o = split_uri("hdfs:///x").unwrap();
        assert_eq!(o.authority, None);
        assert_eq!(o.path, "/x");
        assert_eq!(split_uri("rel/x").unwrap().path, "rel/x");
        assert!(split_uri("s3a://bucket/x").is_err());
    }
}

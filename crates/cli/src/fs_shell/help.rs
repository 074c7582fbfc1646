//! `-help [verb ...]`, `-usage [verb ...]` and `tusk fs --help`, rendered from the verb
//! table in `fs_shell.rs` the way Hadoop's FsShell prints them.

use super::VERBS;

const GENERIC: &str = "Generic options supported are:
-fs <hdfs://host:port>     specify the NameNode to use (default: fs.defaultFS, else the last `tusk local up`)
-D <property=value>        define a value for a given property
-conf <file or dir>        TOML or Hadoop *-site.xml configuration (before `fs`:
                           `tusk --conf PATH fs ...`; default: $HADOOP_CONF_DIR)";

fn find(name: &str) -> Option<&'static (&'static str, &'static str, &'static str)> {
    let name = name.trim_start_matches('-');
    VERBS.iter().find(|(v, _, _)| &v[1..] == name)
}

/// `Usage: tusk fs [generic options]` and one `[-verb operands]` line per verb.
pub fn usage_all() -> String {
    let mut out = String::from("Usage: tusk fs [generic options]\n");
    for (verb, usage, _) in VERBS {
        out.push_str(&format!("\t[{verb} {usage}]\n"));
    }
    out.push('\n');
    out.push_str(GENERIC);
    out
}

/// The usage lines, then each verb's description: what `-help` and `--help` print.
pub fn help_all() -> String {
    let mut out = usage_all();
    out.push_str("\n\n");
    for entry in VERBS {
        out.push_str(&describe(entry));
    }
    out
}

fn describe((verb, usage, text): &(&str, &str, &str)) -> String {
    let mut out = format!("{verb} {usage} :\n");
    for paragraph in text.split('\n') {
        for line in wrap(paragraph, 76) {
            out.push_str("  ");
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push('\n');
    out
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// `-help [verb ...]`.
pub fn help(verbs: &[String]) -> Result<(), String> {
    if verbs.is_empty() {
        println!("{}", help_all());
        return Ok(());
    }
    for v in verbs {
        let entry = find(v).ok_or_else(|| format!("`{v}': Unknown command"))?;
        print!("{}", describe(entry));
    }
    Ok(())
}

/// `Usage: tusk fs [generic options] -verb operands`, printed after a usage error.
pub fn usage_of(verb: &str) -> String {
    match find(verb) {
        Some((verb, usage, _)) => format!("Usage: tusk fs [generic options] {verb} {usage}"),
        None => String::new(),
    }
}

/// `-usage [verb ...]`.
pub fn usage(verbs: &[String]) -> Result<(), String> {
    if verbs.is_empty() {
        println!("{}", usage_all());
        return Ok(());
    }
    for v in verbs {
        find(v).ok_or_else(|| format!("`{v}': Unknown command"))?;
        println!("{}", usage_of(v));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verb_is_listed_and_described() {
        let all = help_all();
        for (verb, _, _) in VERBS {
            assert!(all.contains(&format!("\t[{verb} ")), "{verb} in usage");
            assert!(all.contains(&format!("\n{verb} ")), "{verb} described");
        }
        assert!(find("ls").is_some() && find("-ls").is_some() && find("nope").is_none());
        assert_eq!(wrap("a b c", 3), vec!["a b", "c"]);
    }
}

//! `-help [cmd]`: Hadoop 3.4's DFSAdmin help, word for word (`help.txt` is its
//! output); one verb's paragraph with `-help VERB`, everything without.

const HELP: &str = include_str!("help.txt");

/// Prints the help for the verb named in `args` (`report`), or all of it.
pub fn run(args: &[String]) -> i32 {
    // Hadoop looks the verb up without its dash: `-help -report` prints everything.
    match args.first().and_then(|v| paragraph(v)) {
        Some(text) => print!("{text}"),
        None => print!("{HELP}"),
    }
    0
}

/// `Usage: tusk dfsadmin [<verb's line of the summary>]`, what DFSAdmin prints when a
/// verb's arguments are wrong.
pub fn usage_of(verb: &str) -> String {
    let line = HELP
        .lines()
        .filter_map(|l| l.strip_prefix("\t["))
        .find(|l| l.split_whitespace().next().map(|w| w.trim_end_matches(']')) == Some(verb))
        .map_or(verb.to_string(), |l| l[..l.len() - 1].to_string());
    format!("Usage: tusk dfsadmin [{line}]")
}

/// The paragraph of `verb`: from its line starting `-verb` to the next such line,
/// within the part after the usage summary and before the generic options.
fn paragraph(verb: &str) -> Option<&'static str> {
    if verb.starts_with('-') {
        return None;
    }
    let body_start = HELP.find("\n\n-")? + 2;
    let body_end = HELP.find("\n\nGeneric options supported are:")? + 1;
    let body = &HELP[body_start..body_end];
    let mut starts: Vec<usize> = vec![0];
    starts.extend(body.match_indices("\n-").map(|(i, _)| i + 1));
    starts.push(body.len());
    starts.windows(2).map(|w| &body[w[0]..w[1]]).find(|p| {
        let name = &p[1..];
        let end = name
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(name.len());
        &name[..end] == verb
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_verb_gives_its_paragraph_as_hadoop_prints_it() {
        assert_eq!(
            paragraph("printTopology"),
            Some("-printTopology: Print a tree of the racks and their\n\t\tnodes as reported by the Namenode\n\n")
        );
        assert!(paragraph("rollingUpgrade")
            .unwrap()
            .ends_with("  finalize: finalize the current rolling upgrade.\n"));
        assert!(paragraph("help").unwrap().ends_with("is specified.\n\n"));
        assert_eq!(paragraph("nosuch"), None);
        assert_eq!(paragraph("-report"), None);
        assert_eq!(
            usage_of("-metasave"),
            "Usage: tusk dfsadmin [-metasave filename]"
        );
        assert_eq!(
            usage_of("-finalizeUpgrade"),
            "Usage: tusk dfsadmin [-finalizeUpgrade]"
        );
    }
}

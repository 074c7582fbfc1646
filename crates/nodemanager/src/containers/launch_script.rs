//! `launch_container.sh`, the bash script a Hadoop-style container starts with, in the
//! order Hadoop's `ContainerLaunch` writes it: stop at the first failing command, send
//! the script's own output to `prelaunch.out`/`prelaunch.err` in the log dir, export the
//! whitelisted variables the container does not set (`X=${X:-"<NM's value>"}`), the
//! NodeManager's variables, then the container's own (a variable after those it
//! refers to), link each localized resource under its name, copy the script and a
//! listing of the work dir to the log dir, and `exec` the command.
//!
//! Placeholders in commands and variable values: `{{X}}` → `$X`, `<CPS>` → `:`,
//! `<LOG_DIR>` → the container's log dir, `<ADD_OPENS>` → the options Java 17 and later
//! need to run Hadoop's code (nothing for an older or unknown Java).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The script's file name in the work dir (and its copy in the log dir).
pub(crate) const SCRIPT: &str = "launch_container.sh";
/// The listing of the work dir the script writes to the log dir.
const DIRECTORY_INFO: &str = "directory.info";
pub(crate) const PRELAUNCH_OUT: &str = "prelaunch.out";
pub(crate) const PRELAUNCH_ERR: &str = "prelaunch.err";

/// Everything the script is made of.
pub(crate) struct LaunchScript<'a> {
    /// `(name, NodeManager's value)` of whitelisted variables the container leaves unset.
    pub whitelisted: &'a [(String, String)],
    /// The variables the NodeManager sets, in order.
    pub node_env: &'a [(String, String)],
    /// The container's own variables, values not yet expanded.
    pub container_env: &'a [(String, String)],
    /// `(local path, link name)` of each localized resource.
    pub links: &'a [(PathBuf, String)],
    /// The launch context's commands, joined with spaces, not yet expanded.
    pub command: &'a str,
    pub log_dir: &'a Path,
}

/// What `<ADD_OPENS>` becomes on Java 17 and later (Hadoop's `ContainerLaunch`).
const JDK17_OPTIONS: &str = "--add-opens=java.base/java.lang=ALL-UNNAMED \
    --add-exports=java.base/sun.net.dns=ALL-UNNAMED --add-exports=java.base/sun.net.util=ALL-UNNAMED";

/// `<ADD_OPENS>`'s value for the Java containers run: Hadoop's NodeManager asks its own
/// JVM; Tusk's reads the `release` file of the `JAVA_HOME` it passes on.
fn add_opens() -> &'static str {
    static OPTIONS: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    OPTIONS.get_or_init(|| {
        let release = std::env::var_os("JAVA_HOME")
            .and_then(|home| std::fs::read_to_string(Path::new(&home).join("release")).ok());
        match release.as_deref().and_then(java_major) {
            Some(major) if major >= 17 => JDK17_OPTIONS,
            _ => "",
        }
    })
}

/// The major version in a JDK's `release` file (`JAVA_VERSION="17.0.15"`; `"1.8.0_…"` is 8).
fn java_major(release: &str) -> Option<u32> {
    let version = release
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION="))?
        .trim_matches('"');
    let mut parts = version.split(['.', '_', '-', '+']);
    match parts.next()?.parse().ok()? {
        1 => parts.next()?.parse().ok(),
        major => Some(major),
    }
}

/// Replaces YARN's placeholders: `{{X}}` → `$X`, `<CPS>` → `:`, `<LOG_DIR>` → `log_dir`,
/// `<ADD_OPENS>` → Java 17's options when the containers' Java needs them.
pub(crate) fn expand(value: &str, log_dir: &Path) -> String {
    value
        .replace("<LOG_DIR>", &log_dir.display().to_string())
        .replace("<CPS>", ":")
        .replace("<ADD_OPENS>", add_opens())
        .replace("{{", "$")
        .replace("}}", "")
}

impl LaunchScript<'_> {
    pub fn render(&self) -> String {
        let log = |name: &str| self.log_dir.join(name).display().to_string();
        let mut s = String::new();
        let mut line = |text: String| {
            s.push_str(&text);
            s.push('\n');
        };
        line("#!/bin/bash".into());
        line(String::new());
        line("set -o pipefail -e".into());
        line(format!("export PRELAUNCH_OUT=\"{}\"", log(PRELAUNCH_OUT)));
        line("exec >\"${PRELAUNCH_OUT}\"".into());
        line(format!("export PRELAUNCH_ERR=\"{}\"", log(PRELAUNCH_ERR)));
        line("exec 2>\"${PRELAUNCH_ERR}\"".into());
        line("echo \"Setting up env variables\"".into());
        line("echo \"Setting up env variables#whitelisted\"".into());
        for (name, value) in self.whitelisted {
            line(format!("export {name}=${{{name}:-\"{value}\"}}"));
        }
        line("echo \"Setting up env variables#env\"".into());
        for (name, value) in self.node_env {
            line(format!("export {name}=\"{value}\""));
        }
        let node_names: HashSet<&str> = self.node_env.iter().map(|(n, _)| n.as_str()).collect();
        let own: Vec<(String, String)> = self
            .container_env
            .iter()
            .filter(|(n, _)| !node_names.contains(n.as_str()))
            .map(|(n, v)| (n.clone(), expand(v, self.log_dir)))
            .collect();
        for (name, value) in order_by_dependencies(&own) {
            line(format!("export {name}=\"{value}\""));
        }
        line("echo \"Setting up job resources\"".into());
        for (target, name) in self.links {
            if let Some(parent) = Path::new(name)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
            {
                line(format!("mkdir -p {}", parent.display()));
            }
            line(format!("ln -sf -- \"{}\" \"{name}\"", target.display()));
        }
        line("echo \"Copying debugging information\"".into());
        line("# Creating copy of launch script".into());
        line(format!("cp \"{SCRIPT}\" \"{}\"", log(SCRIPT)));
        line(format!("chmod 640 \"{}\"", log(SCRIPT)));
        line("# Determining directory contents".into());
        let info = log(DIRECTORY_INFO);
        line(format!("echo \"ls -l:\" 1>\"{info}\""));
        line(format!("ls -l 1>>\"{info}\""));
        line(format!("echo \"find -L . -maxdepth 5 -ls:\" 1>>\"{info}\""));
        line(format!("find -L . -maxdepth 5 -ls 1>>\"{info}\""));
        line(format!(
            "echo \"broken symlinks(find -L . -maxdepth 5 -type l -ls):\" 1>>\"{info}\""
        ));
        line(format!("find -L . -maxdepth 5 -type l -ls 1>>\"{info}\""));
        line("echo \"Launching container\"".into());
        line(format!(
            "exec /bin/bash -c \"{}\"",
            expand(self.command, self.log_dir)
        ));
        s
    }
}

/// The variables in an order where each comes after the others of `env` its value
/// refers to (`$X`, `${X}`); a cycle keeps the given order.
fn order_by_dependencies(env: &[(String, String)]) -> Vec<(String, String)> {
    let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
    let depends = |value: &str, name: &str| {
        value.contains(&format!("${{{name}}}"))
            || value.match_indices(&format!("${name}")).any(|(i, m)| {
                let next = value[i + m.len()..].chars().next();
                !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            })
    };
    let mut placed = vec![false; env.len()];
    let mut visiting = vec![false; env.len()];
    let mut out = Vec::with_capacity(env.len());
    fn visit(
        i: usize,
        env: &[(String, String)],
        names: &[&str],
        depends: &dyn Fn(&str, &str) -> bool,
        placed: &mut [bool],
        visiting: &mut [bool],
        out: &mut Vec<(String, String)>,
    ) {
        if placed[i] || visiting[i] {
            return;
        }
        visiting[i] = true;
        for (j, name) in names.iter().enumerate() {
            if j != i && depends(&env[i].1, name) {
                visit(j, env, names, depends, placed, visiting, out);
            }
        }
        visiting[i] = false;
        placed[i] = true;
        out.push(env[i].clone());
    }
    for i in 0..env.len() {
        visit(
            i,
            env,
            &names,
            &depends,
            &mut placed,
            &mut visiting,
            &mut out,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn placeholders_expand_as_on_linux() {
        let log = Path::new("/logs/app/c1");
        assert_eq!(
            expand(
                "{{JAVA_HOME}}/bin/java -Dlog=<LOG_DIR> 1><LOG_DIR>/stdout",
                log
            ),
            "$JAVA_HOME/bin/java -Dlog=/logs/app/c1 1>/logs/app/c1/stdout"
        );
        assert_eq!(expand("{{PWD}}<CPS>{{PWD}}/*", log), "$PWD:$PWD/*");
        assert_eq!(
            java_major("IMPLEMENTOR=x\nJAVA_VERSION=\"17.0.15\"\n"),
            Some(17)
        );
        assert_eq!(java_major("JAVA_VERSION=\"1.8.0_402\""), Some(8));
        assert_eq!(java_major("JAVA_VERSION=\"21\""), Some(21));
        assert_eq!(java_major("OS_NAME=Linux"), None);
    }

    #[test]
    fn a_variable_comes_after_those_it_uses() {
        let env = pairs(&[("B", "$A:x"), ("A", "${C}/a"), ("C", "c"), ("AB", "$ABC")]);
        let names: Vec<String> = order_by_dependencies(&env)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["C", "A", "B", "AB"]);
    }

    #[test]
    fn the_script_links_resources_and_execs_the_command() {
        let log = Path::new("/logs/app/c1");
        let script = LaunchScript {
            whitelisted: &pairs(&[("JAVA_HOME", "/jdk")]),
            node_env: &pairs(&[("CONTAINER_ID", "c1")]),
            container_env: &pairs(&[("CLASSPATH", "{{PWD}}<CPS>{{PWD}}/job.jar")]),
            links: &[(PathBuf::from("/cache/10/job.jar"), "jobs/job.jar".into())],
            command: "echo hi 1><LOG_DIR>/stdout",
            log_dir: log,
        }
        .render();
        assert!(script.starts_with("#!/bin/bash\n\nset -o pipefail -e\n"));
        assert!(script.contains("export JAVA_HOME=${JAVA_HOME:-\"/jdk\"}\n"));
        assert!(script.contains("export CONTAINER_ID=\"c1\"\n"));
        assert!(script.contains("export CLASSPATH=\"$PWD:$PWD/job.jar\"\n"));
        assert!(
            script.contains("mkdir -p jobs\nln -sf -- \"/cache/10/job.jar\" \"jobs/job.jar\"\n")
        );
        assert!(script.ends_with("exec /bin/bash -c \"echo hi 1>/logs/app/c1/stdout\"\n"));
    }
}

//! Configuration keyed by Hadoop's property names.
//!
//! Resources are Tusk's TOML files or Hadoop's `*-site.xml` files as they are (`xml`), a
//! file or a directory of them (`core-site.xml`, `hdfs-site.xml`, `yarn-site.xml`,
//! `mapred-site.xml`, then `tusk.toml`, in that order). A TOML file may write keys flat
//! (`"dfs.replication" = 3`) or nested (`[dfs] replication = 3`); both flatten to the
//! dotted name. As in Hadoop's `Configuration`: a later resource overrides an earlier one
//! unless the earlier marked the key `<final>`; `-D key=value` overrides win over every
//! resource, final or not (Hadoop's `set()` ignores finality); values expand `${key}`,
//! `${env.NAME}` (also `${env.NAME:-default}`, `${env.NAME-default}`) and Java system
//! properties (`${user.name}`, `${user.home}`, `${java.io.tmpdir}`, ...), at most
//! [`MAX_SUBST`] levels deep; deprecated names (`fs.default.name`) set their current
//! name. Each value remembers its source (file:line, `-D`, set by a program), and each
//! typed getter remembers the default it answered with, for `tusk conf show`. Keys no
//! component reads (`keys`) can be listed to warn about. Each daemon turns the map into
//! its own `XxxOptions` struct once at start-up and passes that down; nothing reads
//! configuration globally.

pub mod ha;
mod keys;
mod xml;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::ConfigError;

pub use keys::is_known;
pub use xml::{site_xml, CLIENT_LOG4J_PROPERTIES};

/// How many `${...}` expansions one value may go through (Hadoop's `MAX_SUBST`).
pub const MAX_SUBST: usize = 20;

/// The Hadoop site files a configuration directory is read from, in Hadoop's order.
pub const SITE_FILES: &[&str] = &[
    "core-site.xml",
    "hdfs-site.xml",
    "yarn-site.xml",
    "mapred-site.xml",
];

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A resource file; the line where XML states the property (TOML: none).
    File { path: PathBuf, line: Option<u32> },
    /// A `-D key=value` option.
    Define,
    /// Set by a program (`-fs URI`, a daemon's own choice).
    Set,
    /// Unset, but Hadoop's default builds it from a key that is set (see [`DERIVED`]).
    Derived { template: &'static str },
}

/// Keys whose Hadoop default is built from another key (`yarn-default.xml`'s
/// `${yarn.resourcemanager.hostname}:8032`, `hdfs-default.xml`'s
/// `file://${hadoop.tmp.dir}/dfs/name`). While such a key is unset and every key its
/// template names is set, it takes the template's value, as in Hadoop, so a
/// `yarn-site.xml` that names only the ResourceManager's host reaches it. With the named
/// keys unset too, each component keeps its own default. (Tusk's ResourceManager serves
/// NodeManagers, AMs and admin calls on its one RPC address, so the scheduler,
/// resource-tracker and admin addresses are not derived: unset, they are that address.)
pub const DERIVED: &[(&str, &str)] = &[
    (
        "yarn.resourcemanager.address",
        "${yarn.resourcemanager.hostname}:8032",
    ),
    (
        "yarn.resourcemanager.webapp.address",
        "${yarn.resourcemanager.hostname}:8088",
    ),
    ("yarn.nodemanager.address", "${yarn.nodemanager.hostname}:0"),
    (
        "yarn.nodemanager.webapp.address",
        "${yarn.nodemanager.hostname}:8042",
    ),
    ("dfs.namenode.name.dir", "file://${hadoop.tmp.dir}/dfs/name"),
    ("dfs.datanode.data.dir", "file://${hadoop.tmp.dir}/dfs/data"),
    (
        "yarn.nodemanager.local-dirs",
        "${hadoop.tmp.dir}/nm-local-dir",
    ),
    (
        "yarn.resourcemanager.fs.state-store.uri",
        "${hadoop.tmp.dir}/yarn/system/rmstore",
    ),
];

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::File {
                path,
                line: Some(line),
            } => write!(f, "{}:{line}", path.display()),
            Source::File { path, line: None } => write!(f, "{}", path.display()),
            Source::Define => f.write_str("-D"),
            Source::Set => f.write_str("set by the program"),
            Source::Derived { template } => write!(f, "Hadoop's default {template}"),
        }
    }
}

/// A flat map from Hadoop property names to their string values.
#[derive(Clone, Debug, Default)]
pub struct Configuration {
    /// Every key set by a resource or an override, as written (before `${}` expansion);
    /// absent keys take each getter's default.
    values: BTreeMap<String, String>,
    /// The expanded value of each key whose raw value holds `${`.
    expanded: BTreeMap<String, String>,
    sources: BTreeMap<String, Source>,
    /// Keys a resource marked `<final>`: later resources cannot change them.
    finals: BTreeSet<String>,
    /// Unset keys [`DERIVED`] gives a value, expanded, with the template.
    derived: BTreeMap<String, (String, Source)>,
    /// The resources read, in order (a directory as given), for a process started with
    /// the same configuration.
    resources: Vec<PathBuf>,
    /// The default each typed getter answered an absent key with (shared by clones).
    defaults: Arc<Mutex<BTreeMap<String, String>>>,
    /// Each value a typed getter could not parse, with the type it wanted (shared by
    /// clones), so that `tusk conf show` fails on what a daemon would fail on.
    bad_values: Arc<Mutex<BTreeMap<String, (String, &'static str)>>>,
}

impl PartialEq for Configuration {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl Eq for Configuration {}

impl Configuration {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads one resource: a TOML or Hadoop XML file (told apart by its content), or a
    /// directory of site files.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        Self::from_resources(&[path.to_path_buf()])
    }

    /// Reads resources in order, each overriding the ones before (finals excepted).
    pub fn from_resources(paths: &[PathBuf]) -> Result<Self, ConfigError> {
        let mut conf = Configuration::new();
        for path in paths {
            conf.add_resource(path)?;
            conf.resources.push(path.clone());
        }
        conf.refresh()?;
        Ok(conf)
    }

    /// The resources read by [`Configuration::from_resources`], in order.
    pub fn resources(&self) -> &[PathBuf] {
        &self.resources
    }

    /// Adds a resource on top of what is loaded (`-D` values stay); call
    /// [`Configuration::refresh_expansions`] after the last one.
    pub fn add_resource(&mut self, path: &Path) -> Result<(), ConfigError> {
        if path.is_dir() {
            let mut any = false;
            for name in SITE_FILES.iter().chain(&["tusk.toml"]) {
                let file = path.join(name);
                if file.is_file() {
                    self.add_resource(&file)?;
                    any = true;
                }
            }
            if !any {
                return Err(ConfigError::Parse {
                    path: path.display().to_string(),
                    message: format!(
                        "a configuration directory holds none of {} or tusk.toml",
                        SITE_FILES.join(", ")
                    ),
                });
            }
            return Ok(());
        }
        let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Read {
            path: path.display().to_string(),
            cause,
        })?;
        if is_xml(path, &text) {
            for p in xml::read(path)? {
                let source = Source::File {
                    path: p.file.clone(),
                    line: Some(p.line),
                };
                self.load_property(&p.name, p.value, p.is_final, source);
            }
        } else {
            let parsed = Self::from_toml(&text).map_err(|message| ConfigError::Parse {
                path: path.display().to_string(),
                message,
            })?;
            for (key, value) in parsed.values {
                let source = Source::File {
                    path: path.to_path_buf(),
                    line: None,
                };
                self.load_property(&key, Some(value), false, source);
            }
        }
        Ok(())
    }

    /// One property of a resource, as Hadoop's `loadProperty`: a final key keeps its
    /// value (the attempt is logged), a deprecated name sets its current name.
    fn load_property(&mut self, name: &str, value: Option<String>, is_final: bool, source: Source) {
        let key = match keys::current_name(name) {
            Some(current) => {
                tracing::warn!("{name} is deprecated. Instead, use {current} ({source})");
                current
            }
            None => name,
        };
        // `-D` wins over every resource, also one added after it (`tusk fs -conf F`).
        if self.sources.get(key) == Some(&Source::Define) {
            return;
        }
        if self.finals.contains(key) {
            if value.as_deref() != self.values.get(key).map(String::as_str) {
                tracing::warn!(
                    "{source}: an attempt to override final parameter: {key}; Ignoring."
                );
            }
            return;
        }
        if let Some(value) = value {
            self.values.insert(key.to_string(), value);
            self.sources.insert(key.to_string(), source);
        }
        if is_final {
            self.finals.insert(key.to_string());
        }
    }

    /// Parses TOML text, flattening nested tables into dotted keys.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        let mut conf = Configuration::new();
        flatten("", &toml::Value::Table(table), &mut conf.values);
        conf.refresh().map_err(|e| e.to_string())?;
        Ok(conf)
    }

    /// Applies `-D key=value` options.
    pub fn apply_overrides<S: AsRef<str>>(&mut self, options: &[S]) -> Result<(), ConfigError> {
        for option in options {
            let option = option.as_ref();
            let (key, value) = option
                .split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .ok_or_else(|| ConfigError::BadOverride {
                    option: option.to_string(),
                })?;
            let key = key.trim();
            let key = keys::current_name(key).unwrap_or(key);
            self.values
                .insert(key.to_string(), value.trim().to_string());
            self.sources.insert(key.to_string(), Source::Define);
        }
        self.refresh()
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.values.insert(key.to_string(), value.into());
        self.sources.insert(key.to_string(), Source::Set);
        // A value that cannot be expanded stays as written (it was set, not loaded).
        let _ = self.refresh();
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.expanded
            .get(key)
            .or_else(|| self.values.get(key))
            .or_else(|| self.derived.get(key).map(|(v, _)| v))
            .map(String::as_str)
    }

    /// The value as written, before `${}` expansion.
    pub fn get_raw(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Where `key`'s value came from; `None` when it is not set.
    pub fn source(&self, key: &str) -> Option<&Source> {
        self.sources
            .get(key)
            .or_else(|| self.derived.get(key).map(|(_, s)| s))
    }

    /// Whether a resource marked `key` final.
    pub fn is_final(&self, key: &str) -> bool {
        self.finals.contains(key)
    }

    /// Keys set that no Tusk component reads, with where each was set.
    pub fn unknown_keys(&self) -> Vec<(&str, Option<&Source>)> {
        self.values
            .keys()
            .filter(|k| !keys::is_known(k))
            .map(|k| (k.as_str(), self.sources.get(k)))
            .collect()
    }

    /// The defaults the typed getters answered absent keys with, so far.
    pub fn defaults_used(&self) -> BTreeMap<String, String> {
        self.defaults.lock().map(|d| d.clone()).unwrap_or_default()
    }

    /// The values the typed getters could not parse so far, by key.
    pub fn bad_values(&self) -> Vec<ConfigError> {
        let Ok(bad) = self.bad_values.lock() else {
            return Vec::new();
        };
        bad.iter()
            .map(|(key, (value, expected))| ConfigError::BadValue {
                key: key.clone(),
                value: value.clone(),
                expected,
            })
            .collect()
    }

    /// Records and returns a value a getter could not parse.
    fn bad_value(&self, key: &str, value: &str, expected: &'static str) -> ConfigError {
        if let Ok(mut bad) = self.bad_values.lock() {
            bad.insert(key.to_string(), (value.to_string(), expected));
        }
        ConfigError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
            expected,
        }
    }

    /// Records the default a getter answered an absent key with.
    fn default_used(&self, key: &str, default: impl std::fmt::Display) {
        if let Ok(mut d) = self.defaults.lock() {
            d.entry(key.to_string())
                .or_insert_with(|| default.to_string());
        }
    }

    pub fn get_str(&self, key: &str, default: &str) -> String {
        match self.get(key) {
            Some(v) => v.to_string(),
            None => {
                self.default_used(key, default);
                default.to_string()
            }
        }
    }

    /// A size or count; accepts Hadoop's suffixes k, m, g, t (binary multiples).
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.get(key) {
            None => {
                self.default_used(key, default);
                Ok(default)
            }
            Some(v) => parse_size(v).ok_or_else(|| self.bad_value(key, v, "size or number")),
        }
    }

    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self
            .get(key)
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            None => {
                self.default_used(key, default);
                Ok(default)
            }
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(self.bad_value(key, v, "boolean")),
        }
    }

    /// A duration whose bare number is in `unit`; suffixes ms, s, m, h are accepted.
    pub fn get_duration(
        &self,
        key: &str,
        default: Duration,
        unit: Duration,
    ) -> Result<Duration, ConfigError> {
        match self.get(key) {
            None => {
                self.default_used(key, format_duration(default, unit));
                Ok(default)
            }
            Some(v) => parse_duration(v, unit).ok_or_else(|| self.bad_value(key, v, "duration")),
        }
    }

    /// Re-expands `${}` values after [`Configuration::add_resource`].
    pub fn refresh_expansions(&mut self) -> Result<(), ConfigError> {
        self.refresh()
    }

    /// Expands every value that holds `${`; fails on a value nested deeper than
    /// [`MAX_SUBST`] (Hadoop: "Variable substitution depth too large").
    fn refresh(&mut self) -> Result<(), ConfigError> {
        let mut expanded = BTreeMap::new();
        let mut first_error = None;
        for (key, raw) in &self.values {
            if !raw.contains("${") {
                continue;
            }
            match self.substitute(raw) {
                Ok(v) => {
                    expanded.insert(key.clone(), v);
                }
                Err(message) => {
                    first_error.get_or_insert(ConfigError::Substitution {
                        key: key.clone(),
                        message,
                    });
                }
            }
        }
        self.expanded = expanded;
        self.derived.clear();
        for (key, template) in DERIVED {
            if self.values.contains_key(*key) {
                continue;
            }
            if let Ok(v) = self.substitute(template) {
                if !v.contains("${") {
                    let source = Source::Derived { template };
                    self.derived.insert(key.to_string(), (v, source));
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Hadoop's `substituteVars`: one innermost `${var}` at a time, from the
    /// environment (`env.`), Java system properties, then other keys; an unbound or
    /// self-referencing variable stays as written.
    fn substitute(&self, raw: &str) -> Result<String, String> {
        let mut eval = raw.to_string();
        for _ in 0..MAX_SUBST {
            let Some((start, end)) = innermost_variable(&eval) else {
                return Ok(eval);
            };
            let var = &eval[start + 2..end];
            let value = if let Some(name) = var.strip_prefix("env.").filter(|n| !n.is_empty()) {
                env_variable(name)
            } else {
                java_system_property(var)
            }
            .or_else(|| self.values.get(var).cloned());
            let Some(value) = value else {
                return Ok(eval);
            };
            let reference = &eval[start..=end];
            if value.contains(reference) {
                return Ok(eval);
            }
            eval = format!("{}{value}{}", &eval[..start], &eval[end + 1..]);
        }
        Err(format!(
            "Variable substitution depth too large: {MAX_SUBST} {raw}"
        ))
    }

    /// A comma-separated list, trimmed, empty items dropped.
    pub fn get_list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every key set, with its value (`${}` expanded).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values
            .keys()
            .map(|k| (k.as_str(), self.get(k).unwrap_or_default()))
    }

    /// The unset keys [`DERIVED`] gives a value, with it.
    pub fn derived(&self) -> impl Iterator<Item = (&str, &str)> {
        self.derived
            .iter()
            .map(|(k, (v, _))| (k.as_str(), v.as_str()))
    }
}

/// The first `${name}` whose name holds no space, `$` or `}` (so the innermost of
/// nested ones), as Hadoop's `findSubVariable`: its `$` and `}` indices.
fn innermost_variable(s: &str) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(rel) = s[from..].find("${") {
        let start = from + rel;
        let mut i = start + 2;
        loop {
            match bytes.get(i)? {
                b'}' if i > start + 2 => return Some((start, i)),
                b'}' | b' ' | b'$' => {
                    from = i;
                    break;
                }
                _ => i += 1,
            }
        }
    }
    None
}

/// `${env.NAME}`, `${env.NAME:-default}` (default when unset or empty) and
/// `${env.NAME-default}` (default when unset), as Hadoop reads them.
fn env_variable(spec: &str) -> Option<String> {
    if let Some(i) = spec.find(":-") {
        let v = std::env::var(&spec[..i]).ok().filter(|v| !v.is_empty());
        return Some(v.unwrap_or_else(|| spec[i + 2..].to_string()));
    }
    if let Some(i) = spec.find('-') {
        return Some(std::env::var(&spec[..i]).unwrap_or_else(|_| spec[i + 1..].to_string()));
    }
    std::env::var(spec).ok()
}

/// The Java system properties Hadoop configurations refer to, as a JVM here would set
/// them.
fn java_system_property(name: &str) -> Option<String> {
    Some(match name {
        "user.name" => crate::current_user(),
        "user.home" => std::env::var("HOME").ok()?,
        "user.dir" => std::env::current_dir().ok()?.display().to_string(),
        "java.io.tmpdir" => "/tmp".to_string(),
        "os.name" => "Linux".to_string(),
        "os.arch" => match std::env::consts::ARCH {
            "x86_64" => "amd64".to_string(),
            other => other.to_string(),
        },
        "file.separator" => "/".to_string(),
        "path.separator" => ":".to_string(),
        "line.separator" => "\n".to_string(),
        _ => return None,
    })
}

/// A default duration as the key's unit writes it (`3` for 3 s in seconds, `500ms`).
fn format_duration(d: Duration, unit: Duration) -> String {
    if !unit.is_zero() && d.as_nanos().is_multiple_of(unit.as_nanos()) {
        (d.as_nanos() / unit.as_nanos()).to_string()
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// A resource is XML when its name says so (`core-site.xml`) or its text opens with
/// `<`; a `.xml` file of anything else is then reported as bad XML, not as bad TOML.
fn is_xml(path: &Path, text: &str) -> bool {
    let named_xml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"));
    named_xml || text.trim_start().starts_with('<')
}

fn flatten(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, String>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        toml::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        toml::Value::Array(items) => {
            let joined: Vec<String> = items
                .iter()
                .map(|i| match i {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            out.insert(prefix.to_string(), joined.join(","));
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// Parses `134217728`, `128m`, `1g`, `64k`.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim().to_ascii_lowercase();
    let (digits, mult) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 1u64 << 10),
        'm' => (&t[..t.len() - 1], 1 << 20),
        'g' => (&t[..t.len() - 1], 1 << 30),
        't' => (&t[..t.len() - 1], 1 << 40),
        _ => (t.as_str(), 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// Parses `3`, `200ms`, `1.5s`, `2m`; a bare number is in `unit`.
pub fn parse_duration(text: &str, unit: Duration) -> Option<Duration> {
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    if n < 0.0 {
        return None;
    }
    let secs = match suffix.trim() {
        "" => unit.as_secs_f64() * n,
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    // A value too long for a Duration is a bad value, not a reason to panic.
    Duration::try_from_secs_f64(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_flat_keys_flatten_and_overrides_win() {
        let mut conf = Configuration::from_toml(
            "\"dfs.replication\" = 2\n[dfs]\nblocksize = \"1m\"\n[dfs.heartbeat]\ninterval = 1\n",
        )
        .unwrap();
        assert_eq!(conf.get_u64("dfs.replication", 3).unwrap(), 2);
        assert_eq!(conf.get_u64("dfs.blocksize", 0).unwrap(), 1 << 20);
        assert_eq!(
            conf.get_duration(
                "dfs.heartbeat.interval",
                Duration::ZERO,
                Duration::from_secs(1)
            )
            .unwrap(),
            Duration::from_secs(1)
        );
        conf.apply_overrides(&["dfs.replication=1"]).unwrap();
        assert_eq!(conf.get_u64("dfs.replication", 3).unwrap(), 1);
        assert!(conf.apply_overrides(&["novalue"]).is_err());
        assert_eq!(conf.get_u64("missing", 7).unwrap(), 7);
    }

    #[test]
    fn durations_and_sizes_parse_with_units() {
        let s = Duration::from_secs(1);
        assert_eq!(parse_duration("200ms", s), Some(Duration::from_millis(200)));
        assert_eq!(parse_duration("3", s), Some(Duration::from_secs(3)));
        assert_eq!(parse_duration("0.5", s), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("x", s), None);
        assert_eq!(parse_size("64k"), Some(65536));
        assert_eq!(parse_size("oops"), None);
    }

    /// Found by fuzzing (config target): a duration longer than `Duration` can hold
    /// panicked in `Duration::mul_f64` / `from_secs_f64`.
    #[test]
    fn durations_too_long_for_a_duration_are_bad_values() {
        let h = Duration::from_secs(3600);
        assert_eq!(parse_duration("6111114641111146", h), None);
        assert_eq!(parse_duration("100000000000000000000s", h), None);
        assert_eq!(parse_duration("1e400", h), None);
        let mut conf = Configuration::from_toml("r=6111114641111146").unwrap();
        conf.apply_overrides(&["dfs.heartbeat.interval=100000000000000000000"])
            .unwrap();
        assert!(matches!(
            conf.get_duration("dfs.heartbeat.interval", h, Duration::from_secs(1)),
            Err(ConfigError::BadValue { .. })
        ));
        assert!(conf.get_duration("r", h, h).is_err());
    }

    fn site(dir: &Path, name: &str, props: &[(&str, &str, bool)]) {
        let body: String =
            props
                .iter()
                .map(|(k, v, fin)| {
                    format!(
                    "  <property>\n    <name>{k}</name>\n    <value>{v}</value>\n{}  </property>\n",
                    if *fin { "    <final>true</final>\n" } else { "" }
                )
                })
                .collect();
        std::fs::write(
            dir.join(name),
            format!("<?xml version=\"1.0\"?>\n<configuration>\n{body}</configuration>\n"),
        )
        .unwrap();
    }

    #[test]
    fn hadoop_site_files_load_in_order_with_finals_and_sources() {
        let dir = tempfile::tempdir().unwrap();
        site(
            dir.path(),
            "core-site.xml",
            &[
                ("fs.defaultFS", "hdfs://nn:9000", false),
                ("dfs.replication", "2", true),
                ("hadoop.tmp.dir", "/tmp/hadoop-${user.name}", false),
            ],
        );
        site(
            dir.path(),
            "hdfs-site.xml",
            &[
                ("dfs.replication", "5", false),
                ("dfs.blocksize", "64m", false),
                ("dfs.namenode.name.dir", "${hadoop.tmp.dir}/dfs/name", false),
                ("dfs.namenode.secondary.http-address", "0.0.0.0:9868", false),
            ],
        );
        std::fs::write(
            dir.path().join("tusk.toml"),
            "\"dfs.heartbeat.interval\" = 1\n",
        )
        .unwrap();
        let mut conf = Configuration::from_file(dir.path()).unwrap();
        assert_eq!(
            conf.get("dfs.replication"),
            Some("2"),
            "final in core-site wins"
        );
        assert!(conf.is_final("dfs.replication"));
        assert_eq!(conf.get("dfs.blocksize"), Some("64m"));
        let user = crate::current_user();
        assert_eq!(
            conf.get("dfs.namenode.name.dir"),
            Some(format!("/tmp/hadoop-{user}/dfs/name").as_str())
        );
        assert_eq!(
            conf.get_raw("dfs.namenode.name.dir"),
            Some("${hadoop.tmp.dir}/dfs/name")
        );
        assert_eq!(
            conf.source("dfs.blocksize").unwrap().to_string(),
            format!("{}:7", dir.path().join("hdfs-site.xml").display())
        );
        assert_eq!(conf.get("dfs.heartbeat.interval"), Some("1"));
        let unknown: Vec<&str> = conf.unknown_keys().iter().map(|(k, _)| *k).collect();
        assert_eq!(unknown, ["dfs.namenode.secondary.http-address"]);
        // -D wins over a final value, as Hadoop's GenericOptionsParser (set()) does.
        conf.apply_overrides(&["dfs.replication=1"]).unwrap();
        assert_eq!(conf.get("dfs.replication"), Some("1"));
        assert_eq!(conf.source("dfs.replication"), Some(&Source::Define));
        // ... also over a resource added after it.
        conf.apply_overrides(&["dfs.blocksize=8m"]).unwrap();
        conf.add_resource(&dir.path().join("hdfs-site.xml"))
            .unwrap();
        assert_eq!(conf.get("dfs.blocksize"), Some("8m"));
        // A later -D of a referenced key changes what refers to it.
        conf.apply_overrides(&["hadoop.tmp.dir=/data"]).unwrap();
        assert_eq!(conf.get("dfs.namenode.name.dir"), Some("/data/dfs/name"));
        // Defaults the getters answered with are remembered.
        assert_eq!(
            conf.get_u64("dfs.namenode.checkpoint.txns", 1000000)
                .unwrap(),
            1000000
        );
        assert_eq!(
            conf.defaults_used()
                .get("dfs.namenode.checkpoint.txns")
                .map(String::as_str),
            Some("1000000")
        );
    }

    #[test]
    fn variables_expand_as_hadoops() {
        let mut conf = Configuration::new();
        conf.set("a", "x");
        conf.set("b", "${a}-${a}");
        conf.set(
            "c",
            "${b}/${env.TUSK_TEST_UNSET_VAR:-fallback}/${env.TUSK_TEST_UNSET_VAR-dash}",
        );
        conf.set("home", "${env.HOME}");
        conf.set("unbound", "${nope}/x");
        conf.set("selfref", "${selfref}1");
        conf.set("nested", "${${a}}");
        conf.set("x", "got x");
        assert_eq!(conf.get("b"), Some("x-x"));
        assert_eq!(conf.get("c"), Some("x-x/fallback/dash"));
        assert_eq!(
            conf.get("home").map(String::from),
            std::env::var("HOME").ok()
        );
        assert_eq!(conf.get("unbound"), Some("${nope}/x"));
        assert_eq!(conf.get("selfref"), Some("${selfref}1"));
        assert_eq!(conf.get("nested"), Some("got x"));
        // A chain deeper than MAX_SUBST is an error, as in Hadoop.
        let mut deep = String::new();
        for i in 0..=MAX_SUBST {
            deep.push_str(&format!("\"k{i}\" = \"${{k{}}}\"\n", i + 1));
        }
        let err = Configuration::from_toml(&deep).unwrap_err();
        assert!(
            err.contains("Variable substitution depth too large"),
            "{err}"
        );
        // Deprecated names set their current one.
        conf.apply_overrides(&["fs.default.name=hdfs://old:1"])
            .unwrap();
        assert_eq!(conf.get("fs.defaultFS"), Some("hdfs://old:1"));
    }

    #[test]
    fn a_value_that_does_not_parse_names_key_and_value_as_hadoop() {
        let mut conf = Configuration::new();
        conf.set("dfs.replication", "two");
        assert!(conf.bad_values().is_empty());
        let err = conf.get_u64("dfs.replication", 3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "configuration key dfs.replication: For input string: \"two\" (not a valid size or number)"
        );
        // A clone (what a component keeps) records it for `tusk conf show` too.
        let _ = conf.clone().get_u64("dfs.replication", 3);
        let recorded: Vec<String> = conf.bad_values().iter().map(|e| e.to_string()).collect();
        assert_eq!(recorded, [err.to_string()]);
    }

    #[test]
    fn a_site_file_of_garbage_is_bad_xml_not_bad_toml() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("core-site.xml");
        std::fs::write(&file, "garbage text\n").unwrap();
        let err = Configuration::from_file(&file).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, ConfigError::NotXml { .. }), "{message}");
        assert!(message.contains("is not valid XML"), "{message}");
        assert!(message.contains("1:1"), "the parser's position: {message}");
        assert!(!message.contains("TOML"), "{message}");
    }

    #[test]
    fn a_missing_resource_says_its_cause_once() {
        let err = Configuration::from_file(Path::new("/no/such/tusk.toml")).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("cannot read configuration file /no/such/tusk.toml: "));
        assert_eq!(message.matches("No such file or directory").count(), 1);
        // Printed as a chain (`{:#}`), a source would repeat it.
        assert!(std::error::Error::source(&err).is_none());
    }

    #[test]
    fn bad_values_are_typed_errors() {
        let mut conf = Configuration::new();
        conf.set("dfs.replication", "three");
        assert!(matches!(
            conf.get_u64("dfs.replication", 3),
            Err(ConfigError::BadValue { .. })
        ));
    }

    #[test]
    fn unset_keys_take_hadoops_defaults_built_from_keys_that_are_set() {
        let mut conf = Configuration::new();
        assert_eq!(conf.get("yarn.resourcemanager.address"), None);
        assert_eq!(conf.get("dfs.namenode.name.dir"), None);
        conf.set("yarn.resourcemanager.hostname", "rm.example");
        conf.set("hadoop.tmp.dir", "/data/${user.name}-tmp");
        assert_eq!(
            conf.get("yarn.resourcemanager.address"),
            Some("rm.example:8032")
        );
        assert_eq!(
            conf.get("yarn.resourcemanager.webapp.address"),
            Some("rm.example:8088")
        );
        let user = java_system_property("user.name").unwrap();
        assert_eq!(
            conf.get("dfs.namenode.name.dir"),
            Some(format!("file:///data/{user}-tmp/dfs/name").as_str())
        );
        assert_eq!(
            conf.source("yarn.resourcemanager.address")
                .map(ToString::to_string),
            Some("Hadoop's default ${yarn.resourcemanager.hostname}:8032".to_string())
        );
        assert!(
            conf.iter()
                .all(|(k, _)| k != "yarn.resourcemanager.address"),
            "a derived key is not a key set"
        );
        // A key set wins over the derived value.
        conf.set("yarn.resourcemanager.address", "10.0.0.1:9999");
        assert_eq!(
            conf.get("yarn.resourcemanager.address"),
            Some("10.0.0.1:9999")
        );
        assert_eq!(
            conf.get("yarn.resourcemanager.webapp.address"),
            Some("rm.example:8088")
        );
    }
}

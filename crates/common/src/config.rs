//! Configuration keyed by Hadoop's property names.
//!
//! A TOML file may write keys flat (`"dfs.replication" = 3`) or nested
//! (`[dfs] replication = 3`); both flatten to the dotted name. `-D key=value` overrides
//! win over the file. Each daemon turns the map into its own `XxxOptions` struct once at
//! start-up and passes that down; nothing reads configuration globally.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::error::ConfigError;

/// A flat map from Hadoop property names to their string values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Configuration {
    /// Every key set by a file or an override; absent keys take each getter's default.
    values: BTreeMap<String, String>,
}

impl Configuration {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a TOML file.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml(&text).map_err(|message| ConfigError::Parse {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses TOML text, flattening nested tables into dotted keys.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        let mut conf = Configuration::new();
        flatten("", &toml::Value::Table(table), &mut conf.values);
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
            self.set(key.trim(), value.trim());
        }
        Ok(())
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.values.insert(key.to_string(), value.into());
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    pub fn get_str(&self, key: &str, default: &str) -> String {
        self.get(key).unwrap_or(default).to_string()
    }

    /// A size or count; accepts Hadoop's suffixes k, m, g, t (binary multiples).
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => parse_size(v).ok_or_else(|| bad(key, v, "size or number")),
        }
    }

    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.get(key).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(bad(key, v, "boolean")),
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
            None => Ok(default),
            Some(v) => parse_duration(v, unit).ok_or_else(|| bad(key, v, "duration")),
        }
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

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

fn bad(key: &str, value: &str, expected: &'static str) -> ConfigError {
    ConfigError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
        expected,
    }
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

    #[test]
    fn bad_values_are_typed_errors() {
        let mut conf = Configuration::new();
        conf.set("dfs.replication", "three");
        assert!(matches!(
            conf.get_u64("dfs.replication", 3),
            Err(ConfigError::BadValue { .. })
        ));
    }
}

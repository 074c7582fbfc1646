//! [`Timing`]: when YARN's daemons and AMs act (`tusk.yarn.timing`), read once by the
//! ResourceManager, every NodeManager and the AMs with one strict parser; and
//! [`am_heartbeat`], the period between an AM's allocate calls.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::Configuration;
use crate::error::ConfigError;

/// The configuration key all YARN components read their [`Timing`] from.
pub const TIMING_KEY: &str = "tusk.yarn.timing";

/// Hadoop's key for the period between an ApplicationMaster's allocate calls; both of
/// Tusk's AMs (MapReduce's and SQL's) read it.
pub const AM_HEARTBEAT_KEY: &str = "yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms";

/// [`AM_HEARTBEAT_KEY`] from `conf` (milliseconds; Hadoop's default 1 s).
pub fn am_heartbeat(conf: &Configuration) -> Result<Duration, ConfigError> {
    conf.get_duration(
        AM_HEARTBEAT_KEY,
        Duration::from_secs(1),
        Duration::from_millis(1),
    )
}

/// When the ResourceManager schedules and answers, NodeManagers report and AMs ask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timing {
    /// Asks, finished containers and new nodes trigger scheduling at once; an allocate
    /// that can be satisfied is answered with containers; work for a node is pushed by
    /// answering its held heartbeat; NodeManagers report finished containers at once;
    /// AM allocate calls wait at the ResourceManager for something to happen.
    #[default]
    EventDriven,
    /// Hadoop's behaviour: containers are allocated only when a node heartbeats and
    /// handed to the AM on its next allocate call; everything waits for heartbeats.
    Classic,
}

impl Timing {
    /// Parses the value of `key`: `event-driven` (or `event`) and `classic` (or
    /// `heartbeat`), surrounding blanks ignored; anything else is an error, so a typo
    /// does not silently pick a mode.
    pub fn parse(key: &str, text: &str) -> Result<Timing, ConfigError> {
        match text.trim() {
            "event-driven" | "event" => Ok(Timing::EventDriven),
            "classic" | "heartbeat" => Ok(Timing::Classic),
            _ => Err(ConfigError::BadValue {
                key: key.into(),
                value: text.into(),
                expected: "timing (event-driven or classic)",
            }),
        }
    }

    /// [`TIMING_KEY`] from `conf`; the default when absent.
    pub fn from_conf(conf: &Configuration) -> Result<Timing, ConfigError> {
        match conf.get(TIMING_KEY) {
            Some(v) => Timing::parse(TIMING_KEY, v),
            None => Ok(Timing::default()),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Timing::EventDriven => "event-driven",
            Timing::Classic => "classic",
        }
    }

    pub fn is_event_driven(&self) -> bool {
        *self == Timing::EventDriven
    }
}

impl FromStr for Timing {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Timing, ConfigError> {
        Timing::parse(TIMING_KEY, text)
    }
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_modes_and_their_aliases() {
        for (text, want) in [
            ("event-driven", Timing::EventDriven),
            (" event ", Timing::EventDriven),
            ("classic", Timing::Classic),
            ("heartbeat\n", Timing::Classic),
        ] {
            assert_eq!(text.parse::<Timing>().unwrap(), want, "{text:?}");
        }
        for t in [Timing::EventDriven, Timing::Classic] {
            assert_eq!(t.name().parse::<Timing>().unwrap(), t);
        }
    }

    #[test]
    fn a_typo_is_an_error_naming_key_and_value() {
        for typo in ["clasic", "Classic", "event_driven", ""] {
            match typo.parse::<Timing>() {
                Err(ConfigError::BadValue { key, value, .. }) => {
                    assert_eq!(key, TIMING_KEY);
                    assert_eq!(value, typo);
                }
                other => panic!("{typo:?} parsed as {other:?}"),
            }
        }
    }

    #[test]
    fn from_conf_defaults_to_event_driven_and_rejects_typos() {
        let mut conf = Configuration::new();
        assert_eq!(Timing::from_conf(&conf).unwrap(), Timing::EventDriven);
        conf.set(TIMING_KEY, "classic");
        assert_eq!(Timing::from_conf(&conf).unwrap(), Timing::Classic);
        conf.set(TIMING_KEY, "clasic");
        assert!(Timing::from_conf(&conf).is_err());
    }
}

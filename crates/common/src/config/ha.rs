//! HDFS's high-availability keys: a nameservice (`dfs.nameservices`), its NameNodes
//! (`dfs.ha.namenodes.NS`) and each one's RPC address (`dfs.namenode.rpc-address.NS.NN`),
//! read the same way by the NameNodes, the DataNodes and the clients. Tusk's NameNodes
//! also need each other's replicated-log address (`tusk.namenode.ha.log-address.NS.NN`,
//! in place of HDFS's `dfs.namenode.shared.edits.dir` of JournalNodes).

use super::Configuration;

/// One NameNode of a nameservice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaNameNode {
    /// Its id in `dfs.ha.namenodes.NS` (`nn1`).
    pub id: String,
    /// `dfs.namenode.rpc-address.NS.ID`, `host:port`.
    pub rpc_address: String,
    /// `tusk.namenode.ha.log-address.NS.ID`, `host:port`; `None` when not set (clients
    /// and DataNodes do not need it).
    pub log_address: Option<String>,
}

/// A nameservice: the logical name clients use (`hdfs://NS`) and its NameNodes, in the
/// order `dfs.ha.namenodes.NS` lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nameservice {
    pub id: String,
    pub namenodes: Vec<HaNameNode>,
}

impl Nameservice {
    /// The nameservice `name` as configured, when `dfs.nameservices` lists it and
    /// `dfs.ha.namenodes.NAME` names at least one NameNode with an RPC address. A NameNode
    /// listed without an address is an error, as in HDFS's `DFSUtil`.
    pub fn from_conf(conf: &Configuration, name: &str) -> Result<Option<Nameservice>, String> {
        if !conf.get_list("dfs.nameservices").iter().any(|n| n == name) {
            return Ok(None);
        }
        let ids = conf.get_list(&format!("dfs.ha.namenodes.{name}"));
        if ids.is_empty() {
            return Ok(None);
        }
        let mut namenodes = Vec::with_capacity(ids.len());
        for id in ids {
            let key = format!("dfs.namenode.rpc-address.{name}.{id}");
            let rpc_address = conf
                .get(&key)
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .ok_or_else(|| format!("{key} is not set: every NameNode of nameservice {name} needs an RPC address"))?
                .to_string();
            let log_address = conf
                .get(&format!("tusk.namenode.ha.log-address.{name}.{id}"))
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty());
            namenodes.push(HaNameNode {
                id,
                rpc_address,
                log_address,
            });
        }
        Ok(Some(Nameservice {
            id: name.to_string(),
            namenodes,
        }))
    }

    /// The nameservice an `hdfs://NAME[/...]` URI (or a bare `NAME`) names, if `NAME` is
    /// a configured nameservice rather than a host.
    pub fn for_uri(conf: &Configuration, uri: &str) -> Result<Option<Nameservice>, String> {
        let rest = uri.strip_prefix("hdfs://").unwrap_or(uri);
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.is_empty() || authority.contains(':') {
            return Ok(None);
        }
        Self::from_conf(conf, authority)
    }

    /// The nameservice of the default file system (`fs.defaultFS`), if it names one.
    pub fn of_default_fs(conf: &Configuration) -> Result<Option<Nameservice>, String> {
        match conf.get("fs.defaultFS") {
            Some(fs) => Self::for_uri(conf, fs),
            None => Ok(None),
        }
    }

    /// The NameNodes' RPC addresses, in order.
    pub fn rpc_addresses(&self) -> Vec<String> {
        self.namenodes
            .iter()
            .map(|n| n.rpc_address.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(pairs: &[(&str, &str)]) -> Configuration {
        let mut conf = Configuration::new();
        for (k, v) in pairs {
            conf.set(k, *v);
        }
        conf
    }

    #[test]
    fn a_nameservice_lists_its_namenodes_in_order() {
        let conf = conf(&[
            ("fs.defaultFS", "hdfs://ns1"),
            ("dfs.nameservices", "ns1"),
            ("dfs.ha.namenodes.ns1", "nn2, nn1"),
            ("dfs.namenode.rpc-address.ns1.nn1", "h1:8020"),
            ("dfs.namenode.rpc-address.ns1.nn2", "h2:8020"),
            ("tusk.namenode.ha.log-address.ns1.nn1", "h1:8030"),
        ]);
        let ns = Nameservice::of_default_fs(&conf).unwrap().unwrap();
        assert_eq!(ns.id, "ns1");
        assert_eq!(ns.rpc_addresses(), vec!["h2:8020", "h1:8020"]);
        assert_eq!(ns.namenodes[1].log_address.as_deref(), Some("h1:8030"));
        assert_eq!(ns.namenodes[0].log_address, None);
        assert_eq!(
            Nameservice::for_uri(&conf, "hdfs://ns1/a/b").unwrap(),
            Some(ns)
        );
    }

    #[test]
    fn a_host_or_an_unlisted_name_is_no_nameservice() {
        let conf = conf(&[
            ("dfs.nameservices", "ns1"),
            ("dfs.ha.namenodes.ns1", "nn1"),
            ("dfs.namenode.rpc-address.ns1.nn1", "h1:8020"),
        ]);
        assert_eq!(
            Nameservice::for_uri(&conf, "hdfs://h1:8020/").unwrap(),
            None
        );
        assert_eq!(Nameservice::for_uri(&conf, "hdfs://other/").unwrap(), None);
        assert!(Nameservice::for_uri(&conf, "hdfs://ns1").unwrap().is_some());
    }

    #[test]
    fn a_namenode_without_an_address_is_refused() {
        let conf = conf(&[
            ("dfs.nameservices", "ns1"),
            ("dfs.ha.namenodes.ns1", "nn1,nn2"),
            ("dfs.namenode.rpc-address.ns1.nn1", "h1:8020"),
        ]);
        let err = Nameservice::for_uri(&conf, "ns1").unwrap_err();
        assert!(err.contains("dfs.namenode.rpc-address.ns1.nn2"), "{err}");
    }
}

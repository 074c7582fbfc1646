//! A `tusk local up` cluster for tests that drive the real binary: its own `TUSK_HOME`
//! (so the recorded addresses are its own), stopped on drop.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output};

pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub uri: String,
}

/// `GET target` on `addr`; the whole answer as text.
pub fn http_get(addr: &str, target: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// Runs `tusk ARGS` with `TUSK_HOME=home`.
pub fn tusk(home: &Path, args: &[&str]) -> Output {
    tusk_env(home, args, &[])
}

/// Runs `tusk ARGS` with `TUSK_HOME=home` and extra environment variables.
pub fn tusk_env(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tusk"));
    cmd.args(args)
        .env("TUSK_HOME", home)
        .env("TUSK_LOG", "warn")
        .env_remove("HADOOP_CONF_DIR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run tusk")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

impl Cluster {
    /// One NameNode and `datanodes` DataNodes, no YARN, 1 MiB blocks (files of a few MB
    /// span several).
    pub fn up(datanodes: usize) -> Cluster {
        Self::up_with(datanodes, &[], &[])
    }

    /// `tusk [global] local up ...` with extra environment.
    pub fn up_with(datanodes: usize, global: &[&str], env: &[(&str, &str)]) -> Cluster {
        Self::up_full(datanodes, global, &[], env)
    }

    /// `tusk [global] local up ... [up_args]` with extra environment (`local up`'s own
    /// `-D` keys go to every daemon it starts).
    pub fn up_full(
        datanodes: usize,
        global: &[&str],
        up_args: &[&str],
        env: &[(&str, &str)],
    ) -> Cluster {
        let mut up_args = up_args.to_vec();
        up_args.push("--no-yarn");
        Self::start(datanodes, global, &up_args, env)
    }

    /// With a ResourceManager and `nodemanagers` NodeManagers.
    pub fn up_yarn(datanodes: usize, nodemanagers: usize, global: &[&str]) -> Cluster {
        let n = nodemanagers.to_string();
        Self::start(datanodes, global, &["--nodemanagers", &n], &[])
    }

    fn start(datanodes: usize, global: &[&str], up_args: &[&str], env: &[(&str, &str)]) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("cluster");
        let n = datanodes.to_string();
        let mut args: Vec<&str> = global.to_vec();
        args.extend([
            "local",
            "up",
            "--dir",
            state.to_str().unwrap(),
            "--datanodes",
            &n,
            "-D",
            "dfs.blocksize=1m",
        ]);
        args.extend_from_slice(up_args);
        let out = tusk_env(dir.path(), &args, env);
        assert!(out.status.success(), "local up failed: {}", stderr(&out));
        let uri = stdout(&out).lines().last().unwrap().to_string();
        assert!(
            uri.starts_with("hdfs://127.0.0.1:"),
            "last line is the URI: {uri}"
        );
        Cluster { dir, uri }
    }

    pub fn home(&self) -> &Path {
        self.dir.path()
    }

    /// `tusk fs ...` relying on the URI recorded by `local up`.
    pub fn fs(&self, args: &[&str]) -> Output {
        let mut all = vec!["fs"];
        all.extend_from_slice(args);
        tusk(self.dir.path(), &all)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let state = self.dir.path().join("cluster");
        let out = tusk(
            self.dir.path(),
            &["local", "down", "--dir", state.to_str().unwrap()],
        );
        assert!(out.status.success() || std::thread::panicking());
    }
}

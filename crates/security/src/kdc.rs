//! A throwaway Kerberos realm: a real MIT KDC (`krb5kdc`, Debian's `krb5-kdc`) with
//! its database, `krb5.conf`, principals and keytabs in one directory, for tests and a
//! developer's secure local cluster. Processes that use it get `KRB5_CONFIG` (and a
//! credential cache in `KRB5CCNAME`) from [`Kdc::env`].

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running KDC; stopped when dropped.
pub struct Kdc {
    pub realm: String,
    dir: PathBuf,
    port: u16,
    /// `krb5kdc`, once started.
    child: Option<Child>,
}

/// A realm that could not be made or started.
#[derive(Debug, thiserror::Error)]
#[error("KDC: {0}")]
pub struct KdcError(String);

fn failed(what: &str, e: impl std::fmt::Display) -> KdcError {
    KdcError(format!("{what}: {e}"))
}

impl Kdc {
    /// Creates realm `realm` in `dir` (which must exist) and starts its KDC on a free
    /// loopback port, waiting until it answers.
    pub fn start(dir: &Path, realm: &str) -> Result<Kdc, KdcError> {
        let port = free_port()?;
        let db = dir.join("principal");
        std::fs::write(
            dir.join("krb5.conf"),
            format!(
                "[libdefaults]\n default_realm = {realm}\n dns_lookup_realm = false\n \
                 dns_lookup_kdc = false\n rdns = false\n dns_canonicalize_hostname = false\n \
                 udp_preference_limit = 1\n\n[realms]\n {realm} = {{\n  kdc = 127.0.0.1:{port}\n }}\n"
            ),
        )
        .map_err(|e| failed("writing krb5.conf", e))?;
        std::fs::write(
            dir.join("kdc.conf"),
            format!(
                "[kdcdefaults]\n kdc_ports = {port}\n kdc_tcp_ports = {port}\n\n[realms]\n {realm} = {{\n  \
                 database_name = {db}\n  key_stash_file = {stash}\n  acl_file = {acl}\n }}\n",
                db = db.display(),
                stash = dir.join("stash").display(),
                acl = dir.join("kadm5.acl").display(),
            ),
        )
        .map_err(|e| failed("writing kdc.conf", e))?;
        std::fs::write(dir.join("kadm5.acl"), "").map_err(|e| failed("writing kadm5.acl", e))?;
        let mut kdc = Kdc {
            realm: realm.to_string(),
            dir: dir.to_path_buf(),
            port,
            child: None,
        };
        kdc.run(
            "kdb5_util",
            &["create", "-s", "-r", realm, "-P", "tusk-master-key"],
        )?;
        kdc.child = Some(
            kdc.command(sbin("krb5kdc"))
                .args(["-n", "-r", realm])
                // Its own process group: a cluster's KDC outlives the command that
                // started it (see `Kdc::detach`), and a terminal's ^C is not its.
                .process_group(0)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| failed("starting krb5kdc (is krb5-kdc installed?)", e))?,
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err(KdcError("krb5kdc did not listen within 20 s".into()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(kdc)
    }

    /// The environment a process of this realm needs.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("KRB5_CONFIG".into(), self.krb5_conf().display().to_string()),
            (
                "KRB5_KDC_PROFILE".into(),
                self.dir.join("kdc.conf").display().to_string(),
            ),
        ]
    }

    /// Leaves the KDC running after this value is gone (a cluster's realm, stopped
    /// with the cluster); returns its pid.
    pub fn detach(mut self) -> Option<u32> {
        self.child.take().map(|c| c.id())
    }

    /// [`Kdc::env`] and `KRB5CCNAME` naming credential cache `cache`: what a client
    /// process of this realm with that ticket needs.
    pub fn user_env(&self, cache: &Path) -> Vec<(String, String)> {
        let mut env = self.env();
        env.push(("KRB5CCNAME".into(), format!("FILE:{}", cache.display())));
        env
    }

    pub fn krb5_conf(&self) -> PathBuf {
        self.dir.join("krb5.conf")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Adds `principal` (random key) and writes its keys to a keytab in the realm's
    /// directory; returns the keytab's path.
    pub fn add_principal(&self, principal: &str) -> Result<PathBuf, KdcError> {
        let keytab = self
            .dir
            .join(format!("{}.keytab", principal.replace(['/', '@'], "_")));
        self.run(
            "kadmin.local",
            &["-q", &format!("addprinc -randkey {principal}")],
        )?;
        self.run(
            "kadmin.local",
            &["-q", &format!("ktadd -k {} {principal}", keytab.display())],
        )?;
        Ok(keytab)
    }

    /// A user of the realm with a ticket: its principal and keytab made, `kinit` run
    /// into `DIR/<name>.cc`; returns that credential cache (for `KRB5CCNAME`).
    pub fn add_user(&self, name: &str) -> Result<PathBuf, KdcError> {
        let keytab = self.add_principal(name)?;
        let cache = self.dir.join(format!("{name}.cc"));
        self.kinit(name, &keytab, &cache)?;
        Ok(cache)
    }

    /// `kinit -kt keytab principal` into credential cache `cache`.
    pub fn kinit(&self, principal: &str, keytab: &Path, cache: &Path) -> Result<(), KdcError> {
        self.run(
            "kinit",
            &[
                "-kt",
                &keytab.display().to_string(),
                "-c",
                &format!("FILE:{}", cache.display()),
                principal,
            ],
        )
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.envs(self.env());
        cmd
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), KdcError> {
        let out = self
            .command(sbin(program))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| failed(&format!("running {program}"), e))?;
        if !out.status.success() {
            return Err(KdcError(format!(
                "{program} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
    }
}

impl Drop for Kdc {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The KDC's administration tools live in `/usr/sbin`, which a user's `PATH` may leave
/// out; anything not there (`kinit`) is looked up on `PATH`.
fn sbin(program: &str) -> PathBuf {
    let path = Path::new("/usr/sbin").join(program);
    if path.exists() {
        path
    } else {
        PathBuf::from(program)
    }
}

fn free_port() -> Result<u16, KdcError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| failed("finding a port", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| failed("finding a port", e))
}

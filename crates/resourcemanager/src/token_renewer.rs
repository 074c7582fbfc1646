//! The ResourceManager's delegation token renewer, as Hadoop's `DelegationTokenRenewer`:
//! the HDFS delegation tokens an application's client ships in its AM's launch context
//! (renewer: the ResourceManager's principal) are renewed once at submission (a token
//! the ResourceManager cannot renew refuses the application), then again a little before
//! each expiry (at 90% of the time left, as Hadoop's `setTimerForTokenRenewal`) while any
//! application holding them runs, and cancelled when the last of them finishes — unless
//! one of them asked otherwise (`ApplicationSubmissionContext.cancel_tokens_when_complete`,
//! which MapReduce's client sets from `mapreduce.job.complete.cancel.delegation.tokens`).
//!
//! The calls to the NameNode go through a [`TokenRenewer`], so the bookkeeping here runs
//! on an explicit clock (`now`, ms since the epoch) and is tested against a real
//! [`tusk_security::DelegationTokenSecretManager`]; [`NameNodeRenewer`] is the one the
//! ResourceManager runs, over RPC as its own Kerberos principal.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tusk_proto::hadoop::common::TokenProto;
use tusk_proto::hdfs;
use tusk_security::delegation_token::HDFS_DELEGATION_KIND;
use tusk_security::Credentials;

/// Renews and cancels a token with whoever issued it (for HDFS tokens: the NameNode's
/// `renewDelegationToken` / `cancelDelegationToken`, called as the ResourceManager's
/// principal).
pub trait TokenRenewer: Sync {
    /// Renews `token`: its new expiry (ms since the epoch), or the refusal's message.
    fn renew(
        &self,
        token: &TokenProto,
        now: i64,
    ) -> impl Future<Output = Result<i64, String>> + Send;
    /// Cancels `token`.
    fn cancel(&self, token: &TokenProto) -> impl Future<Output = Result<(), String>> + Send;
}

/// HDFS delegation tokens renewed and cancelled at the NameNode that issued them (the
/// address in the token's service, as Hadoop's client sets it), over
/// ClientNamenodeProtocol as the ResourceManager's Kerberos principal, logged in from
/// its keytab.
pub struct NameNodeRenewer {
    login: tusk_rpc::KerberosLogin,
    protection: Vec<tusk_rpc::Protection>,
    /// By NameNode address.
    clients: Mutex<HashMap<String, std::sync::Arc<tusk_rpc::RpcClient>>>,
}

impl NameNodeRenewer {
    pub fn new(keytab: std::path::PathBuf, protection: Vec<tusk_rpc::Protection>) -> Self {
        NameNodeRenewer {
            login: tusk_rpc::KerberosLogin::Keytab(keytab),
            protection,
            clients: Mutex::new(HashMap::new()),
        }
    }

    fn client(&self, token: &TokenProto) -> Result<std::sync::Arc<tusk_rpc::RpcClient>, String> {
        if token.service.is_empty() {
            return Err("the token names no NameNode (empty service)".into());
        }
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        Ok(clients
            .entry(token.service.clone())
            .or_insert_with(|| {
                std::sync::Arc::new(tusk_rpc::RpcClient::new(
                    token.service.clone(),
                    tusk_rpc::RpcClientOptions {
                        user: String::new(),
                        protocol: tusk_proto::protocol_names::CLIENT_PROTOCOL.into(),
                        connect_timeout: Duration::from_secs(5),
                        kerberos: Some(self.login.clone()),
                        protection: self.protection.clone(),
                        ..Default::default()
                    },
                ))
            })
            .clone())
    }
}

impl TokenRenewer for NameNodeRenewer {
    async fn renew(&self, token: &TokenProto, _now: i64) -> Result<i64, String> {
        let client = self.client(token)?;
        let reply: hdfs::RenewDelegationTokenResponseProto = client
            .call(
                "renewDelegationToken",
                &hdfs::RenewDelegationTokenRequestProto {
                    token: token.clone(),
                },
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(reply.new_expiry_time as i64)
    }

    async fn cancel(&self, token: &TokenProto) -> Result<(), String> {
        let client = self.client(token)?;
        let _: hdfs::CancelDelegationTokenResponseProto = client
            .call(
                "cancelDelegationToken",
                &hdfs::CancelDelegationTokenRequestProto {
                    token: token.clone(),
                },
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// Why an application's tokens were refused at submission (Hadoop fails the
/// application with "Failed to renew token: …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Failed to renew token: Kind: {kind}, Service: {service}: {message}")]
pub struct RenewRefused {
    pub kind: String,
    pub service: String,
    pub message: String,
}

/// Whether the renewer handles a token of this kind (Hadoop renews only tokens whose
/// kind has a managed `TokenRenewer`; the AMRMToken and the job token are the RM's own).
pub fn is_renewable(token: &TokenProto) -> bool {
    token.kind == HDFS_DELEGATION_KIND
}

#[derive(Debug)]
struct Tracked {
    token: TokenProto,
    /// The applications holding it.
    apps: BTreeSet<String>,
    /// False once one of them asked not to cancel it at the end.
    cancel_at_end: bool,
    expiry: i64,
    next_renewal: i64,
}

/// What one call to [`DelegationTokenRenewer::renew_due`] or
/// [`DelegationTokenRenewer::application_finished`] did, for the log and the tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RenewalReport {
    /// Tokens renewed (their identifiers).
    pub renewed: usize,
    /// Tokens the issuer refused to renew (no longer tracked: Hadoop stops renewing a
    /// token whose renewal failed), with the message.
    pub failed: Vec<String>,
    /// Tokens cancelled.
    pub cancelled: usize,
    /// Cancels the issuer refused, with the message.
    pub cancel_failed: Vec<String>,
}

/// The tokens of the running applications and when each is next renewed.
#[derive(Debug, Default)]
pub struct DelegationTokenRenewer {
    /// By the token's (kind, service, identifier).
    tokens: HashMap<(String, String, Vec<u8>), Tracked>,
}

fn key(token: &TokenProto) -> (String, String, Vec<u8>) {
    (
        token.kind.clone(),
        token.service.clone(),
        token.identifier.to_vec(),
    )
}

/// When to renew a token expiring at `expiry`: with a tenth of the time left to spare.
fn renewal_time(expiry: i64, now: i64) -> i64 {
    let left = expiry - now;
    if left <= 0 {
        now
    } else {
        expiry - left / 10
    }
}

impl DelegationTokenRenewer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes `app`'s tokens at submission: each renewable one not yet tracked is renewed
    /// now (refusing the application if that fails, tracking none of its tokens).
    pub async fn application_submitted(
        &mut self,
        app: &str,
        credentials: &Credentials,
        cancel_at_end: bool,
        renewer: &impl TokenRenewer,
        now: i64,
    ) -> Result<(), RenewRefused> {
        let mut fresh = Vec::new();
        for (_, token) in credentials.tokens() {
            if !is_renewable(token) || self.tokens.contains_key(&key(token)) {
                continue;
            }
            let expiry = renewer
                .renew(token, now)
                .await
                .map_err(|message| RenewRefused {
                    kind: token.kind.clone(),
                    service: token.service.clone(),
                    message,
                })?;
            fresh.push((token.clone(), expiry));
        }
        for (token, expiry) in fresh {
            self.tokens.insert(
                key(&token),
                Tracked {
                    token,
                    apps: BTreeSet::new(),
                    cancel_at_end: true,
                    expiry,
                    next_renewal: renewal_time(expiry, now),
                },
            );
        }
        for (_, token) in credentials.tokens() {
            if let Some(tracked) = self.tokens.get_mut(&key(token)) {
                tracked.apps.insert(app.to_string());
                tracked.cancel_at_end &= cancel_at_end;
            }
        }
        Ok(())
    }

    /// The earliest time a token is due for renewal.
    pub fn next_due(&self) -> Option<i64> {
        self.tokens.values().map(|t| t.next_renewal).min()
    }

    /// The expiry the issuer last gave a token.
    pub fn expiry(&self, token: &TokenProto) -> Option<i64> {
        self.tokens.get(&key(token)).map(|t| t.expiry)
    }

    /// How many tokens are tracked.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Renews every token due by `now`.
    pub async fn renew_due(&mut self, renewer: &impl TokenRenewer, now: i64) -> RenewalReport {
        let mut report = RenewalReport::default();
        let due: Vec<_> = self
            .tokens
            .iter()
            .filter(|(_, t)| t.next_renewal <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in due {
            let Some(tracked) = self.tokens.get_mut(&k) else {
                continue;
            };
            match renewer.renew(&tracked.token, now).await {
                Ok(expiry) => {
                    tracked.expiry = expiry;
                    tracked.next_renewal = renewal_time(expiry, now);
                    report.renewed += 1;
                }
                Err(message) => {
                    tracing::warn!(kind = %k.0, service = %k.1, %message, "failed to renew a delegation token; no longer renewing it");
                    report.failed.push(message);
                    self.tokens.remove(&k);
                }
            }
        }
        report
    }

    /// `app` finished: its tokens no other running application holds stop being renewed
    /// and, unless one of their applications asked otherwise, are cancelled.
    pub async fn application_finished(
        &mut self,
        app: &str,
        renewer: &impl TokenRenewer,
    ) -> RenewalReport {
        let mut report = RenewalReport::default();
        let done: Vec<_> = self
            .tokens
            .iter_mut()
            .filter_map(|(k, t)| (t.apps.remove(app) && t.apps.is_empty()).then(|| k.clone()))
            .collect();
        for k in done {
            let Some(tracked) = self.tokens.remove(&k) else {
                continue;
            };
            if !tracked.cancel_at_end {
                continue;
            }
            match renewer.cancel(&tracked.token).await {
                Ok(()) => report.cancelled += 1,
                Err(message) => {
                    tracing::warn!(kind = %k.0, service = %k.1, %message, "failed to cancel a delegation token");
                    report.cancel_failed.push(message);
                }
            }
        }
        report
    }
}

/// The renewer the ResourceManager runs: its bookkeeping and the NameNodes it calls.
/// [`Renewal::run`] renews tokens as they fall due and cancels those of ended
/// applications.
pub struct Renewal {
    renewer: NameNodeRenewer,
    state: tokio::sync::Mutex<DelegationTokenRenewer>,
    /// Woken when a submission added tokens (an earlier due time).
    added: tokio::sync::Notify,
    /// How long after an application ends its tokens are let go (and cancelled): the
    /// NodeManagers aggregate its logs with them meanwhile. Hadoop's
    /// `DelegationTokenRenewer` waits `yarn.nm.liveness-monitor.expiry-interval-ms`.
    release_delay: Duration,
}

/// The longest the renewal loop sleeps between looks.
const MAX_SLEEP: Duration = Duration::from_secs(60);

impl Renewal {
    pub fn new(renewer: NameNodeRenewer, release_delay: Duration) -> Self {
        Renewal {
            renewer,
            state: Default::default(),
            added: Default::default(),
            release_delay,
        }
    }

    /// Takes a submitted application's tokens (its AM's launch context's `tokens`, a
    /// Hadoop Credentials file): renewed now, refusing the application if one cannot
    /// be. Credentials that do not parse hold no token to renew.
    pub async fn submitted(
        &self,
        app: &str,
        tokens: &[u8],
        cancel_at_end: bool,
    ) -> Result<(), RenewRefused> {
        if tokens.is_empty() {
            return Ok(());
        }
        let Ok(credentials) = Credentials::decode(tokens) else {
            return Ok(());
        };
        let mut state = self.state.lock().await;
        state
            .application_submitted(
                app,
                &credentials,
                cancel_at_end,
                &self.renewer,
                tusk_common::now_millis() as i64,
            )
            .await?;
        drop(state);
        self.added.notify_one();
        Ok(())
    }

    /// Renews due tokens and, `release_delay` after an application ended, lets go of
    /// (and cancels) its tokens, until `shutdown`.
    pub async fn run(
        self: std::sync::Arc<Self>,
        mut ended: tokio::sync::mpsc::UnboundedReceiver<String>,
        shutdown: tusk_common::Shutdown,
    ) {
        let mut releases = std::collections::VecDeque::new();
        loop {
            let now = tusk_common::now_millis() as i64;
            let renew_at = self.state.lock().await.next_due();
            let next = renew_at
                .into_iter()
                .chain(releases.front().map(|(at, _): &(i64, String)| *at))
                .min();
            let wait = next.map_or(MAX_SLEEP, |at| {
                Duration::from_millis((at - now).max(0) as u64).min(MAX_SLEEP)
            });
            tokio::select! {
                _ = shutdown.wait() => return,
                _ = self.added.notified() => {}
                app = ended.recv() => {
                    let Some(app) = app else { return };
                    let at = tusk_common::now_millis() as i64 + self.release_delay.as_millis() as i64;
                    releases.push_back((at, app));
                }
                _ = tokio::time::sleep(wait) => {
                    let now = tusk_common::now_millis() as i64;
                    let mut state = self.state.lock().await;
                    while releases.front().is_some_and(|(at, _)| *at <= now) {
                        let Some((_, app)) = releases.pop_front() else { break };
                        let report = state.application_finished(&app, &self.renewer).await;
                        if report.cancelled > 0 {
                            tracing::info!(application = %app, cancelled = report.cancelled, "the ended application's delegation tokens cancelled");
                        }
                    }
                    let report = state.renew_due(&self.renewer, now).await;
                    if report.renewed > 0 {
                        tracing::info!(renewed = report.renewed, "delegation tokens renewed");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tusk_security::delegation_token::DelegationTokenOptions;
    use tusk_security::DelegationTokenSecretManager;

    use super::*;

    const RENEW_INTERVAL: i64 = 1_000;
    const MAX_LIFETIME: i64 = 20_000;

    /// A NameNode's secret manager with a short `dfs.namenode.delegation.token.renew-interval`,
    /// renewing and cancelling as the ResourceManager's short name `rm`.
    struct NameNode {
        secrets: DelegationTokenSecretManager,
        as_user: &'static str,
    }

    impl NameNode {
        fn new() -> Self {
            let secrets = DelegationTokenSecretManager::new(DelegationTokenOptions {
                key_update_interval: Duration::from_secs(3600),
                max_lifetime: Duration::from_millis(MAX_LIFETIME as u64),
                renew_interval: Duration::from_millis(RENEW_INTERVAL as u64),
            });
            let key = secrets.roll_master_key(0);
            secrets.apply(&key);
            NameNode {
                secrets,
                as_user: "rm",
            }
        }

        fn issue(&self, owner: &str, renewer: &str, now: i64) -> TokenProto {
            let (mut token, change) = self.secrets.create_token(owner, renewer, "", now).unwrap();
            self.secrets.apply(&change);
            token.service = "127.0.0.1:8020".into();
            token
        }

        fn valid(&self, token: &TokenProto, now: i64) -> bool {
            self.secrets.verify(&token.identifier, now).is_ok()
        }
    }

    impl TokenRenewer for NameNode {
        async fn renew(&self, token: &TokenProto, now: i64) -> Result<i64, String> {
            let (expiry, change) = self
                .secrets
                .renew_token(token, self.as_user, now)
                .map_err(|e| e.to_string())?;
            self.secrets.apply(&change);
            Ok(expiry)
        }

        async fn cancel(&self, token: &TokenProto) -> Result<(), String> {
            let (_, change) = self
                .secrets
                .cancel_token(token, self.as_user, |owner| owner.to_string())
                .map_err(|e| e.to_string())?;
            self.secrets.apply(&change);
            Ok(())
        }
    }

    fn credentials(tokens: &[&TokenProto]) -> Credentials {
        let mut credentials = Credentials::new();
        for token in tokens {
            credentials.add_token(token.service.clone(), (*token).clone());
        }
        credentials
    }

    /// A renewer holding `token` for each `(application, cancel at end, submitted at)`.
    async fn renewing(
        nn: &NameNode,
        token: &TokenProto,
        applications: &[(&str, bool, i64)],
    ) -> DelegationTokenRenewer {
        let mut renewer = DelegationTokenRenewer::new();
        let creds = credentials(&[token]);
        for &(app, cancel_at_end, now) in applications {
            renewer
                .application_submitted(app, &creds, cancel_at_end, nn, now)
                .await
                .unwrap();
        }
        renewer
    }

    /// Runs the renewer as its timer would, from `from` to `to`, waking when due.
    async fn run_until(
        renewer: &mut DelegationTokenRenewer,
        nn: &NameNode,
        from: i64,
        to: i64,
    ) -> usize {
        let mut now = from;
        let mut renewed = 0;
        while let Some(due) = renewer.next_due() {
            if due > to {
                break;
            }
            now = now.max(due);
            let report = renewer.renew_due(nn, now).await;
            assert!(report.failed.is_empty(), "{report:?}");
            renewed += report.renewed;
        }
        renewed
    }

    #[tokio::test]
    async fn a_running_application_keeps_its_token_alive_and_finishing_cancels_it() {
        let nn = NameNode::new();
        let token = nn.issue("alice", "rm", 0);
        let unrenewed = nn.issue("alice", "rm", 0);
        // Without renewal a token dies after the renew interval.
        assert!(!nn.valid(&unrenewed, 1_500));

        let mut renewer = renewing(&nn, &token, &[("application_1_0001", true, 100)]).await;
        assert_eq!(renewer.expiry(&token), Some(100 + RENEW_INTERVAL));
        // Due before it expires, with a tenth of the time left to spare.
        assert_eq!(
            renewer.next_due(),
            Some(100 + RENEW_INTERVAL - RENEW_INTERVAL / 10)
        );

        let renewed = run_until(&mut renewer, &nn, 100, 10_000).await;
        assert!(renewed >= 9, "renewed {renewed} times in 10 s");
        assert!(nn.valid(&token, 10_000), "the renewer kept it alive");
        assert!(renewer.expiry(&token).unwrap() > 10_000);

        let report = renewer
            .application_finished("application_1_0001", &nn)
            .await;
        assert_eq!(report.cancelled, 1, "{report:?}");
        assert!(renewer.is_empty());
        assert!(!nn.valid(&token, 10_000), "cancelled at the end");
        // A cancelled token is refused renewal too.
        assert!(nn.renew(&token, 10_000).await.is_err());
    }

    #[tokio::test]
    async fn cancel_at_end_false_leaves_the_token_valid() {
        let nn = NameNode::new();
        let token = nn.issue("alice", "rm", 0);
        let mut renewer = renewing(&nn, &token, &[("application_1_0001", false, 0)]).await;
        let report = renewer
            .application_finished("application_1_0001", &nn)
            .await;
        assert_eq!(report.cancelled, 0);
        assert!(renewer.is_empty(), "no longer renewed");
        assert!(nn.valid(&token, 500));
        assert!(!nn.valid(&token, 2_000), "and left to expire");
    }

    #[tokio::test]
    async fn a_token_shared_by_two_applications_is_cancelled_when_the_last_finishes() {
        let nn = NameNode::new();
        let token = nn.issue("alice", "rm", 0);
        let mut renewer = renewing(&nn, &token, &[("app_a", true, 0), ("app_b", true, 10)]).await;
        assert_eq!(renewer.len(), 1);
        assert_eq!(
            renewer.application_finished("app_a", &nn).await.cancelled,
            0
        );
        run_until(&mut renewer, &nn, 10, 3_000).await;
        assert!(nn.valid(&token, 3_000), "app_b still runs: still renewed");
        assert_eq!(
            renewer.application_finished("app_b", &nn).await.cancelled,
            1
        );
        assert!(!nn.valid(&token, 3_000));
    }

    #[tokio::test]
    async fn one_application_asking_not_to_cancel_keeps_a_shared_token() {
        let nn = NameNode::new();
        let token = nn.issue("alice", "rm", 0);
        let mut renewer = renewing(&nn, &token, &[("app_a", true, 0), ("app_b", false, 0)]).await;
        renewer.application_finished("app_a", &nn).await;
        assert_eq!(
            renewer.application_finished("app_b", &nn).await.cancelled,
            0
        );
        assert!(nn.valid(&token, 500));
    }

    #[tokio::test]
    async fn a_token_the_rm_may_not_renew_refuses_the_application() {
        let nn = NameNode::new();
        // The job client named someone else as the renewer.
        let token = nn.issue("alice", "yarn", 0);
        let mut renewer = DelegationTokenRenewer::new();
        let refused = renewer
            .application_submitted("application_1_0001", &credentials(&[&token]), true, &nn, 0)
            .await
            .unwrap_err();
        assert_eq!(refused.kind, HDFS_DELEGATION_KIND);
        assert!(
            refused
                .to_string()
                .starts_with("Failed to renew token: Kind: HDFS_DELEGATION_TOKEN"),
            "{refused}"
        );
        assert!(
            refused.message.contains("non-matching renewer yarn"),
            "{refused}"
        );
        assert!(renewer.is_empty());
    }

    #[tokio::test]
    async fn renewal_stops_at_the_max_lifetime() {
        let nn = NameNode::new();
        let token = nn.issue("alice", "rm", 0);
        let mut renewer = renewing(&nn, &token, &[("application_1_0001", true, 0)]).await;
        let mut now = 0;
        let mut failed = Vec::new();
        while let Some(due) = renewer.next_due() {
            now = now.max(due).max(now + 1);
            assert!(now < 10 * MAX_LIFETIME, "the renewer never gave up");
            failed.extend(renewer.renew_due(&nn, now).await.failed);
        }
        // Renewals never extend past the max date; the last ones fail once it passes.
        assert!(now > MAX_LIFETIME, "{now}");
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(
            failed[0].contains("tried to renew an expired token"),
            "{failed:?}"
        );
        assert!(!nn.valid(&token, now));
    }

    #[tokio::test]
    async fn tokens_of_other_kinds_are_not_renewed() {
        let nn = NameNode::new();
        let amrm = TokenProto {
            identifier: vec![1, 2, 3].into(),
            password: vec![4].into(),
            kind: "YARN_AM_RM_TOKEN".into(),
            service: String::new(),
        };
        let renewer = renewing(&nn, &amrm, &[("application_1_0001", true, 0)]).await;
        assert!(renewer.is_empty());
    }
}

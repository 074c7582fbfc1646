//! `getDelegationToken`, `renewDelegationToken`, `cancelDelegationToken`, and the
//! master keys behind them, as HDFS's `FSNamesystem` runs its delegation token secret
//! manager: only under Kerberos (without it HDFS runs none and answers no token), only
//! for callers who proved themselves with a ticket (a token cannot beget a token), every
//! change in the edit log (`OP_UPDATE_MASTER_KEY`, `OP_GET_`, `OP_RENEW_`,
//! `OP_CANCEL_DELEGATION_TOKEN`) and the keys and live tokens in the image, so tokens
//! survive a restart until they expire.

use tusk_proto::common::TokenProto;
use tusk_proto::internal::{
    edit_record::Op, CancelDelegationTokenOp, DelegationKeyRecord, DelegationTokenRecord, FsImage,
};
use tusk_security::delegation_token::{
    DelegationKey, DelegationTokenChange, DelegationTokenIdentifier, DelegationTokenState,
};
use tusk_security::kerberos::Principal;
use tusk_security::{InvalidToken, TokenAuthority, TokenGrant};

use crate::error::{NameNodeError, Result};
use crate::namesystem::{Logged, Namesystem, State};

/// Who asks, as the RPC server authenticated them.
#[derive(Clone, Copy, Debug)]
pub struct TokenCaller<'a> {
    /// The effective user's short name.
    pub user: &'a str,
    /// The Kerberos principal the connection authenticated as; `None` under SIMPLE or
    /// TOKEN authentication.
    pub principal: Option<&'a str>,
    /// The principal acts for `user` (a proxy user).
    pub proxied: bool,
}

impl Namesystem {
    /// `getDelegationToken`: a token for the caller, renewable by `renewer`; `None`
    /// when Kerberos is off, as HDFS answers without a running secret manager.
    pub fn get_delegation_token(
        &self,
        caller: TokenCaller<'_>,
        renewer: &str,
        now: i64,
    ) -> Result<Logged<Option<TokenProto>>> {
        if self.options.kerberos.is_none() {
            return Ok(Logged::new(None, 0));
        }
        let principal = kerberos_only(caller, "issued")?;
        let (owner, real_user) = if caller.proxied {
            (caller.user.to_string(), principal.to_string())
        } else {
            (principal.to_string(), String::new())
        };
        let renewer = self.short_name(renewer);
        let mut st = self.write();
        let mut txid = 0;
        if st.delegation_tokens.needs_new_key(now) {
            let key = st.delegation_tokens.roll_master_key(now);
            txid = self.apply_and_log(&mut st, change_op(&key))?;
        }
        let (token, issued) = st
            .delegation_tokens
            .create_token(&owner, &renewer, &real_user, now)?;
        txid = txid.max(self.apply_and_log(&mut st, change_op(&issued))?);
        Ok(Logged::new(Some(token), txid))
    }

    /// `renewDelegationToken` by its renewer (who must hold a ticket): the new expiry
    /// time.
    pub fn renew_delegation_token(
        &self,
        caller: TokenCaller<'_>,
        token: &TokenProto,
        now: i64,
    ) -> Result<Logged<i64>> {
        kerberos_only(caller, "renewed")?;
        let mut st = self.write();
        let (expiry, renewed) = st.delegation_tokens.renew_token(token, caller.user, now)?;
        let txid = self.apply_and_log(&mut st, change_op(&renewed))?;
        Ok(Logged::new(expiry, txid))
    }

    /// `cancelDelegationToken` by the token's owner or renewer.
    pub fn cancel_delegation_token(
        &self,
        caller: TokenCaller<'_>,
        token: &TokenProto,
    ) -> Result<Logged<()>> {
        let mut st = self.write();
        let (_, cancelled) = st
            .delegation_tokens
            .cancel_token(token, caller.user, |owner| self.short_name(owner))?;
        let txid = self.apply_and_log(&mut st, change_op(&cancelled))?;
        Ok(Logged::new((), txid))
    }

    /// Rolls the master key when it is due and drops expired tokens (the key roller's
    /// tick); nothing without Kerberos. A refusal (safe mode) waits for the next tick.
    pub fn roll_delegation_keys(&self, now: i64) -> Result<()> {
        if self.options.kerberos.is_none() {
            return Ok(());
        }
        let mut st = self.write();
        st.delegation_tokens.remove_expired(now);
        if st.delegation_tokens.needs_new_key(now) {
            let key = st.delegation_tokens.roll_master_key(now);
            self.apply_and_log(&mut st, change_op(&key))?;
        }
        Ok(())
    }

    /// The user a token's owner or a renewer names, by `hadoop.security.auth_to_local`
    /// (`alice@REALM` → `alice`); a plain name stays as it is.
    pub fn short_name(&self, name: &str) -> String {
        let Some(identity) = &self.options.kerberos else {
            return name.to_string();
        };
        match Principal::parse(name) {
            Ok(p) if name.contains('@') || name.contains('/') => identity
                .auth_to_local
                .short_name(&p, &p.realm)
                .unwrap_or_else(|_| name.to_string()),
            _ => name.to_string(),
        }
    }
}

/// The caller's principal, when it authenticated with a ticket; HDFS's refusal
/// otherwise.
fn kerberos_only<'a>(caller: TokenCaller<'a>, what: &str) -> Result<&'a str> {
    caller.principal.ok_or_else(|| {
        NameNodeError::Io(std::io::Error::other(format!(
            "Delegation Token can be {what} only with kerberos or web authentication"
        )))
    })
}

/// The edit op of a secret manager change.
fn change_op(change: &DelegationTokenChange) -> Op {
    match change {
        DelegationTokenChange::MasterKey(k) => Op::UpdateMasterKey(DelegationKeyRecord {
            key_id: k.key_id,
            expiry_date: k.expiry_date,
            key: k.bytes.clone().into(),
        }),
        DelegationTokenChange::Issued { id, renew_date } => {
            Op::GetDelegationToken(token_record(id, *renew_date))
        }
        DelegationTokenChange::Renewed { id, renew_date } => {
            Op::RenewDelegationToken(token_record(id, *renew_date))
        }
        DelegationTokenChange::Cancelled(id) => {
            Op::CancelDelegationToken(CancelDelegationTokenOp {
                identifier: id.to_bytes().into(),
            })
        }
    }
}

fn token_record(id: &DelegationTokenIdentifier, renew_date: i64) -> DelegationTokenRecord {
    DelegationTokenRecord {
        identifier: id.to_bytes().into(),
        renew_date,
    }
}

fn identifier(bytes: &[u8]) -> Result<DelegationTokenIdentifier> {
    DelegationTokenIdentifier::parse(bytes).map_err(|e| NameNodeError::InvalidToken {
        message: format!("a delegation token record the edit log holds does not read: {e}"),
    })
}

fn key(record: &DelegationKeyRecord) -> DelegationKey {
    DelegationKey {
        key_id: record.key_id,
        expiry_date: record.expiry_date,
        bytes: record.key.to_vec(),
    }
}

/// What the RPC server checks a delegation token against (SASL `TOKEN`): the secret
/// manager's password, and the owner's short name as the connection's user.
pub struct DelegationTokenAuthority(pub std::sync::Arc<Namesystem>);

impl TokenAuthority for DelegationTokenAuthority {
    fn grant(&self, identifier: &[u8]) -> std::result::Result<TokenGrant, InvalidToken> {
        let now = tusk_common::now_millis() as i64;
        let grant = self.0.read().delegation_tokens.verify(identifier, now)?;
        Ok(TokenGrant {
            user: self.0.short_name(&grant.user),
            ..grant
        })
    }
}

impl State {
    /// Applies a delegation token op (made here or replayed).
    pub(in crate::namesystem) fn apply_delegation_op(&mut self, op: &Op) -> Result<()> {
        let change = match op {
            Op::UpdateMasterKey(k) => DelegationTokenChange::MasterKey(key(k)),
            Op::GetDelegationToken(t) => DelegationTokenChange::Issued {
                id: identifier(&t.identifier)?,
                renew_date: t.renew_date,
            },
            Op::RenewDelegationToken(t) => DelegationTokenChange::Renewed {
                id: identifier(&t.identifier)?,
                renew_date: t.renew_date,
            },
            Op::CancelDelegationToken(c) => {
                DelegationTokenChange::Cancelled(identifier(&c.identifier)?)
            }
            _ => return Ok(()),
        };
        self.delegation_tokens.apply(&change);
        Ok(())
    }

    /// Takes the image's keys and tokens into the secret manager.
    pub(in crate::namesystem) fn restore_delegation_tokens(&mut self, image: &FsImage) {
        let tokens = image
            .delegation_tokens
            .iter()
            .filter_map(|t| {
                DelegationTokenIdentifier::parse(&t.identifier)
                    .ok()
                    .map(|id| (id, t.renew_date))
            })
            .collect();
        self.delegation_tokens.restore(&DelegationTokenState {
            keys: image.delegation_keys.iter().map(key).collect(),
            tokens,
            current_key_id: image.delegation_current_key_id,
            sequence_number: image.delegation_sequence_number,
        });
    }
}

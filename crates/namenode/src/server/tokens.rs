//! ClientNamenodeProtocol's delegation token calls: getDelegationToken,
//! renewDelegationToken, cancelDelegationToken.

use tusk_proto::hdfs as h;
use tusk_rpc::CallContext;

use super::{logged, Call, Method};
use crate::namesystem::TokenCaller;

pub(super) const METHODS: &[Method] = &[
    ("getDelegationToken", |Call { fsn, ctx, user }, body| {
        logged(body, |r: h::GetDelegationTokenRequestProto| {
            let issued = fsn.get_delegation_token(caller(ctx, user), &r.renewer, now())?;
            Ok(issued.map(|token| h::GetDelegationTokenResponseProto { token }))
        })
    }),
    ("renewDelegationToken", |Call { fsn, ctx, user }, body| {
        logged(body, |r: h::RenewDelegationTokenRequestProto| {
            let expiry = fsn.renew_delegation_token(caller(ctx, user), &r.token, now())?;
            Ok(expiry.map(|t| h::RenewDelegationTokenResponseProto {
                new_expiry_time: t.max(0) as u64,
            }))
        })
    }),
    ("cancelDelegationToken", |Call { fsn, ctx, user }, body| {
        logged(body, |r: h::CancelDelegationTokenRequestProto| {
            Ok(fsn
                .cancel_delegation_token(caller(ctx, user), &r.token)?
                .map(|()| h::CancelDelegationTokenResponseProto {}))
        })
    }),
];

/// Milliseconds since the epoch, as the secret manager counts time.
fn now() -> i64 {
    tusk_common::now_millis() as i64
}

/// The caller as the secret manager needs it: a Kerberos principal only when the
/// connection authenticated with a ticket (not with a token).
fn caller<'a>(ctx: &'a CallContext, user: &'a str) -> TokenCaller<'a> {
    TokenCaller {
        user,
        principal: ctx.principal.as_deref().filter(|_| ctx.token.is_none()),
        proxied: ctx.ugi.contains("(auth:PROXY)"),
    }
}

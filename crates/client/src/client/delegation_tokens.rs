//! HDFS delegation tokens: `getDelegationToken`, `renewDelegationToken`,
//! `cancelDelegationToken` (what Hadoop's `hdfs fetchdt` and job submission call).

use tusk_proto::common::TokenProto;
use tusk_proto::hdfs as h;

use crate::client::DfsClient;
use crate::error::Result;

impl DfsClient {
    /// A delegation token renewable by `renewer`, its service set to this NameNode's
    /// address (`ha-hdfs:NS` for an HA nameservice) as Hadoop's client sets it; `None`
    /// when the NameNode runs without Kerberos (it issues none then).
    pub async fn get_delegation_token(&self, renewer: &str) -> Result<Option<TokenProto>> {
        let r: h::GetDelegationTokenResponseProto = self
            .call(
                "getDelegationToken",
                &h::GetDelegationTokenRequestProto {
                    renewer: renewer.to_string(),
                },
            )
            .await?;
        Ok(r.token.map(|token| TokenProto {
            service: self.options().token_service(),
            ..token
        }))
    }

    /// Renews `token` (the caller must be its renewer); its new expiry time in
    /// milliseconds since the epoch.
    pub async fn renew_delegation_token(&self, token: &TokenProto) -> Result<u64> {
        let r: h::RenewDelegationTokenResponseProto = self
            .call(
                "renewDelegationToken",
                &h::RenewDelegationTokenRequestProto {
                    token: token.clone(),
                },
            )
            .await?;
        Ok(r.new_expiry_time)
    }

    /// Cancels `token` (the caller must be its owner or renewer).
    pub async fn cancel_delegation_token(&self, token: &TokenProto) -> Result<()> {
        let _: h::CancelDelegationTokenResponseProto = self
            .call(
                "cancelDelegationToken",
                &h::CancelDelegationTokenRequestProto {
                    token: token.clone(),
                },
            )
            .await?;
        Ok(())
    }
}

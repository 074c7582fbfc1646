//! [`super`] without the `kerberos` feature: the same types, each refusing with
//! [`KerberosError::NotBuilt`].

use std::path::Path;

use super::{GssapiStep, KerberosError, KerberosLogin, Principal};
use crate::protection::Protection;

/// A service's identity; never made in a build without Kerberos.
pub struct ServiceCredentials {
    pub principal: Principal,
}

impl ServiceCredentials {
    pub fn from_keytab(_: Principal, _: &Path) -> Result<Self, KerberosError> {
        Err(KerberosError::NotBuilt)
    }
}

/// The server's side of SASL GSSAPI; refuses every token.
pub struct GssapiServer;

impl GssapiServer {
    pub fn new(_: &ServiceCredentials, _: &[Protection]) -> Self {
        GssapiServer
    }

    pub fn into_layer(self) -> Option<SecurityLayer> {
        None
    }

    pub fn step(&mut self, _: &[u8]) -> Result<GssapiStep, KerberosError> {
        Err(KerberosError::NotBuilt)
    }
}

/// The client's side of SASL GSSAPI; cannot be made.
pub struct GssapiClient;

impl GssapiClient {
    pub fn new(
        _: &str,
        _: &str,
        _: &KerberosLogin,
        _: &[Protection],
    ) -> Result<Self, KerberosError> {
        Err(KerberosError::NotBuilt)
    }

    pub fn into_layer(self) -> Option<SecurityLayer> {
        None
    }

    pub fn principal(&self) -> Result<String, KerberosError> {
        Err(KerberosError::NotBuilt)
    }

    pub fn start(&mut self) -> Result<Vec<u8>, KerberosError> {
        Err(KerberosError::NotBuilt)
    }

    pub fn respond(&mut self, _: &[u8]) -> Result<Vec<u8>, KerberosError> {
        Err(KerberosError::NotBuilt)
    }
}

/// A connection's security layer; never made in a build without Kerberos.
pub struct SecurityLayer {
    pub protection: Protection,
}

impl SecurityLayer {
    pub fn max_plain(&self) -> usize {
        usize::MAX
    }

    pub fn wrap(&mut self, _: &[u8]) -> Result<Vec<u8>, KerberosError> {
        Err(KerberosError::NotBuilt)
    }

    pub fn unwrap(&mut self, _: &[u8]) -> Result<Vec<u8>, KerberosError> {
        Err(KerberosError::NotBuilt)
    }
}

/// SPNEGO over HTTP; refuses every token.
pub fn accept_negotiate(
    _: &ServiceCredentials,
    _: &[u8],
) -> Result<(String, Option<Vec<u8>>), KerberosError> {
    Err(KerberosError::NotBuilt)
}

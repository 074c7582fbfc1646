//! [`super`] without the `kerberos` feature: the same types, each refusing with
//! [`KerberosError::NotBuilt`].

use std::path::Path;

use super::{GssapiStep, KerberosError, KerberosLogin, Principal};

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
    pub fn new(_: &ServiceCredentials) -> Self {
        GssapiServer
    }

    pub fn step(&mut self, _: &[u8]) -> Result<GssapiStep, KerberosError> {
        Err(KerberosError::NotBuilt)
    }
}

/// The client's side of SASL GSSAPI; cannot be made.
pub struct GssapiClient;

impl GssapiClient {
    pub fn new(_: &str, _: &str, _: &KerberosLogin) -> Result<Self, KerberosError> {
        Err(KerberosError::NotBuilt)
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

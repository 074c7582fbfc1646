//! The GSS-API side of [`super`]: keytab credentials and both sides of SASL GSSAPI over
//! the system's GSS-API library (MIT krb5), through the `libgssapi` binding.

use std::ffi::{CStr, CString};
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use libgssapi::context::{ClientCtx, CtxFlags, SecurityContext, ServerCtx};
use libgssapi::credential::Cred;
use libgssapi::name::Name;
use libgssapi::oid::{GSS_MECH_KRB5, GSS_NT_HOSTBASED_SERVICE};

use super::{GssapiStep, KerberosError, KerberosLogin, Principal};
use crate::protection::Protection;

/// The largest wrapped message this side takes, as it tells its peer (Java's SASL
/// default, `javax.security.sasl.maxbuffer`).
const MAX_BUFFER: usize = 65536;

fn gss(e: libgssapi::error::Error) -> KerberosError {
    KerberosError::Gss(e.to_string())
}

/// A service's identity and the acceptor credentials its keytab holds.
pub struct ServiceCredentials {
    pub principal: Principal,
    cred: Cred,
}

impl ServiceCredentials {
    /// Takes `principal`'s keys from `keytab` (any key of the keytab is accepted for a
    /// ticket to it, as a Java service's `Krb5LoginModule` with `isInitiator=false`
    /// would).
    pub fn from_keytab(principal: Principal, keytab: &Path) -> Result<Self, KerberosError> {
        let cred = acquire_from(&[(c"keytab", c_path(keytab)?)], libgssapi_sys::GSS_C_ACCEPT)?;
        Ok(ServiceCredentials { principal, cred })
    }
}

/// `gss_acquire_cred_from` with a credential store of `(key, value)` pairs (MIT's
/// `keytab`, `client_keytab`, `ccache`), without changing the process's environment.
#[allow(unsafe_code)]
fn acquire_from(store: &[(&CStr, CString)], usage: u32) -> Result<Cred, KerberosError> {
    use libgssapi_sys::{
        gss_acquire_cred_from, gss_cred_id_t, gss_key_value_element_desc, gss_key_value_set_desc,
        _GSS_C_INDEFINITE,
    };
    let mut elements: Vec<gss_key_value_element_desc> = store
        .iter()
        .map(|(key, value)| gss_key_value_element_desc {
            key: key.as_ptr(),
            value: value.as_ptr(),
        })
        .collect();
    let set = gss_key_value_set_desc {
        count: elements.len() as u32,
        elements: elements.as_mut_ptr(),
    };
    let mut minor = 0u32;
    let mut cred: gss_cred_id_t = ptr::null_mut();
    // SAFETY: every pointer passed lives until the call returns (`elements`, `set`, the
    // C strings of `store`); a null name and OID set mean "the store's" and "the
    // default"; the out parameters we do not want are null, which the call allows.
    let major = unsafe {
        gss_acquire_cred_from(
            &mut minor,
            ptr::null_mut(),
            _GSS_C_INDEFINITE,
            ptr::null_mut(),
            usage as i32,
            &set,
            &mut cred,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if major != 0 {
        return Err(gss(libgssapi::error::Error {
            major: libgssapi::error::MajorFlags::from_bits_retain(major),
            minor,
        }));
    }
    // SAFETY: the call succeeded, so `cred` is a credential we own; `Cred` releases it.
    Ok(unsafe { Cred::from_c(cred) })
}

fn c_path(path: &Path) -> Result<CString, KerberosError> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| KerberosError::Gss(format!("bad path {}", path.display())))
}

/// Initiator credentials for `login`: the default credential cache's, or a keytab's
/// (its tickets kept in a memory cache of this process).
fn initiator(login: &KerberosLogin) -> Result<Option<Cred>, KerberosError> {
    match login {
        KerberosLogin::TicketCache => Ok(None),
        KerberosLogin::Keytab(keytab) => {
            static CACHES: AtomicU64 = AtomicU64::new(0);
            let cache = format!(
                "MEMORY:tusk-{}-{}",
                std::process::id(),
                CACHES.fetch_add(1, Ordering::Relaxed)
            );
            let store = [
                (c"client_keytab", c_path(keytab)?),
                (c"ccache", CString::new(cache).expect("no NUL")),
            ];
            acquire_from(&store, libgssapi_sys::GSS_C_INITIATE).map(Some)
        }
    }
}

enum Stage {
    /// GSS context tokens.
    Context,
    /// The context is complete and its last token sent; the client's (empty) answer
    /// brings the security-layer offer.
    ContextDone,
    /// The offer was sent; the client's choice comes next.
    Offered,
    Done,
}

/// The server's side of one SASL GSSAPI exchange.
pub struct GssapiServer {
    ctx: ServerCtx,
    stage: Stage,
    /// The layers offered.
    offered: Vec<Protection>,
    /// The layer the client chose, and the largest message it takes.
    chosen: Option<(Protection, usize)>,
}

impl GssapiServer {
    /// An exchange offering the security layers `offered` (at least one).
    pub fn new(credentials: &ServiceCredentials, offered: &[Protection]) -> Self {
        GssapiServer {
            ctx: ServerCtx::new(Some(credentials.cred.clone())),
            stage: Stage::Context,
            offered: offered.to_vec(),
            chosen: None,
        }
    }

    /// After authentication: the layer that wraps the connection's messages from now
    /// on; `None` for `authentication` (messages go as they are).
    pub fn into_layer(self) -> Option<SecurityLayer> {
        SecurityLayer::chosen(Box::new(self.ctx), self.chosen)
    }

    /// Takes one token of the client's (INITIATE's, then each RESPONSE's).
    pub fn step(&mut self, token: &[u8]) -> Result<GssapiStep, KerberosError> {
        match self.stage {
            Stage::Context => {
                let out = self.ctx.step(token, None).map_err(gss)?;
                if !self.ctx.is_complete() {
                    return Ok(GssapiStep::Challenge(
                        out.map(|b| b.to_vec()).unwrap_or_default(),
                    ));
                }
                match out {
                    // The context's last token (the AP-REP of mutual authentication)
                    // goes first; the offer follows the client's empty answer.
                    Some(out) if !out.is_empty() => {
                        self.stage = Stage::ContextDone;
                        Ok(GssapiStep::Challenge(out.to_vec()))
                    }
                    _ => self.offer(),
                }
            }
            Stage::ContextDone => self.offer(),
            Stage::Offered => self.choice(token),
            Stage::Done => Err(KerberosError::Protocol(
                "negotiation already complete".into(),
            )),
        }
    }

    /// The security layers offered and the largest message this side takes (zero when
    /// no layer but "none" is offered, as RFC 4752 asks); wrapped in the context.
    fn offer(&mut self) -> Result<GssapiStep, KerberosError> {
        let bits = self.offered.iter().fold(0, |b, p| b | p.bit());
        let max = if bits == Protection::Authentication.bit() {
            0
        } else {
            MAX_BUFFER
        };
        let offer = self
            .ctx
            .wrap(false, &layer_message(bits, max))
            .map_err(gss)?;
        self.stage = Stage::Offered;
        Ok(GssapiStep::Challenge(offer.to_vec()))
    }

    fn choice(&mut self, token: &[u8]) -> Result<GssapiStep, KerberosError> {
        let plain = self.ctx.unwrap(token).map_err(gss)?;
        if plain.len() < 4 {
            return Err(KerberosError::Protocol(
                "final handshake message too short".into(),
            ));
        }
        let Some(chosen) = self.offered.iter().copied().find(|p| p.bit() == plain[0]) else {
            return Err(KerberosError::Protocol(format!(
                "client selected unsupported protection: {}",
                plain[0]
            )));
        };
        self.chosen = Some((chosen, max_size(&plain)));
        let principal = self.ctx.source_name().map_err(gss)?.to_string();
        let authz = String::from_utf8_lossy(&plain[4..]);
        if !authz.is_empty() && authz != principal {
            return Err(KerberosError::Protocol(format!(
                "Authorization failure: {principal} may not act as {authz}"
            )));
        }
        self.stage = Stage::Done;
        Ok(GssapiStep::Authenticated { principal })
    }
}

/// The client's side of one SASL GSSAPI exchange, with the credentials of the
/// default credential cache (`kinit`'s, or `KRB5CCNAME`) or of a keytab.
pub struct GssapiClient {
    ctx: ClientCtx,
    stage: Stage,
    /// The layers this client accepts.
    wanted: Vec<Protection>,
    /// The layer it chose, and the largest message the server takes.
    chosen: Option<(Protection, usize)>,
}

impl GssapiClient {
    /// For service `protocol` (a principal's primary, `nn`) on `server_id` (its
    /// instance, the host), as Hadoop's NEGOTIATE names them.
    /// `wanted`: the security layers it accepts; it takes the strongest the server
    /// offers.
    pub fn new(
        protocol: &str,
        server_id: &str,
        login: &KerberosLogin,
        wanted: &[Protection],
    ) -> Result<Self, KerberosError> {
        let target = Name::new(
            format!("{protocol}@{server_id}").as_bytes(),
            Some(GSS_NT_HOSTBASED_SERVICE),
        )
        .map_err(gss)?;
        let ctx = ClientCtx::new(
            initiator(login)?,
            target,
            CtxFlags::GSS_C_MUTUAL_FLAG | CtxFlags::GSS_C_SEQUENCE_FLAG,
            Some(GSS_MECH_KRB5),
        );
        Ok(GssapiClient {
            ctx,
            stage: Stage::Context,
            wanted: wanted.to_vec(),
            chosen: None,
        })
    }

    /// After authentication: the layer that wraps the connection's messages from now
    /// on; `None` for `authentication`.
    pub fn into_layer(self) -> Option<SecurityLayer> {
        SecurityLayer::chosen(Box::new(self.ctx), self.chosen)
    }

    /// The client's own principal (`alice@REALM`), from its credentials.
    pub fn principal(&self) -> Result<String, KerberosError> {
        Ok(self.ctx.source_name().map_err(gss)?.to_string())
    }

    /// The first token (INITIATE's). May talk to the KDC: call it off the async runtime.
    pub fn start(&mut self) -> Result<Vec<u8>, KerberosError> {
        let out = self.ctx.step(None, None).map_err(gss)?;
        Ok(out.map(|b| b.to_vec()).unwrap_or_default())
    }

    /// The answer to one server challenge.
    pub fn respond(&mut self, challenge: &[u8]) -> Result<Vec<u8>, KerberosError> {
        match self.stage {
            Stage::Context if !self.ctx.is_complete() => {
                let out = self.ctx.step(Some(challenge), None).map_err(gss)?;
                if self.ctx.is_complete() {
                    self.stage = Stage::ContextDone;
                }
                Ok(out.map(|b| b.to_vec()).unwrap_or_default())
            }
            Stage::Context | Stage::ContextDone => {
                // The challenge is the server's security-layer offer.
                let offer = self.ctx.unwrap(challenge).map_err(gss)?;
                let chosen = self
                    .wanted
                    .iter()
                    .copied()
                    .filter(|p| offer.len() == 4 && offer[0] & p.bit() != 0)
                    .max()
                    .ok_or_else(|| {
                        KerberosError::Protocol(
                            "the server offers no protection this client accepts".into(),
                        )
                    })?;
                self.chosen = Some((chosen, max_size(&offer)));
                let max = match chosen {
                    Protection::Authentication => 0,
                    _ => MAX_BUFFER,
                };
                let choice = self
                    .ctx
                    .wrap(false, &layer_message(chosen.bit(), max))
                    .map_err(gss)?;
                self.stage = Stage::Done;
                Ok(choice.to_vec())
            }
            Stage::Offered | Stage::Done => Err(KerberosError::Protocol(
                "negotiation already complete".into(),
            )),
        }
    }
}

/// SPNEGO over HTTP (RFC 4559): accepts one `Authorization: Negotiate` token with
/// `credentials` (the `HTTP/host` keytab's); the client's principal and the token to
/// send back in `WWW-Authenticate: Negotiate` (mutual authentication), if any. The
/// token may be SPNEGO's (curl, Java's `AuthenticatedURL`) or a plain krb5 one: the
/// library takes either with credentials for the default mechanisms. Kerberos
/// completes in one round; a context that asks for more is refused (HTTP keeps no
/// state between requests). May call the replay cache: call it off the async runtime.
pub fn accept_negotiate(
    credentials: &ServiceCredentials,
    token: &[u8],
) -> Result<(String, Option<Vec<u8>>), KerberosError> {
    let mut ctx = ServerCtx::new(Some(credentials.cred.clone()));
    let out = ctx.step(token, None).map_err(gss)?;
    if !ctx.is_complete() {
        return Err(KerberosError::Protocol(
            "the Negotiate exchange needs another round, which HTTP does not keep".into(),
        ));
    }
    let principal = ctx.source_name().map_err(gss)?.to_string();
    Ok((principal, out.map(|b| b.to_vec()).filter(|b| !b.is_empty())))
}

/// RFC 4752's layer message: the layer bits, then the largest message size in three
/// bytes (network order).
fn layer_message(bits: u8, max: usize) -> [u8; 4] {
    let max = max.min(0xFF_FFFF) as u32;
    let [_, a, b, c] = max.to_be_bytes();
    [bits, a, b, c]
}

fn max_size(message: &[u8]) -> usize {
    u32::from_be_bytes([0, message[1], message[2], message[3]]) as usize
}

/// The security layer of an authenticated connection: wraps what this side sends and
/// unwraps what it receives, with an integrity check (`integrity`) and encryption
/// (`privacy`). One per connection; its sequence numbers make the order matter.
pub struct SecurityLayer {
    ctx: Box<dyn SecurityContext + Send>,
    pub protection: Protection,
    /// The largest wrapped message the peer takes (0: no limit told).
    peer_max: usize,
}

impl SecurityLayer {
    /// The layer of an authenticated context, when one beyond `authentication` was
    /// chosen (with the largest message the peer takes).
    fn chosen(
        ctx: Box<dyn SecurityContext + Send>,
        chosen: Option<(Protection, usize)>,
    ) -> Option<SecurityLayer> {
        match chosen {
            Some((Protection::Authentication, _)) | None => None,
            Some((protection, peer_max)) => Some(SecurityLayer {
                ctx,
                protection,
                peer_max,
            }),
        }
    }

    /// The largest plain chunk to wrap at once so the peer's limit holds.
    pub fn max_plain(&self) -> usize {
        match self.peer_max {
            0 => usize::MAX,
            // A wrapped token adds a header, a checksum and padding: well under 1 KiB.
            n => n.saturating_sub(1024).max(1024),
        }
    }

    pub fn wrap(&mut self, plain: &[u8]) -> Result<Vec<u8>, KerberosError> {
        let encrypt = self.protection == Protection::Privacy;
        Ok(self.ctx.wrap(encrypt, plain).map_err(gss)?.to_vec())
    }

    pub fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, KerberosError> {
        Ok(self.ctx.unwrap(token).map_err(gss)?.to_vec())
    }
}

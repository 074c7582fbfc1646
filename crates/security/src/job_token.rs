//! MapReduce's job token (kind `mapreduce.job`) and the HMAC its password keys on the
//! shuffle (Hadoop's `JobTokenSecretManager` and `SecureShuffleUtils`).
//!
//! The job token's identifier is the job id as `Text`; its password is random bytes
//! the job's client made. The password is used as it is as the key of HMAC-SHA1: a
//! reduce sends `UrlHash` = base64(HMAC(password, message)) with its fetch, where the
//! message is the shuffle server's port in decimal followed by the request's path, `?`
//! and its query, as they appear on the request line (`SecureShuffleUtils.buildMsgFrom`);
//! the server answers `ReplyHash` = base64(HMAC(password, the UrlHash's characters)).
//! Base64 is the standard alphabet with padding, on one line.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha1::Sha1;

use crate::error::WritableError;
use crate::writable::{read_text, write_text};

/// The kind of a MapReduce job token (`JobTokenIdentifier.KIND_NAME`).
pub const JOB_TOKEN_KIND: &str = "mapreduce.job";

type HmacSha1 = Hmac<Sha1>;

/// A job token's identifier: the job it authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobTokenIdentifier {
    /// `job_<cluster timestamp>_<sequence>`.
    pub job_id: String,
}

impl JobTokenIdentifier {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + self.job_id.len());
        write_text(&mut out, &self.job_id);
        out
    }

    pub fn decode(mut bytes: &[u8]) -> Result<JobTokenIdentifier, WritableError> {
        Ok(JobTokenIdentifier {
            job_id: read_text(&mut bytes)?,
        })
    }
}

/// `SecureShuffleUtils.buildMsgFrom`: what a shuffle `UrlHash` signs, for a request to
/// the server on `port` whose request line names `target` (`/mapOutput?...`, as sent).
pub fn shuffle_message(port: u16, target: &str) -> String {
    if target.contains('?') {
        format!("{port}{target}")
    } else {
        // Java's URL has a null query then, which the message spells out.
        format!("{port}{target}?null")
    }
}

/// `SecureShuffleUtils.generateHash`: base64(HMAC-SHA1(password, message)).
pub fn shuffle_hash(password: &[u8], message: &[u8]) -> String {
    STANDARD.encode(hmac(password, message).finalize().into_bytes())
}

/// `SecureShuffleUtils.verifyReply`: whether `hash` (base64) is the HMAC of `message`
/// under `password`. Compared in constant time.
pub fn verify_shuffle_hash(password: &[u8], message: &[u8], hash: &str) -> bool {
    match STANDARD.decode(hash.trim()) {
        Ok(raw) => hmac(password, message).verify_slice(&raw).is_ok(),
        Err(_) => false,
    }
}

fn hmac(password: &[u8], message: &[u8]) -> HmacSha1 {
    let mut mac = HmacSha1::new_from_slice(password).expect("HMAC takes any key length");
    mac.update(message);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked out with Hadoop 3.4.2's `SecureShuffleUtils.hashFromString`,
    /// `buildMsgFrom(URL)` and `generateHash` for the URL
    /// `http://nm1:13562/mapOutput?job=...&reduce=3&map=...,...` and a job token whose
    /// password is `job-token-password`.
    #[test]
    fn hashes_match_hadoops_secure_shuffle_utils() {
        let password = b"job-token-password";
        let target = "/mapOutput?job=job_1700000000000_0001&reduce=3&map=attempt_1700000000000_0001_m_000000_0,attempt_1700000000000_0001_m_000001_0";
        let message = shuffle_message(13562, target);
        assert_eq!(message, format!("13562{target}"));
        let url_hash = shuffle_hash(password, message.as_bytes());
        assert_eq!(url_hash, "fg5Nh5Leuph263GWkdaMIcszPt0=");
        assert!(verify_shuffle_hash(password, message.as_bytes(), &url_hash));
        assert!(!verify_shuffle_hash(
            b"another-password",
            message.as_bytes(),
            &url_hash
        ));
        assert!(!verify_shuffle_hash(password, message.as_bytes(), "%%%"));
        assert_eq!(
            shuffle_hash(password, url_hash.as_bytes()),
            "lD/JPnLFlCSH2p+6FXvQrFcT92Y="
        );
    }

    #[test]
    fn identifier_is_the_job_id_as_text() {
        let id = JobTokenIdentifier {
            job_id: "job_1700000000000_0001".into(),
        };
        let bytes = id.encode();
        assert_eq!(bytes[0], 22);
        assert_eq!(JobTokenIdentifier::decode(&bytes).unwrap(), id);
    }
}

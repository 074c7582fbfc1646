//! [`Protection`]: the quality of protection a SASL exchange negotiates, for both
//! mechanisms Hadoop runs (GSSAPI on Kerberos, DIGEST-MD5 on tokens).

/// What a SASL security layer (GSSAPI's or DIGEST-MD5's) does to every message after
/// authentication (`hadoop.rpc.protection`, `dfs.data.transfer.protection`): nothing,
/// an integrity check, or encryption as well.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Protection {
    Authentication,
    Integrity,
    Privacy,
}

impl Protection {
    /// RFC 4752's bit for this layer.
    pub fn bit(self) -> u8 {
        match self {
            Protection::Authentication => 1,
            Protection::Integrity => 2,
            Protection::Privacy => 4,
        }
    }

    /// `hadoop.rpc.protection`'s comma-separated list (`authentication`, `integrity`,
    /// `privacy`); an empty list is `authentication`.
    pub fn parse_list(text: &str) -> Result<Vec<Protection>, String> {
        let mut list = Vec::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            list.push(match word.to_ascii_lowercase().as_str() {
                "authentication" => Protection::Authentication,
                "integrity" => Protection::Integrity,
                "privacy" => Protection::Privacy,
                _ => return Err(format!("unknown protection {word:?}")),
            });
        }
        if list.is_empty() {
            list.push(Protection::Authentication);
        }
        Ok(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protections_parse_as_hadoop_rpc_protection_lists() {
        assert_eq!(
            Protection::parse_list("privacy, Integrity").unwrap(),
            vec![Protection::Privacy, Protection::Integrity]
        );
        assert_eq!(
            Protection::parse_list("").unwrap(),
            vec![Protection::Authentication]
        );
        assert!(Protection::parse_list("secret").is_err());
    }
}

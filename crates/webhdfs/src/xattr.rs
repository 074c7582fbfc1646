//! Extended attribute names and values as Hadoop writes them: `user.color` split into
//! its namespace and name (`XAttrHelper.buildXAttr`), values encoded and decoded as
//! `XAttrCodec` does (text in double quotes, `0x` hex, `0s` base64). WebHDFS's xattr
//! parameters and `XAttrs` JSON, and `tusk fs -setfattr/-getfattr`.

use base64::Engine;
use tusk_proto::hdfs::XAttrProto;

/// The namespaces by `XAttrNamespaceProto` number.
const PREFIXES: [&str; 5] = ["user", "trusted", "security", "system", "raw"];

/// `user.name` → (namespace, name), as Hadoop's `XAttrHelper.buildXAttr`; the value
/// is left unset.
pub fn parse_name(full: &str) -> Result<XAttrProto, String> {
    let invalid = || {
        "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'"
            .to_string()
    };
    let (prefix, name) = full.split_once('.').ok_or_else(invalid)?;
    let namespace = PREFIXES
        .iter()
        .position(|p| p.eq_ignore_ascii_case(prefix))
        .ok_or_else(invalid)?;
    if name.is_empty() {
        return Err("XAttr name cannot be empty.".into());
    }
    Ok(XAttrProto {
        namespace: namespace as i32,
        name: name.to_string(),
        value: None,
    })
}

/// `user.color`, as Hadoop's `XAttrHelper.getPrefixedName`.
pub fn full_name(x: &XAttrProto) -> String {
    let prefix = PREFIXES.get(x.namespace as usize).unwrap_or(&"user");
    format!("{prefix}.{}", x.name)
}

/// How a value is written out (`XAttrCodec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Text,
    Hex,
    Base64,
}

impl Codec {
    /// `text`, `hex` or `base64`, in any case.
    pub fn parse(name: &str) -> Option<Codec> {
        match name.to_ascii_lowercase().as_str() {
            "text" => Some(Codec::Text),
            "hex" => Some(Codec::Hex),
            "base64" => Some(Codec::Base64),
            _ => None,
        }
    }

    /// Hadoop's `XAttrCodec.encodeValue`.
    pub fn encode(self, value: &[u8]) -> String {
        match self {
            Codec::Text => format!("\"{}\"", String::from_utf8_lossy(value)),
            Codec::Hex => format!(
                "0x{}",
                value.iter().map(|b| format!("{b:02x}")).collect::<String>()
            ),
            Codec::Base64 => format!(
                "0s{}",
                base64::engine::general_purpose::STANDARD.encode(value)
            ),
        }
    }
}

/// Hadoop's `XAttrCodec.decodeValue`: a quoted string, `0x` hex, `0s` base64, or
/// the text itself.
pub fn decode(value: &str) -> Result<Vec<u8>, String> {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        return Ok(value.as_bytes()[1..value.len() - 1].to_vec());
    }
    if let Some(hex) = value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        if hex.len() % 2 != 0 {
            return Err(format!("Invalid hex value: {value}"));
        }
        return (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<_, _>>()
            .map_err(|_| format!("Invalid hex value: {value}"));
    }
    if let Some(b64) = value
        .strip_prefix("0s")
        .or_else(|| value.strip_prefix("0S"))
    {
        return base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|_| format!("Invalid base64 value: {value}"));
    }
    Ok(value.as_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_follow_hadoops_codecs() {
        let x = parse_name("user.color").unwrap();
        assert_eq!((x.namespace, x.name.as_str()), (0, "color"));
        assert_eq!(full_name(&x), "user.color");
        assert_eq!(parse_name("TRUSTED.a").unwrap().namespace, 1);
        assert!(parse_name("color").is_err());
        assert!(parse_name("other.a").is_err());
        assert_eq!(
            parse_name("user.").unwrap_err(),
            "XAttr name cannot be empty."
        );
        assert_eq!(decode("\"blue\"").unwrap(), b"blue");
        assert_eq!(decode("0x0aff").unwrap(), vec![0x0a, 0xff]);
        assert_eq!(decode("0sYmx1ZQ==").unwrap(), b"blue");
        assert_eq!(decode("plain").unwrap(), b"plain");
        assert!(decode("0xabc").is_err());
        assert_eq!(Codec::Text.encode(b"blue"), "\"blue\"");
        assert_eq!(Codec::Hex.encode(&[0x0a, 0xff]), "0x0aff");
        assert_eq!(Codec::Base64.encode(b"blue"), "0sYmx1ZQ==");
        assert_eq!(Codec::parse("HEX"), Some(Codec::Hex));
        assert_eq!(Codec::parse("utf8"), None);
    }
}

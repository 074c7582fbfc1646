//! `-getfattr [-R] {-n name | -d} [-e en] <path>` and `-setfattr {-n name [-v value] |
//! -x name} <path>`, with Hadoop's name prefixes and value codecs (`XAttrCodec`: text in
//! double quotes, `0x` hex, `0s` base64).

use base64::Engine;
use tusk_client::meta::{XAttrProto, XATTR_CREATE, XATTR_REPLACE};

use super::Shell;

const PREFIXES: [&str; 5] = ["user", "trusted", "security", "system", "raw"];

/// `user.name` → (namespace, name), as Hadoop's `XAttrHelper.buildXAttr`.
pub(super) fn parse_name(full: &str) -> Result<XAttrProto, String> {
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

fn full_name(x: &XAttrProto) -> String {
    let prefix = PREFIXES.get(x.namespace as usize).unwrap_or(&"user");
    format!("{prefix}.{}", x.name)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Codec {
    Text,
    Hex,
    Base64,
}

fn encode(value: &[u8], codec: Codec) -> String {
    match codec {
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

/// Hadoop's `XAttrCodec.decodeValue`.
pub(super) fn decode(value: &str) -> Result<Vec<u8>, String> {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        return Ok(value[1..value.len() - 1].as_bytes().to_vec());
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

/// Takes `-opt value` out of `args`.
fn pop_option(args: &mut Vec<String>, opt: &str) -> Result<Option<String>, String> {
    let Some(i) = args.iter().position(|a| a == opt) else {
        return Ok(None);
    };
    if i + 1 >= args.len() {
        return Err(format!("option {opt} requires 1 argument"));
    }
    let value = args.remove(i + 1);
    args.remove(i);
    Ok(Some(value))
}

fn pop_flag(args: &mut Vec<String>, flag: &str) -> bool {
    match args.iter().position(|a| a == flag) {
        Some(i) => {
            args.remove(i);
            true
        }
        None => false,
    }
}

impl Shell {
    pub(super) async fn getfattr(&mut self, args: &[String]) -> Result<(), String> {
        let mut args = args.to_vec();
        let name = pop_option(&mut args, "-n")?;
        let dump = pop_flag(&mut args, "-d");
        let recursive = pop_flag(&mut args, "-R");
        let codec = match pop_option(&mut args, "-e")?.map(|e| e.to_ascii_lowercase()) {
            None => Codec::Text,
            Some(e) if e == "text" => Codec::Text,
            Some(e) if e == "hex" => Codec::Hex,
            Some(e) if e == "base64" => Codec::Base64,
            Some(e) => {
                return Err(format!(
                    "Invalid/unsupported encoding option specified: {e}"
                ))
            }
        };
        if name.is_none() && !dump {
            return Err("Must specify '-n name' or '-d' option.".into());
        }
        let wanted = name.as_deref().map(parse_name).transpose()?;
        if args.is_empty() {
            return Err("<path> is missing.".into());
        }
        for p in &args {
            let path = self.resolve(p);
            let items = match self.tree(&path, recursive).await {
                Ok(items) => items,
                Err(e) => {
                    self.report("getfattr", p, e);
                    continue;
                }
            };
            for (item, _) in items {
                let shown = format!("{p}{}", &item[path.len().min(item.len())..]);
                let names = wanted.iter().cloned().collect();
                match self.client.get_xattrs(&item, names).await {
                    Ok(mut xattrs) => {
                        println!("# file: {shown}");
                        xattrs.sort_by_key(full_name);
                        for x in xattrs {
                            let value = x.value.as_deref().unwrap_or_default();
                            if value.is_empty() {
                                println!("{}", full_name(&x));
                            } else {
                                println!("{}={}", full_name(&x), encode(value, codec));
                            }
                        }
                    }
                    Err(e) => self.report("getfattr", &shown, e),
                }
            }
        }
        Ok(())
    }

    pub(super) async fn setfattr(&mut self, args: &[String]) -> Result<(), String> {
        let mut args = args.to_vec();
        let name = pop_option(&mut args, "-n")?;
        let value = pop_option(&mut args, "-v")?;
        let remove = pop_option(&mut args, "-x")?;
        let (x, removing) = match (name, remove) {
            (Some(_), Some(_)) => {
                return Err("Can not specify both '-n name' and '-x name' option.".into())
            }
            (None, None) => return Err("Must specify '-n name' or '-x name' option.".into()),
            (Some(n), None) => {
                let mut x = parse_name(&n)?;
                let bytes = value
                    .as_deref()
                    .map(decode)
                    .transpose()?
                    .unwrap_or_default();
                x.value = Some(bytes.into());
                (x, false)
            }
            (None, Some(n)) => (parse_name(&n)?, true),
        };
        if args.is_empty() {
            return Err("<path> is missing.".into());
        }
        if args.len() > 1 {
            return Err(format!("Too many arguments: {}", args[1..].join(" ")));
        }
        let path = self.resolve(&args[0]);
        let result = if removing {
            self.client.remove_xattr(&path, x).await
        } else {
            self.client
                .set_xattr(&path, x, XATTR_CREATE | XATTR_REPLACE)
                .await
        };
        if let Err(e) = result {
            self.report("setfattr", &args[0], e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_follow_hadoops_codecs() {
        let x = parse_name("user.color").unwrap();
        assert_eq!((x.namespace, x.name.as_str()), (0, "color"));
        assert_eq!(parse_name("TRUSTED.a").unwrap().namespace, 1);
        assert!(parse_name("color").is_err());
        assert!(parse_name("other.a").is_err());
        assert_eq!(decode("\"blue\"").unwrap(), b"blue");
        assert_eq!(decode("0x0aff").unwrap(), vec![0x0a, 0xff]);
        assert_eq!(decode("0sYmx1ZQ==").unwrap(), b"blue");
        assert_eq!(decode("plain").unwrap(), b"plain");
        assert_eq!(encode(b"blue", Codec::Text), "\"blue\"");
        assert_eq!(encode(&[0x0a, 0xff], Codec::Hex), "0x0aff");
        assert_eq!(encode(b"blue", Codec::Base64), "0sYmx1ZQ==");
    }
}

//! `-getfattr [-R] {-n name | -d} [-e en] <path>` and `-setfattr {-n name [-v value] |
//! -x name} <path>`, with Hadoop's name prefixes and value codecs (`XAttrCodec`: text in
//! double quotes, `0x` hex, `0s` base64; `tusk_webhdfs::xattr`).

use tusk_client::meta::{XATTR_CREATE, XATTR_REPLACE};
use tusk_webhdfs::xattr::{decode, full_name, parse_name, Codec};

use super::Shell;

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
        let codec = match pop_option(&mut args, "-e")? {
            None => Codec::Text,
            Some(e) => Codec::parse(&e).ok_or_else(|| {
                format!(
                    "Invalid/unsupported encoding option specified: {}",
                    e.to_ascii_lowercase()
                )
            })?,
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
                // As Hadoop's: the file is named before its attributes or the error.
                println!("# file: {shown}");
                match self.client.get_xattrs(&item, names).await {
                    Ok(mut xattrs) => {
                        xattrs.sort_by_key(full_name);
                        for x in xattrs {
                            let value = x.value.as_deref().unwrap_or_default();
                            if value.is_empty() {
                                println!("{}", full_name(&x));
                            } else {
                                println!("{}={}", full_name(&x), codec.encode(value));
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

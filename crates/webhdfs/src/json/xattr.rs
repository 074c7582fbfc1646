//! `XAttrs` (GETXATTRS) and `XAttrNames` (LISTXATTRS).

use serde_json::{json, Value};
use tusk_proto::hdfs::XAttrProto;

use crate::xattr::{full_name, Codec};

/// `{"XAttrs":[{"name":"user.a","value":"\"v\""}]}`: each value encoded as asked
/// (`XAttrCodec.encodeValue`), `null` for an attribute without one.
pub fn xattrs(list: &[XAttrProto], codec: Codec) -> Value {
    let items: Vec<Value> = list
        .iter()
        .map(
            |x| json!({"name": full_name(x), "value": x.value.as_deref().map(|v| codec.encode(v))}),
        )
        .collect();
    json!({ "XAttrs": items })
}

/// `{"XAttrNames":"[\"user.a\",\"user.b\"]"}`: the names as a JSON array inside a
/// string, as Hadoop writes them.
pub fn xattr_names(list: &[XAttrProto]) -> Value {
    let names: Vec<String> = list.iter().map(full_name).collect();
    json!({ "XAttrNames": Value::from(names).to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(name: &str, value: Option<&[u8]>) -> XAttrProto {
        XAttrProto {
            namespace: 0,
            name: name.into(),
            value: value.map(|v| v.to_vec().into()),
        }
    }

    #[test]
    fn values_are_encoded_and_names_are_a_string() {
        let list = [attr("a", Some(b"blue")), attr("b", None)];
        assert_eq!(
            xattrs(&list, Codec::Hex).to_string(),
            r#"{"XAttrs":[{"name":"user.a","value":"0x626c7565"},{"name":"user.b","value":null}]}"#
        );
        assert_eq!(
            xattrs(&list[..1], Codec::Text).to_string(),
            r#"{"XAttrs":[{"name":"user.a","value":"\"blue\""}]}"#
        );
        assert_eq!(
            xattr_names(&list).to_string(),
            r#"{"XAttrNames":"[\"user.a\",\"user.b\"]"}"#
        );
        assert_eq!(xattrs(&[], Codec::Text).to_string(), r#"{"XAttrs":[]}"#);
    }
}

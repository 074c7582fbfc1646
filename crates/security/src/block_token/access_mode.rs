//! [`AccessMode`]: what a block token allows, by its Java name and its protobuf value.

use tusk_proto::hdfs::AccessModeProto;

/// What a token allows on its block (HDFS's `BlockTokenIdentifier.AccessMode`; the
/// order is Java's ordinal order, which is also the order modes are written in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessMode {
    Read,
    Write,
    Copy,
    Replace,
}

impl AccessMode {
    /// The Java enum constant's name, as written on the wire.
    pub fn name(self) -> &'static str {
        match self {
            AccessMode::Read => "READ",
            AccessMode::Write => "WRITE",
            AccessMode::Copy => "COPY",
            AccessMode::Replace => "REPLACE",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<AccessMode> {
        Some(match name {
            "READ" => AccessMode::Read,
            "WRITE" => AccessMode::Write,
            "COPY" => AccessMode::Copy,
            "REPLACE" => AccessMode::Replace,
            _ => return None,
        })
    }

    pub(crate) fn to_proto(self) -> AccessModeProto {
        match self {
            AccessMode::Read => AccessModeProto::Read,
            AccessMode::Write => AccessModeProto::Write,
            AccessMode::Copy => AccessModeProto::Copy,
            AccessMode::Replace => AccessModeProto::Replace,
        }
    }

    pub(crate) fn from_proto(p: AccessModeProto) -> AccessMode {
        match p {
            AccessModeProto::Read => AccessMode::Read,
            AccessModeProto::Write => AccessMode::Write,
            AccessModeProto::Copy => AccessMode::Copy,
            AccessModeProto::Replace => AccessMode::Replace,
        }
    }
}

impl std::fmt::Display for AccessMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

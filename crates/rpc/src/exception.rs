//! [`HadoopException`]: every Java exception class a Tusk daemon raises or a Tusk
//! client tells apart, named once. Errors reach the wire as these names, and clients
//! match on the enum instead of spelling the names again.

/// Declares the enum and its table of class names together, so a variant cannot lack
/// its name.
macro_rules! hadoop_exceptions {
    ($($(#[$doc:meta])* $variant:ident => $class:literal,)*) => {
        /// A Java exception class as Hadoop's clients and servers name it on the wire.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum HadoopException {
            $($(#[$doc])* $variant,)*
        }

        impl HadoopException {
            /// Every exception, in declaration order.
            pub const ALL: &'static [HadoopException] = &[$(HadoopException::$variant,)*];

            /// The fully qualified class name: `java.io.FileNotFoundException`.
            pub const fn class_name(self) -> &'static str {
                match self {
                    $(HadoopException::$variant => $class,)*
                }
            }
        }
    };
}

hadoop_exceptions! {
    // java.*
    Io => "java.io.IOException",
    FileNotFound => "java.io.FileNotFoundException",
    Eof => "java.io.EOFException",
    IllegalArgument => "java.lang.IllegalArgumentException",
    NumberFormat => "java.lang.NumberFormatException",
    UnsupportedOperation => "java.lang.UnsupportedOperationException",
    Security => "java.lang.SecurityException",
    /// A SASL exchange that failed (Java's DIGEST-MD5 server's own refusals).
    Sasl => "javax.security.sasl.SaslException",
    /// A refused (or otherwise failed) connect.
    Connect => "java.net.ConnectException",
    // Hadoop common
    /// A connect that timed out.
    ConnectTimeout => "org.apache.hadoop.net.ConnectTimeoutException",
    HadoopIllegalArgument => "org.apache.hadoop.HadoopIllegalArgumentException",
    FileAlreadyExists => "org.apache.hadoop.fs.FileAlreadyExistsException",
    ParentNotDirectory => "org.apache.hadoop.fs.ParentNotDirectoryException",
    PathIsNotDirectory => "org.apache.hadoop.fs.PathIsNotDirectoryException",
    PathIsNotEmptyDirectory => "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
    InvalidPath => "org.apache.hadoop.fs.InvalidPathException",
    AccessControl => "org.apache.hadoop.security.AccessControlException",
    Authorization => "org.apache.hadoop.security.authorize.AuthorizationException",
    InvalidToken => "org.apache.hadoop.security.token.SecretManager$InvalidToken",
    RpcServer => "org.apache.hadoop.ipc.RpcServerException",
    RpcNoSuchProtocol => "org.apache.hadoop.ipc.RpcNoSuchProtocolException",
    RpcNoSuchMethod => "org.apache.hadoop.ipc.RpcNoSuchMethodException",
    /// A call to a NameNode that is not active (HA): the client fails over to another.
    Standby => "org.apache.hadoop.ipc.StandbyException",
    /// Retry the same server later (`RetriableException`): e.g. a NameNode becoming active.
    Retriable => "org.apache.hadoop.ipc.RetriableException",
    /// HAServiceProtocol's `monitorHealth` on an unhealthy service.
    HealthCheckFailed => "org.apache.hadoop.ha.HealthCheckFailedException",
    /// HAServiceProtocol's transition a service cannot make.
    ServiceFailed => "org.apache.hadoop.ha.ServiceFailedException",
    // HDFS
    AlreadyBeingCreated => "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException",
    RecoveryInProgress => "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException",
    UnregisteredNode => "org.apache.hadoop.hdfs.protocol.UnregisteredNodeException",
    Acl => "org.apache.hadoop.hdfs.protocol.AclException",
    NsQuotaExceeded => "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException",
    DsQuotaExceeded => "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException",
    QuotaByStorageTypeExceeded =>
        "org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException",
    Snapshot => "org.apache.hadoop.hdfs.protocol.SnapshotException",
    SnapshotAccessControl => "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException",
    PathComponentTooLong =>
        "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException",
    MaxDirectoryItemsExceeded =>
        "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException",
    LeaseExpired => "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException",
    NotReplicatedYet => "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException",
    SafeMode => "org.apache.hadoop.hdfs.server.namenode.SafeModeException",
    ReplicaNotFound => "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException",
    DisallowedDatanode => "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException",
    // YARN
    Yarn => "org.apache.hadoop.yarn.exceptions.YarnException",
    ApplicationNotFound => "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
    ApplicationAttemptNotFound =>
        "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException",
    ContainerNotFound => "org.apache.hadoop.yarn.exceptions.ContainerNotFoundException",
    ApplicationMasterNotRegistered =>
        "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException",
    InvalidResourceRequest => "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException",
    InvalidAuxService => "org.apache.hadoop.yarn.exceptions.InvalidAuxServiceException",
    InvalidContainer => "org.apache.hadoop.yarn.exceptions.InvalidContainerException",
}

impl HadoopException {
    /// The class name as Java's `Class.getSimpleName` gives it, without its package or
    /// outer class: `FileNotFoundException`, `PathComponentTooLongException`.
    pub fn simple_name(self) -> &'static str {
        simple_name(self.class_name())
    }

    /// The exception a fully qualified class name names; `None` for a class Tusk does
    /// not know.
    pub fn from_class_name(class: &str) -> Option<HadoopException> {
        Self::ALL.iter().copied().find(|e| e.class_name() == class)
    }
}

impl std::fmt::Display for HadoopException {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.class_name())
    }
}

/// `a.b.Outer$Inner` → `Inner`, `a.b.Name` → `Name`.
pub fn simple_name(class: &str) -> &str {
    let name = class.rsplit('.').next().unwrap_or(class);
    name.rsplit('$').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_distinct() {
        for &e in HadoopException::ALL {
            assert_eq!(HadoopException::from_class_name(e.class_name()), Some(e));
        }
        let mut names: Vec<_> = HadoopException::ALL
            .iter()
            .map(|e| e.simple_name())
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), HadoopException::ALL.len());
        assert_eq!(
            HadoopException::from_class_name("java.lang.NullPointerException"),
            None
        );
    }

    #[test]
    fn simple_names_drop_package_and_outer_class() {
        assert_eq!(
            HadoopException::FileNotFound.simple_name(),
            "FileNotFoundException"
        );
        assert_eq!(
            HadoopException::PathComponentTooLong.simple_name(),
            "PathComponentTooLongException"
        );
        assert_eq!(HadoopException::InvalidToken.simple_name(), "InvalidToken");
    }
}

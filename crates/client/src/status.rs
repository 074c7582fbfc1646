use tusk_proto::hdfs::{hdfs_file_status_proto::FileType, HdfsFileStatusProto};

/// `HdfsFileStatusProto.Flags.HAS_ACL`, and the permission extension bit older
/// NameNodes set instead.
const HAS_ACL: u32 = 1;
const ACL_BIT: u32 = 1 << 12;

/// A file or directory as the NameNode describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStatus {
    /// The entry's name (listings) or the queried path (getFileInfo).
    pub path: String,
    pub is_dir: bool,
    pub length: u64,
    pub replication: u16,
    pub block_size: u64,
    pub permission: u16,
    pub owner: String,
    pub group: String,
    pub modification_time: u64,
    pub access_time: u64,
    pub file_id: u64,
    pub children: i32,
    /// The inode has an ACL (`ls` shows `+`).
    pub has_acl: bool,
    /// The storage policy id that applies (0: none set, the default HOT).
    pub storage_policy: u32,
}

impl FileStatus {
    pub fn from_proto(path: String, p: &HdfsFileStatusProto) -> Self {
        FileStatus {
            path,
            is_dir: p.file_type == FileType::IsDir as i32,
            length: p.length,
            replication: p.block_replication.unwrap_or(0) as u16,
            block_size: p.blocksize.unwrap_or(0),
            permission: (p.permission.perm & 0o7777) as u16,
            owner: p.owner.clone(),
            group: p.group.clone(),
            modification_time: p.modification_time,
            access_time: p.access_time,
            file_id: p.file_id.unwrap_or(0),
            children: p.children_num.unwrap_or(-1),
            has_acl: p.flags.unwrap_or(0) & HAS_ACL != 0 || p.permission.perm & ACL_BIT != 0,
            storage_policy: p.storage_policy.unwrap_or(0),
        }
    }

    /// `drwxr-xr-x` style, as `ls` prints it.
    pub fn permission_string(&self) -> String {
        let mut s = String::with_capacity(10);
        s.push(if self.is_dir { 'd' } else { '-' });
        for shift in [6, 3, 0] {
            let bits = (self.permission >> shift) & 7;
            s.push(if bits & 4 != 0 { 'r' } else { '-' });
            s.push(if bits & 2 != 0 { 'w' } else { '-' });
            s.push(if bits & 1 != 0 { 'x' } else { '-' });
        }
        if self.permission & 0o1000 != 0 {
            let last = s.pop().unwrap_or('-');
            s.push(if last == 'x' { 't' } else { 'T' });
        }
        s
    }
}

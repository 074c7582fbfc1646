//! `concat` (HDFS's `FSDirConcatOp`): the decide step checks the target and sources
//! and logs a [`ConcatOp`]; the apply step moves the sources' blocks, in order, to the
//! end of the target and removes the sources.

use tusk_proto::internal::{edit_record::Op, ConcatOp};

use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, InodeId};
use crate::namesystem::{Logged, Namesystem, PathUse, State};
use crate::path;

impl Namesystem {
    /// `concat`: moves the blocks of `srcs` (in order) to the end of `target` and
    /// removes them. As HDFS: every file exists, is closed, is not the target, sits in
    /// the target's directory and has the target's block size; no source twice.
    pub fn concat(&self, user: &str, target: &str, srcs: &[String]) -> Result<Logged<()>> {
        let target = &*self.resolved(user, target, PathUse::Write)?;
        let srcs = srcs
            .iter()
            .map(|s| Ok(self.resolved(user, s, PathUse::Write)?.into_owned()))
            .collect::<Result<Vec<String>>>()?;
        let target = path::normalize(target)?;
        let illegal = |message: String| NameNodeError::InvalidArgument { message };
        if srcs.is_empty() {
            return Err(illegal(format!("concat: no sources given for {target}")));
        }
        let mut st = self.write();
        self.permissions.check_traverse(&st.ns, user, &target)?;
        let t = st.ns.lookup(&target)?;
        let tid = t.id;
        let tfile = t.file().ok_or_else(|| NameNodeError::NotAFile {
            path: target.clone(),
        })?;
        if tfile.client_name.is_some() {
            return Err(illegal(format!(
                "concat: target file {target} is under construction"
            )));
        }
        let (parent, block_size) = (t.parent, tfile.block_size);
        self.permissions.check(&st.ns, user, tid, Access::Write)?;
        let mut sources: Vec<InodeId> = Vec::with_capacity(srcs.len());
        for src in &srcs {
            let src = path::normalize(src)?;
            self.permissions.check_traverse(&st.ns, user, &src)?;
            let node = st.ns.lookup(&src)?;
            let file = node
                .file()
                .ok_or_else(|| NameNodeError::NotAFile { path: src.clone() })?;
            if node.id == tid {
                return Err(illegal(format!(
                    "concat: the src file {src} is the same with the target file {target}"
                )));
            }
            if file.client_name.is_some() || file.blocks.is_empty() {
                return Err(illegal(format!(
                    "concat: source file {src} is invalid or empty or underConstruction"
                )));
            }
            if node.parent != parent {
                return Err(illegal(format!(
                    "Source file {src} is not in the same directory with the target {target}"
                )));
            }
            if file.block_size != block_size {
                return Err(illegal(format!(
                    "concat: source file {src} has block size {} but the target {target} has {block_size}",
                    file.block_size
                )));
            }
            if sources.contains(&node.id) {
                return Err(illegal(format!(
                    "concat: source file {src} is given more than once"
                )));
            }
            self.permissions
                .check(&st.ns, user, node.id, Access::Read)?;
            sources.push(node.id);
        }
        self.permissions
            .check_path(&st.ns, user, parent, Some(Access::Write))?;
        let op = Op::Concat(ConcatOp {
            target: tid,
            sources,
            mtime: tusk_common::now_millis(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        tracing::info!(target = %target, sources = srcs.len(), "concatenated");
        Ok(Logged::new((), txid))
    }
}

impl State {
    /// Applies [`ConcatOp`]: the sources' blocks move to the end of the target and the
    /// sources go.
    pub(crate) fn apply_concat(&mut self, op: &ConcatOp) -> Result<()> {
        let mut moved = Vec::new();
        for src in &op.sources {
            let file = self.open_or_closed_file_mut(*src)?;
            if file.client_name.is_some() {
                return Err(NameNodeError::InvalidArgument {
                    message: format!("concat source inode {src} is open"),
                });
            }
            moved.extend(std::mem::take(&mut file.blocks));
        }
        for src in &op.sources {
            self.ns.remove_subtree(*src, op.mtime);
        }
        for b in &moved {
            if let Some(info) = self.blocks.get_mut(*b) {
                info.inode = op.target;
            }
        }
        let target = self
            .ns
            .get_mut(op.target)
            .ok_or(NameNodeError::FileNotFound {
                path: format!("inode {}", op.target),
            })?;
        target.mtime = op.mtime;
        let target = target.file_mut().ok_or_else(|| NameNodeError::NotAFile {
            path: format!("inode {}", op.target),
        })?;
        target.blocks.extend(moved);
        Ok(())
    }
}

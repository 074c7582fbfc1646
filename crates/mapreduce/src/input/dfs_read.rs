//! A blocking reader of a DFS file from some offset, for record readers.

use std::io;

use tusk_client::FileReader;

use crate::api::Dfs;
use crate::error::{MapReduceError, Result};

pub struct DfsRead {
    reader: FileReader,
    dfs: Dfs,
}

impl DfsRead {
    /// Opens `path` positioned at `offset`.
    pub fn open(dfs: &Dfs, path: &str, offset: u64) -> Result<Self> {
        let mut reader = dfs
            .block_on(dfs.client.open(path))
            .map_err(|e| MapReduceError::dfs("open", path, e))?;
        reader.seek(offset);
        Ok(DfsRead {
            reader,
            dfs: dfs.clone(),
        })
    }
}

impl io::Read for DfsRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.dfs
            .block_on(self.reader.read(buf))
            .map_err(io::Error::other)
    }
}

//! The newest checkpoint image file, for `/imagetransfer?getimage=1&txid=latest`
//! (`hdfs dfsadmin -fetchImage`).

use std::path::PathBuf;

use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// The newest checkpoint image file (`/imagetransfer?getimage=1&txid=latest`).
    pub fn latest_image_file(&self) -> Result<(u64, PathBuf)> {
        let mut newest: Option<(u64, PathBuf)> = None;
        for dir in &self.options.name_dirs {
            let images = crate::storage::NameDir::new(dir)
                .images()
                .unwrap_or_default();
            if let Some(last) = images.into_iter().last() {
                if newest.as_ref().is_none_or(|(t, _)| last.0 > *t) {
                    newest = Some(last);
                }
            }
        }
        newest.ok_or_else(|| crate::error::NameNodeError::FileNotFound {
            path: "fsimage".into(),
        })
    }
}

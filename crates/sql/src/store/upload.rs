//! [`DfsUpload`]: a multipart upload streaming its parts, in the order `put_part` was
//! called, through one `FileWriter` to a temporary name beside the target, renamed into
//! place on `complete`; an aborted upload deletes the temporary file, so nothing shows.

use std::sync::Arc;

use async_trait::async_trait;
use futures::channel::oneshot;
use object_store::{MultipartUpload, PutPayload, PutResult, UploadPart};
use tokio::sync::Mutex;
use tusk_client::{CreateOptions, DfsClient, FileWriter};

use super::{to_store_error, STORE};

/// Where an upload to `target` is written until it completes.
fn temporary_name(target: &str) -> String {
    let (dir, name) = target.rsplit_once('/').unwrap_or(("", target));
    format!("{dir}/._tusk_upload_{}_{name}", rand_suffix())
}

fn rand_suffix() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{}_{nanos:09}", std::process::id())
}

pub(crate) struct DfsUpload {
    client: DfsClient,
    target: String,
    temporary: String,
    writer: Arc<Mutex<FileWriter>>,
    /// Signalled when the last part handed out so far is written.
    last: Option<oneshot::Receiver<()>>,
}

impl std::fmt::Debug for DfsUpload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DfsUpload({} via {})", self.target, self.temporary)
    }
}

impl DfsUpload {
    pub(crate) async fn start(client: DfsClient, target: String) -> object_store::Result<Self> {
        let temporary = temporary_name(&target);
        let writer = client
            .create(&temporary, CreateOptions::with_parents())
            .await
            .map_err(|e| to_store_error(&target, e))?;
        Ok(DfsUpload {
            client,
            target,
            temporary,
            writer: Arc::new(Mutex::new(writer)),
            last: None,
        })
    }

    /// Waits for every part, closes the file and renames it onto the target; with
    /// `create`, fails with `AlreadyExists` (and leaves nothing) if the target exists.
    pub(crate) async fn finish(&mut self, create: bool) -> object_store::Result<PutResult> {
        let result = self.close_and_rename(create).await;
        if result.is_err() {
            let _ = self.client.delete(&self.temporary, false).await;
        }
        result
    }

    async fn close_and_rename(&mut self, create: bool) -> object_store::Result<PutResult> {
        if let Some(last) = self.last.take() {
            last.await.map_err(|_| object_store::Error::Generic {
                store: STORE,
                source: format!("{}: a part of the upload was not written", self.target).into(),
            })?;
        }
        self.writer
            .lock()
            .await
            .close()
            .await
            .map_err(|e| to_store_error(&self.target, e))?;
        self.client
            .rename2(&self.temporary, &self.target, !create)
            .await
            .map_err(|e| to_store_error(&self.target, e))?;
        Ok(PutResult {
            e_tag: None,
            version: None,
        })
    }
}

#[async_trait]
impl MultipartUpload for DfsUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let previous = self.last.take();
        let (done, next) = oneshot::channel();
        self.last = Some(next);
        let writer = self.writer.clone();
        let target = self.target.clone();
        Box::pin(async move {
            if let Some(previous) = previous {
                previous.await.map_err(|_| object_store::Error::Generic {
                    store: STORE,
                    source: format!("{target}: an earlier part of the upload failed").into(),
                })?;
            }
            let mut writer = writer.lock().await;
            for chunk in data.iter() {
                writer
                    .write(chunk)
                    .await
                    .map_err(|e| to_store_error(&target, e))?;
            }
            let _ = done.send(());
            Ok(())
        })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        self.finish(false).await
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.last = None;
        self.client
            .delete(&self.temporary, false)
            .await
            .map(|_| ())
            .map_err(|e| to_store_error(&self.temporary, e))
    }
}

//! [`DfsStore`]: an `object_store::ObjectStore` over Tusk's [`DfsClient`], so DataFusion
//! reads and writes `hdfs://` paths with Tusk's own client. Object paths are DFS paths
//! without their leading `/`; directories are listed as prefixes.

mod upload;

use std::fmt;
use std::ops::Range;

use async_trait::async_trait;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyMode, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    RenameOptions, RenameTargetMode,
};
use tusk_client::{ClientError, DfsClient, FileStatus, HadoopException};

use upload::DfsUpload;

const STORE: &str = "DFS";

/// Ranged reads run this many at once in `get_ranges` (Parquet asks for one range per
/// column chunk).
const RANGE_CONCURRENCY: usize = 8;

/// Reads are returned in pieces of at most this size.
const READ_CHUNK: usize = 1 << 20;

/// An object store on one DFS (one NameNode).
#[derive(Clone)]
pub struct DfsStore {
    client: DfsClient,
}

impl DfsStore {
    pub fn new(client: DfsClient) -> Self {
        DfsStore { client }
    }

    pub fn client(&self) -> &DfsClient {
        &self.client
    }
}

impl fmt::Debug for DfsStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DfsStore({})", self.client.options().namenode)
    }
}

impl fmt::Display for DfsStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DfsStore(hdfs://{})", self.client.options().namenode)
    }
}

/// The DFS path of an object path.
fn dfs_path(location: &Path) -> String {
    format!("/{location}")
}

/// Maps a client error on `path` to the object store's kinds, keeping the Hadoop
/// exception's name in the message.
pub(crate) fn to_store_error(path: &str, e: ClientError) -> object_store::Error {
    let class = e.remote_class().map(str::to_string);
    let source: Box<dyn std::error::Error + Send + Sync> = match &class {
        Some(class) => format!("{class}: {e}").into(),
        None => Box::new(e),
    };
    let path = path.to_string();
    match class.as_deref() {
        Some(c) if c == HadoopException::FileNotFound.simple_name() => {
            object_store::Error::NotFound { path, source }
        }
        Some(c) if c == HadoopException::FileAlreadyExists.simple_name() => {
            object_store::Error::AlreadyExists { path, source }
        }
        Some(c) if c == HadoopException::AccessControl.simple_name() => {
            object_store::Error::PermissionDenied { path, source }
        }
        _ => object_store::Error::Generic {
            store: STORE,
            source: format!("{path}: {source}").into(),
        },
    }
}

fn not_found(path: &str) -> object_store::Error {
    object_store::Error::NotFound {
        path: path.to_string(),
        source: format!("FileNotFoundException: File does not exist: {path}").into(),
    }
}

fn meta(location: Path, s: &FileStatus) -> ObjectMeta {
    ObjectMeta {
        location,
        last_modified: DateTime::<Utc>::from_timestamp_millis(s.modification_time as i64)
            .unwrap_or_default(),
        size: s.length,
        e_tag: Some(format!("{}-{}", s.file_id, s.modification_time)),
        version: None,
    }
}

impl DfsStore {
    async fn file_status(&self, location: &Path) -> object_store::Result<FileStatus> {
        let path = dfs_path(location);
        match self.client.get_file_info(&path).await {
            Ok(Some(s)) if !s.is_dir => Ok(s),
            Ok(_) => Err(not_found(&path)),
            Err(e) => Err(to_store_error(&path, e)),
        }
    }

    /// Reads `range` of the file at `path`.
    async fn read_range(&self, path: &str, range: Range<u64>) -> object_store::Result<Bytes> {
        let mut reader = self
            .client
            .open(path)
            .await
            .map_err(|e| to_store_error(path, e))?;
        read_from(&mut reader, path, range).await
    }

    /// Every file under `dir` (recursively), as objects.
    async fn walk(&self, dir: String) -> object_store::Result<Vec<ObjectMeta>> {
        let mut out = Vec::new();
        let mut pending = vec![dir];
        while let Some(dir) = pending.pop() {
            for (child, s) in self.children(&dir).await? {
                if s.is_dir {
                    pending.push(child);
                } else {
                    out.push(meta(Path::from(child.trim_start_matches('/')), &s));
                }
            }
        }
        Ok(out)
    }

    /// The entries of directory `dir` with their full paths; none when it is missing.
    async fn children(&self, dir: &str) -> object_store::Result<Vec<(String, FileStatus)>> {
        match self.client.list(dir).await {
            Ok(entries) => Ok(entries
                .into_iter()
                .map(|s| (child_path(dir, &s.path), s))
                .collect()),
            Err(e) if e.is_not_found() => Ok(Vec::new()),
            Err(e) => Err(to_store_error(dir, e)),
        }
    }

    /// Makes the parent directory of `path`.
    async fn make_parent(&self, path: &str) -> object_store::Result<()> {
        if let Some((parent, _)) = path.rsplit_once('/') {
            if !parent.is_empty() {
                self.client
                    .mkdirs(parent, 0o755, true)
                    .await
                    .map_err(|e| to_store_error(parent, e))?;
            }
        }
        Ok(())
    }
}

/// A listing entry's full path: a directory listing names children by their last
/// component, a file's own status by its full path.
fn child_path(dir: &str, name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Reads `range` from `reader`, failing if the file ends first.
async fn read_from(
    reader: &mut tusk_client::FileReader,
    path: &str,
    range: Range<u64>,
) -> object_store::Result<Bytes> {
    reader.seek(range.start);
    let mut buf = vec![0u8; (range.end - range.start) as usize];
    let mut filled = 0;
    while filled < buf.len() {
        let n = reader
            .read(&mut buf[filled..])
            .await
            .map_err(|e| to_store_error(path, e))?;
        if n == 0 {
            return Err(object_store::Error::Generic {
                store: STORE,
                source: format!(
                    "{path}: EOFException: file ended at {} before byte {}",
                    range.start + filled as u64,
                    range.end
                )
                .into(),
            });
        }
        filled += n;
    }
    Ok(buf.into())
}

#[async_trait]
impl ObjectStore for DfsStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let create = match opts.mode {
            PutMode::Overwrite => false,
            PutMode::Create => true,
            PutMode::Update(_) => {
                return Err(object_store::Error::NotImplemented {
                    operation: "put with PutMode::Update".into(),
                    implementer: STORE.into(),
                })
            }
        };
        let mut upload = DfsUpload::start(self.client.clone(), dfs_path(location)).await?;
        upload.put_part(payload).await?;
        upload.finish(create).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        _opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let target = dfs_path(location);
        Ok(Box::new(
            DfsUpload::start(self.client.clone(), target).await?,
        ))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let path = dfs_path(location);
        let status = self.file_status(location).await?;
        let meta = meta(location.clone(), &status);
        options.check_preconditions(&meta)?;
        let range = match &options.range {
            Some(r) => r
                .as_range(status.length)
                .map_err(|e| object_store::Error::Generic {
                    store: STORE,
                    source: format!("{path}: {e}").into(),
                })?,
            None => 0..status.length,
        };
        let payload = if options.head {
            stream::empty().boxed()
        } else {
            let client = self.client.clone();
            let path = path.clone();
            let start = range.start;
            let end = range.end;
            stream::once(async move {
                client
                    .open(&path)
                    .await
                    .map_err(|e| to_store_error(&path, e))
                    .map(|reader| (reader, path, start))
            })
            .map_ok(move |(reader, path, start)| {
                stream::try_unfold((reader, start), move |(mut reader, at)| {
                    let path = path.clone();
                    async move {
                        if at >= end {
                            return Ok(None);
                        }
                        let to = (at + READ_CHUNK as u64).min(end);
                        let bytes = read_from(&mut reader, &path, at..to).await?;
                        Ok(Some((bytes, (reader, to))))
                    }
                })
            })
            .try_flatten()
            .boxed()
        };
        Ok(GetResult {
            payload: GetResultPayload::Stream(payload),
            meta,
            range,
            attributes: Default::default(),
        })
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        let path = dfs_path(location);
        stream::iter(ranges.iter().cloned())
            .map(|r| self.read_range(&path, r))
            .buffered(RANGE_CONCURRENCY)
            .try_collect()
            .await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let client = self.client.clone();
        locations
            .and_then(move |location| {
                let client = client.clone();
                async move {
                    let path = dfs_path(&location);
                    // Deleting what is not there succeeds, as in object stores.
                    client
                        .delete(&path, false)
                        .await
                        .map_err(|e| to_store_error(&path, e))?;
                    Ok(location)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let store = self.clone();
        let dir = prefix.map_or_else(|| "/".to_string(), dfs_path);
        stream::once(async move { store.walk(dir).await })
            .map_ok(|objects| stream::iter(objects.into_iter().map(Ok)))
            .try_flatten()
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let dir = prefix.map_or_else(|| "/".to_string(), dfs_path);
        let mut result = ListResult {
            common_prefixes: Vec::new(),
            objects: Vec::new(),
        };
        for (child, s) in self.children(&dir).await? {
            let child = Path::from(child.trim_start_matches('/'));
            if s.is_dir {
                result.common_prefixes.push(child);
            } else {
                result.objects.push(meta(child, &s));
            }
        }
        Ok(result)
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        let src = dfs_path(from);
        let status = self.file_status(from).await?;
        let mut upload = DfsUpload::start(self.client.clone(), dfs_path(to)).await?;
        let mut at = 0;
        let mut reader = self
            .client
            .open(&src)
            .await
            .map_err(|e| to_store_error(&src, e))?;
        while at < status.length {
            let to = (at + READ_CHUNK as u64).min(status.length);
            let bytes = read_from(&mut reader, &src, at..to).await?;
            upload.put_part(bytes.into()).await?;
            at = to;
        }
        upload
            .finish(matches!(options.mode, CopyMode::Create))
            .await
            .map(|_| ())
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        let (src, dst) = (dfs_path(from), dfs_path(to));
        let overwrite = matches!(options.target_mode, RenameTargetMode::Overwrite);
        self.make_parent(&dst).await?;
        // Without overwrite the NameNode refuses an existing destination itself
        // (FileAlreadyExistsException), so no lookup goes first.
        self.client
            .rename2(&src, &dst, overwrite)
            .await
            .map_err(|e| match e.remote_class() {
                Some(c) if c == HadoopException::FileAlreadyExists.simple_name() => {
                    to_store_error(&dst, e)
                }
                _ => to_store_error(&src, e),
            })
    }
}

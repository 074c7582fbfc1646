//! A connection's request bytes: read as they arrive, never allocated from an announced
//! length, and split into frames.
//!
//! Frames that fit in [`CONNECTION_BUFFER`] are read into one buffer, many per read. A
//! longer frame first takes its whole length from the server-wide budget (all at once, so
//! connections never hold part of it while waiting for the rest); until the budget has
//! room the connection does not read, and TCP holds its sender back. Once granted, the
//! frame gets its own buffer of that length, reserved but not written: its pages become
//! resident only as its bytes arrive, and it is never copied to grow.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use tokio::io::AsyncReadExt;
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::{AcquireError, OwnedSemaphorePermit};

use super::limits::{Limits, CONNECTION_BUFFER};
use crate::error::RpcError;

/// The first read of a connection asks for this much room; the buffer grows from there
/// up to [`CONNECTION_BUFFER`] only as frames need it.
const FIRST_READ: usize = 4 * 1024;

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedSemaphorePermit, AcquireError>> + Send>>;

/// A frame longer than [`CONNECTION_BUFFER`], being received.
struct LongFrame {
    /// The body's length as announced.
    len: usize,
    /// The body so far.
    body: Vec<u8>,
    /// `len` bytes of the budget, once granted; released after the frame is handled.
    permit: Option<OwnedSemaphorePermit>,
    /// The request for `permit`, kept across cancelled reads so it keeps its place.
    acquire: Option<Acquire>,
}

/// The request bytes of one connection, owned by its task.
pub(crate) struct FrameReader {
    limits: Arc<Limits>,
    /// Bytes received and not yet split into frames; never more than
    /// [`CONNECTION_BUFFER`].
    buf: BytesMut,
    /// The long frame being received, if any.
    long: Option<LongFrame>,
    /// The budget held by the last long frame taken, released at the next take (after the
    /// frame was handled).
    handled: Option<OwnedSemaphorePermit>,
    /// Buffer bytes last reported to `limits`.
    counted: usize,
}

impl FrameReader {
    pub(crate) fn new(limits: Arc<Limits>) -> Self {
        FrameReader {
            limits,
            buf: BytesMut::new(),
            long: None,
            handled: None,
            counted: 0,
        }
    }

    /// True while the connection waits for the budget: it is not idle by its own doing.
    pub(crate) fn waiting_for_budget(&self) -> bool {
        self.long.as_ref().is_some_and(|l| l.permit.is_none())
    }

    /// True while a long frame holds part of the budget and is still arriving.
    pub(crate) fn holds_budget(&self) -> bool {
        self.long.as_ref().is_some_and(|l| l.permit.is_some())
    }

    /// The next complete frame's body, or `None` until one has fully arrived.
    pub(crate) fn take_frame(&mut self) -> Result<Option<Bytes>, RpcError> {
        self.handled = None;
        let frame = self.next_frame();
        self.account();
        frame
    }

    fn next_frame(&mut self) -> Result<Option<Bytes>, RpcError> {
        if let Some(long) = &mut self.long {
            if long.body.len() < long.len {
                return Ok(None);
            }
            let long = self.long.take().expect("long frame present");
            self.handled = long.permit;
            return Ok(Some(Bytes::from(long.body)));
        }
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        let limit = self.limits.options.max_data_length;
        if len > limit {
            self.limits
                .oversized_frames
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Err(RpcError::FrameTooLong { len, limit });
        }
        if self.buf.len() >= 4 + len {
            let _ = self.buf.split_to(4);
            return Ok(Some(self.buf.split_to(len).freeze()));
        }
        if 4 + len > CONNECTION_BUFFER {
            // Everything buffered belongs to this frame: move it to the frame's own buffer,
            // which grows only once the budget is granted and more bytes arrive.
            let _ = self.buf.split_to(4);
            let body = self.buf.to_vec();
            self.buf = BytesMut::new();
            self.long = Some(LongFrame {
                len,
                body,
                permit: None,
                acquire: None,
            });
        }
        Ok(None)
    }

    /// Reads what has arrived, waiting first for the budget if a long frame needs it;
    /// `Ok(0)` at the end of the stream. Cancel-safe: a cancelled wait for the budget keeps
    /// its place, and a cancelled read has read nothing.
    pub(crate) async fn read(&mut self, rd: &mut OwnedReadHalf) -> Result<usize, RpcError> {
        let n = match &mut self.long {
            Some(long) => {
                if long.permit.is_none() {
                    let budget = self.limits.budget.clone();
                    let len = long.len as u32;
                    let acquire = long
                        .acquire
                        .get_or_insert_with(|| Box::pin(budget.acquire_many_owned(len)));
                    let permit = acquire.await.map_err(|_| RpcError::ConnectionClosed)?;
                    long.permit = Some(permit);
                    long.acquire = None;
                    long.body.reserve_exact(long.len - long.body.len());
                }
                let room = long.len - long.body.len();
                rd.read_buf(&mut (&mut long.body).limit(room)).await?
            }
            None => {
                let room = self.small_room();
                rd.read_buf(&mut (&mut self.buf).limit(room)).await?
            }
        };
        self.account();
        Ok(n)
    }

    /// Reads what has already arrived without waiting; `Ok(None)` when nothing has (or
    /// when a long frame still waits for the budget).
    pub(crate) fn try_read(&mut self, rd: &OwnedReadHalf) -> Result<Option<usize>, RpcError> {
        let read = match &mut self.long {
            Some(long) if long.permit.is_none() => return Ok(None),
            Some(long) => {
                let room = long.len - long.body.len();
                rd.try_read_buf(&mut (&mut long.body).limit(room))
            }
            None => {
                let room = self.small_room();
                rd.try_read_buf(&mut (&mut self.buf).limit(room))
            }
        };
        self.account();
        match read {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Takes what fits of `bytes` as if a read had just returned them, without a socket
    /// ([`RpcServer::serve_bytes`](super::RpcServer::serve_bytes)); returns how many it
    /// took: 0 while a long frame waits for budget another connection holds.
    pub(crate) fn accept(&mut self, bytes: &[u8]) -> usize {
        let taken = match &mut self.long {
            Some(long) => {
                if long.permit.is_none() {
                    let budget = self.limits.budget.clone();
                    match budget.try_acquire_many_owned(long.len as u32) {
                        Ok(permit) => long.permit = Some(permit),
                        Err(_) => return 0,
                    }
                    long.body.reserve_exact(long.len - long.body.len());
                }
                let n = (long.len - long.body.len()).min(bytes.len());
                long.body.extend_from_slice(&bytes[..n]);
                n
            }
            None => {
                let n = self.small_room().min(bytes.len());
                self.buf.extend_from_slice(&bytes[..n]);
                n
            }
        };
        self.account();
        taken
    }

    /// Makes room in `buf` for what the frame in progress still needs (at least
    /// [`FIRST_READ`]) and returns how much may be read: up to [`CONNECTION_BUFFER`].
    fn small_room(&mut self) -> usize {
        let len = self.buf.len();
        let frame_end = if len >= 4 {
            4 + u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize
        } else {
            4
        };
        let room = CONNECTION_BUFFER.saturating_sub(len);
        self.buf
            .reserve(frame_end.saturating_sub(len).max(FIRST_READ).min(room));
        room.max(1)
    }

    /// Reports this connection's buffered bytes to the server's gauge: the small buffer's
    /// size, and of a long frame the bytes that have arrived.
    fn account(&mut self) {
        let now = self.buf.capacity() + self.long.as_ref().map_or(0, |l| l.body.len());
        self.limits.rebuffer(self.counted, now);
        self.counted = now;
    }
}

impl Drop for FrameReader {
    fn drop(&mut self) {
        self.limits.rebuffer(self.counted, 0);
    }
}

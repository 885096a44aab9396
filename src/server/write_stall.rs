//! A connection that stops taking bytes is closed: a write-progress timeout on the socket.
//!
//! hyper's header-read timeout only covers reading a request. A client that pipelines requests
//! and never reads the answers leaves hyper waiting on a full socket send buffer for good, with
//! the connection (and its buffers) held. [`StallLimit`] wraps the stream: once a write cannot
//! go through, the clock starts; if no byte is taken within the limit the write fails with
//! `TimedOut`, and hyper closes the connection. Every write that makes progress resets it, so a
//! slow but live reader is never cut off.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `inner`, whose writes fail once none has made progress for `limit`.
pub struct StallLimit<S> {
    inner: S,
    limit: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> StallLimit<S> {
    /// Wraps `inner` with a write-progress limit of `limit`.
    pub fn new(inner: S, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            stalled: None,
        }
    }

    /// Runs after a write attempt: clears the clock on progress, starts or checks it when stuck.
    fn watch<T>(
        &mut self,
        attempt: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        if attempt.is_ready() {
            self.stalled = None;
            return attempt;
        }
        let limit = self.limit;
        let clock = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + limit)));
        ready!(clock.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took no response bytes within the write limit",
        )))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallLimit<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallLimit<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let attempt = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(attempt, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let attempt = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(attempt, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let attempt = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(attempt, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let attempt = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(attempt, cx)
    }
}

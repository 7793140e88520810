//! Bounds on the API's connections, so that no client can hold what a run needs: at most
//! [`MAX_CONNECTIONS`] open at once across both listeners (the next waits in the kernel's
//! backlog until one closes), and a connection that moves no byte either way for the idle
//! limit is closed. A client that stops reading its event stream, never finishes its request,
//! or keeps a connection open doing nothing gives its slot and its file descriptor back; the
//! run's engine, which needs descriptors for every agent it starts, never runs short of them.

use axum::serve::Listener;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// Connections open at once, both listeners together.
pub const MAX_CONNECTIONS: usize = 256;

/// The slots connections take, shared by the listeners of one server.
#[derive(Debug, Clone)]
pub struct Slots {
    open: Arc<Semaphore>,
    idle: Duration,
}

impl Slots {
    /// [`MAX_CONNECTIONS`] slots; a connection idle for `idle` is closed.
    pub fn new(idle: Duration) -> Self {
        Self {
            open: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            idle,
        }
    }

    /// `listener`, accepting only while a slot is free.
    pub fn bound<L: Listener>(&self, listener: L) -> Bounded<L> {
        Bounded {
            inner: listener,
            slots: self.clone(),
        }
    }
}

/// A listener that takes a slot before each accept.
#[derive(Debug)]
pub struct Bounded<L> {
    inner: L,
    slots: Slots,
}

impl<L: Listener> Listener for Bounded<L> {
    type Io = Held<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let slot = match self.slots.open.clone().acquire_owned().await {
            Ok(slot) => slot,
            // The semaphore is never closed; should it be, accept nothing more.
            Err(_) => std::future::pending().await,
        };
        let (io, addr) = self.inner.accept().await;
        let idle = self.slots.idle;
        let held = Held {
            io,
            _slot: slot,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
        };
        (held, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// An accepted connection holding its slot until dropped; it fails with `TimedOut` once no
/// byte has moved for the idle limit.
#[derive(Debug)]
pub struct Held<Io> {
    io: Io,
    _slot: OwnedSemaphorePermit,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl<Io> Held<Io> {
    /// The connection itself.
    pub fn get_ref(&self) -> &Io {
        &self.io
    }

    /// Something moved: the idle limit counts from now.
    fn moved(&mut self) {
        let next = Instant::now() + self.idle;
        self.deadline.as_mut().reset(next);
    }

    /// Called when the connection would wait: an error once it has waited too long.
    fn waiting<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client moved no byte within the idle limit",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn after<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match polled {
            Poll::Ready(Ok(v)) => {
                self.moved();
                Poll::Ready(Ok(v))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.waiting(cx),
        }
    }
}

impl<Io: AsyncRead + Unpin> AsyncRead for Held<Io> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        self.after(cx, polled)
    }
}

impl<Io: AsyncWrite + Unpin> AsyncWrite for Held<Io> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.after(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.after(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
        self.after(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The address a TCP client connects from, for counting its failed attempts, and over mutual
/// TLS the subject of the certificate it presented.
#[derive(Debug, Clone)]
pub struct Peer(pub std::net::IpAddr, pub Option<Arc<str>>);

impl
    axum::extract::connect_info::Connected<
        axum::serve::IncomingStream<'_, Bounded<tokio::net::TcpListener>>,
    > for Peer
{
    fn connect_info(
        stream: axum::serve::IncomingStream<'_, Bounded<tokio::net::TcpListener>>,
    ) -> Self {
        Peer(stream.remote_addr().ip(), None)
    }
}

impl
    axum::extract::connect_info::Connected<
        axum::serve::IncomingStream<'_, Bounded<super::tls::TlsListener>>,
    > for Peer
{
    fn connect_info(
        stream: axum::serve::IncomingStream<'_, Bounded<super::tls::TlsListener>>,
    ) -> Self {
        let subject = super::tls::subject(stream.io().get_ref()).map(Arc::from);
        Peer(stream.remote_addr().ip(), subject)
    }
}

/// The user at the other end of the Unix socket, as the kernel says (`SO_PEERCRED`); named
/// only when a command needs it, not on every connection.
#[derive(Debug, Clone, Copy)]
pub struct UnixPeer(pub Option<nix::unistd::Uid>);

impl
    axum::extract::connect_info::Connected<
        axum::serve::IncomingStream<'_, Bounded<tokio::net::UnixListener>>,
    > for UnixPeer
{
    fn connect_info(
        stream: axum::serve::IncomingStream<'_, Bounded<tokio::net::UnixListener>>,
    ) -> Self {
        let uid = stream.io().get_ref().peer_cred().ok();
        UnixPeer(uid.map(|cred| nix::unistd::Uid::from_raw(cred.uid())))
    }
}

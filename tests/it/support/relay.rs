//! A TCP relay on 127.0.0.1:0 in front of one loopback server (a Redis), that can be cut: while
//! it is cut every relayed connection is dropped, bytes in transit with it, and new connections
//! are closed as soon as they are accepted. One replica given the relay's address loses its
//! Redis for as long as the test says, while the others, connected directly, keep theirs: a
//! network blip on one host.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A running relay; dropping it stops it.
pub struct Relay {
    /// Where it listens.
    pub addr: SocketAddr,
    cut: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    /// Starts relaying 127.0.0.1:0 to `target` (which must be on loopback).
    pub async fn start(target: SocketAddr) -> Self {
        assert!(target.ip().is_loopback(), "the relay only reaches loopback");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (cut, watching) = watch::channel(false);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *watching.borrow() {
                    drop(client);
                    continue;
                }
                tokio::spawn(relay(client, target, watching.clone()));
            }
        });
        Self { addr, cut, task }
    }

    /// The relay's address as a `redis://` URL.
    pub fn redis_url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// Drops every relayed connection and refuses new ones until [`Relay::restore`].
    pub fn cut(&self) {
        let _ = self.cut.send(true);
    }

    /// Relays again.
    pub fn restore(&self) {
        let _ = self.cut.send(false);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
        let _ = self.cut.send(true);
    }
}

/// Pumps bytes both ways until either side closes or the relay is cut.
async fn relay(mut client: TcpStream, target: SocketAddr, mut cut: watch::Receiver<bool>) {
    let Ok(mut server) = TcpStream::connect(target).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.split();
    let (mut server_read, mut server_write) = server.split();
    let up = pump(&mut client_read, &mut server_write);
    let down = pump(&mut server_read, &mut client_write);
    tokio::select! {
        _ = up => {}
        _ = down => {}
        _ = cut.wait_for(|cut| *cut) => {}
    }
}

async fn pump(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n]).await?;
    }
}

//! The xDS port's connections: accepted, put through TLS when `server.ssl` is on (the API's
//! certificate, ALPN `h2` only), and handed to the gRPC server with what authentication needs
//! to know of them: the sender's address and the names of its client certificate.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use heureka_tls::rustls;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::Connected;

use crate::tls::ServerTls;

/// How long a client has to finish its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections accepted but not yet taken by the gRPC server.
const ACCEPTED_QUEUE: usize = 64;

/// One connection of the xDS port, holding one of the port's connection slots until it closes.
#[derive(Debug)]
pub(crate) struct Connection {
    io: Io,
    _slot: OwnedSemaphorePermit,
}

/// The connection's bytes, plain or TLS.
#[derive(Debug)]
enum Io {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// What a request's extensions carry of its connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct Peer {
    pub(crate) address: Option<SocketAddr>,
    /// The client certificate's names (subject common name, then alternative names).
    pub(crate) certificate: Option<Arc<Vec<String>>>,
}

impl Connected for Connection {
    type ConnectInfo = Peer;

    fn connect_info(&self) -> Peer {
        match &self.io {
            Io::Plain(stream) => Peer {
                address: stream.peer_addr().ok(),
                certificate: None,
            },
            Io::Tls(stream) => {
                let (tcp, session) = stream.get_ref();
                Peer {
                    address: tcp.peer_addr().ok(),
                    certificate: session
                        .peer_certificates()
                        .and_then(|chain| chain.first())
                        .map(|leaf| Arc::new(heureka_tls::certificate_names(leaf))),
                }
            }
        }
    }
}

/// The connections of `listener`, as a stream the gRPC server takes; each TLS handshake runs
/// in a task of its own so a slow client never holds up the others.
pub(crate) fn accept(
    listener: TcpListener,
    tls: Option<Arc<ServerTls>>,
    max_connections: usize,
) -> ReceiverStream<io::Result<Connection>> {
    let (accepted, incoming) = mpsc::channel(ACCEPTED_QUEUE);
    let slots = Arc::new(Semaphore::new(max_connections));
    tokio::spawn(async move {
        loop {
            let accepted_one = tokio::select! {
                accepted_one = listener.accept() => accepted_one,
                // The gRPC server is gone: stop listening.
                () = accepted.closed() => return,
            };
            let stream = match accepted_one {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: the next accept may succeed.
                Err(error) => {
                    tracing::debug!(%error, "xDS port: accept failed");
                    continue;
                }
            };
            // Over the cap the connection is closed at once, before any handshake: open
            // connections and TLS handshakes in progress cost file descriptors and memory the
            // API's listener shares.
            let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                tracing::debug!("xDS port: connection closed, heureka.xds.max-streams reached");
                continue;
            };
            let _ = stream.set_nodelay(true);
            let Some(tls) = &tls else {
                let connection = Connection {
                    io: Io::Plain(stream),
                    _slot: slot,
                };
                if accepted.send(Ok(connection)).await.is_err() {
                    return;
                }
                continue;
            };
            let acceptor = TlsAcceptor::from(h2_only(&tls.current()));
            let accepted = accepted.clone();
            tokio::spawn(async move {
                let peer = stream.peer_addr().ok();
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                    Ok(Ok(stream)) => {
                        let connection = Connection {
                            io: Io::Tls(Box::new(stream)),
                            _slot: slot,
                        };
                        let _ = accepted.send(Ok(connection)).await;
                    }
                    Ok(Err(error)) => {
                        tracing::debug!(?peer, %error, "xDS port: TLS handshake failed")
                    }
                    Err(_) => tracing::debug!(?peer, "xDS port: TLS handshake timed out"),
                }
            });
        }
    });
    ReceiverStream::new(incoming)
}

/// The API's TLS configuration offering only HTTP/2, which gRPC needs.
fn h2_only(config: &Arc<rustls::ServerConfig>) -> Arc<rustls::ServerConfig> {
    let mut config = rustls::ServerConfig::clone(config);
    config.alpn_protocols = vec![b"h2".to_vec()];
    Arc::new(config)
}

impl AsyncRead for Connection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Io::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().io {
            Io::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            Io::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Io::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Io::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}

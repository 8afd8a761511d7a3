//! A TCP proxy on 127.0.0.1 in front of a server, whose open connections a test can cut (as a
//! load balancer or a network blip does) while it keeps accepting new ones.

use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// Forwards every connection to `127.0.0.1:<port>`; lives as long as the test's runtime.
pub struct Proxy {
    /// The service URL through the proxy, as a client is configured with it.
    pub service_url: String,
    open: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    pub async fn to(port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let service_url = format!("http://{}/eureka/", listener.local_addr().unwrap());
        let open = Arc::new(Mutex::new(Vec::new()));
        let connections = open.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", port)).await else {
                    continue;
                };
                let forwarding = tokio::spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                connections.lock().unwrap().push(forwarding.abort_handle());
            }
        });
        Proxy { service_url, open }
    }

    /// Closes every connection open through the proxy, both ways.
    pub fn cut(&self) {
        for connection in self.open.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

//! How a node daemon reaches its launcher, and so which local address it (and its ranks'
//! fabric endpoints) use: the first of the launcher's addresses this host has a route to and
//! connects to, or the pinned interface's.

use crate::error::{LaunchError, Result};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

/// Bound on each connection attempt (a firewall that drops, rather than refuses, SYNs).
const CONNECT_LIMIT: Duration = Duration::from_secs(5);

/// Tries the launcher's addresses in order: connects, then `open(stream, local address)`
/// (bind, authenticate) — the first that succeeds wins, so an address that reaches some other
/// listener (the same address on this host, say) is passed over. The local address is
/// `iface`'s when pinned, else the one the connection left from.
pub(crate) fn reach_launcher<T>(
    candidates: &[SocketAddr],
    iface: Option<&str>,
    mut open: impl FnMut(TcpStream, IpAddr) -> Result<T>,
) -> Result<T> {
    let pinned = iface
        .map(|i| {
            ibdyn_verbs::iface::address_of(i)
                .map_err(|e| LaunchError::Usage(format!("--iface on this host: {e}")))
        })
        .transpose()?;
    let mut tried = Vec::new();
    for &addr in candidates {
        // No route from this host: skip without a connection attempt.
        if ibdyn_verbs::iface::route_source(addr.ip()).is_none() {
            tried.push(format!("{addr}: no route"));
            continue;
        }
        let s = match TcpStream::connect_timeout(&addr, CONNECT_LIMIT) {
            Ok(s) => s,
            Err(e) => {
                tried.push(format!("{addr}: {e}"));
                continue;
            }
        };
        let local = s
            .local_addr()
            .map_err(|e| LaunchError::io("local_addr", e))?
            .ip();
        match open(s, pinned.unwrap_or(local)) {
            Ok(t) => return Ok(t),
            Err(e) => tried.push(format!("{addr}: {e}")),
        }
    }
    Err(LaunchError::Io {
        what: format!(
            "reach the launcher from this host (tried {}; --iface names the interface to use)",
            tried.join(", ")
        ),
        source: std::io::ErrorKind::NotConnected.into(),
    })
}

//! Byte streams as line links: a writer thread fed by a channel (so the event loop never
//! blocks on a slow peer), a reader thread that turns bytes into frames, and the
//! secret-checking hello that opens every TCP connection between launcher and daemons.

use crate::error::{LaunchError, Result};
use crate::protocol::{Hello, Role};
use crate::secret::same_secret;
use crossbeam_channel::Sender;
use ibdyn_pmi::wire::{Command, Frame, Framer};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Where lines for one peer go: a writer thread's queue (peers on the network, which may be
/// slow), or straight into a local socket whose writes are bounded by a send timeout (PMI
/// clients on this node, whose replies are small).
#[derive(Clone)]
pub enum Outbox {
    Queue(Sender<String>),
    Direct(std::sync::Arc<std::os::unix::net::UnixStream>),
}

impl Outbox {
    pub fn direct(stream: std::os::unix::net::UnixStream) -> Outbox {
        Outbox::Direct(std::sync::Arc::new(stream))
    }

    /// Sends one line; an error means the peer is gone (or stopped reading).
    pub fn send(&self, line: String) -> Result<()> {
        match self {
            Outbox::Queue(q) => q.send(line).map_err(|_| {
                LaunchError::io(
                    "send to a peer whose writer thread has ended",
                    std::io::ErrorKind::BrokenPipe.into(),
                )
            }),
            Outbox::Direct(s) => (&**s).write_all(line.as_bytes()).map_err(|e| {
                tracing::debug!("write to a PMI client failed: {e}");
                let _ = s.shutdown(std::net::Shutdown::Both);
                LaunchError::io("write to a PMI client", e)
            }),
        }
    }
}

/// Starts the writer thread of a stream; the thread ends when every sender is dropped.
pub fn start_writer<W: Write + Send + 'static>(w: W, name: String) -> Outbox {
    start_writer_slowed(w, name, Duration::ZERO)
}

/// `start_writer` that holds every line back for `delay` first (a test knob that makes the
/// lines of other links overtake this one's).
pub fn start_writer_slowed<W: Write + Send + 'static>(
    mut w: W,
    name: String,
    delay: Duration,
) -> Outbox {
    let (tx, rx) = crossbeam_channel::unbounded::<String>();
    let spawned = std::thread::Builder::new()
        .name(format!("w-{name}"))
        .spawn(move || {
            for line in rx {
                if !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                if let Err(e) = w.write_all(line.as_bytes()) {
                    tracing::debug!("write to {name} failed: {e}");
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start a writer thread: {e}");
    }
    Outbox::Queue(tx)
}

/// Starts the reader thread of a stream: every frame goes to `on_frame`, then `on_close` once.
pub fn start_reader<R, F, C>(mut r: R, name: String, mut on_frame: F, on_close: C) -> Result<()>
where
    R: Read + Send + 'static,
    F: FnMut(Frame) + Send + 'static,
    C: FnOnce() + Send + 'static,
{
    std::thread::Builder::new()
        .name(format!("r-{name}"))
        .spawn(move || {
            let mut framer = Framer::default();
            let mut buf = vec![0u8; 65536];
            loop {
                match r.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => framer.push(&buf[..n]).into_iter().for_each(&mut on_frame),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        tracing::debug!("read from {name} failed: {e}");
                        break;
                    }
                }
            }
            on_close();
        })
        .map_err(|e| LaunchError::io("start a reader thread", e))?;
    Ok(())
}

/// Reads one line byte by byte (nothing beyond it is consumed), waiting at most `limit`.
pub fn read_first_line(stream: &mut TcpStream, limit: Duration, peer: &str) -> Result<Command> {
    let deadline = Instant::now() + limit;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < 4096 {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        stream
            .set_read_timeout(Some(left))
            .map_err(|e| LaunchError::io("set_read_timeout", e))?;
        match stream.read(&mut byte) {
            Ok(0) => {
                return Err(LaunchError::Protocol {
                    peer: peer.into(),
                    why: "closed before its first line".into(),
                })
            }
            Ok(_) if byte[0] == b'\n' => {
                stream
                    .set_read_timeout(None)
                    .map_err(|e| LaunchError::io("set_read_timeout", e))?;
                let text = String::from_utf8_lossy(&line);
                return Command::parse(&text).map_err(|e| LaunchError::Protocol {
                    peer: peer.into(),
                    why: e.to_string(),
                });
            }
            Ok(_) => line.push(byte[0]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(LaunchError::Timeout {
                    what: format!("the first line from {peer}"),
                    secs: limit.as_secs(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(LaunchError::io(format!("read from {peer}"), e)),
        }
    }
    Err(LaunchError::Protocol {
        peer: peer.into(),
        why: "first line longer than 4096 bytes".into(),
    })
}

/// The opening line of a TCP connection.
pub fn hello(secret: &str, role: Role, index: u32) -> Hello {
    Hello {
        secret: secret.to_string(),
        role,
        index,
        port: None,
        node_uid: None,
    }
}

/// Reads and checks the hello of an accepted connection; returns it when the secret matches.
pub fn accept_hello(stream: &mut TcpStream, secret: &str) -> Result<Hello> {
    let peer = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "unknown peer".into());
    let first = read_first_line(stream, Duration::from_secs(10), &peer)?;
    match Hello::decode(&first) {
        Ok(h) if same_secret(&h.secret, secret) => Ok(h),
        _ => Err(LaunchError::Auth {
            peer,
            why: "no valid job secret in its first line".into(),
        }),
    }
}

/// Accepts every further TCP connection on `listener` and refuses it, logging why (all
/// expected peers are connected by then).
pub fn refuse_late_connections(listener: std::net::TcpListener, secret: String, who: String) {
    let _ = std::thread::Builder::new()
        .name("tcp-refuse".into())
        .spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { continue };
                let (secret, who) = (secret.clone(), who.clone());
                let _ = std::thread::Builder::new().spawn(move || {
                    match accept_hello(&mut s, &secret) {
                        Ok(_) => tracing::warn!(
                            "{who}: refused an unexpected connection (start-up is over)"
                        ),
                        Err(e) => tracing::warn!("{who}: refused TCP connection: {e}"),
                    }
                });
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_to_a_gone_peer_is_an_error_with_the_os_error_as_its_source() {
        let (a, b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        drop(b);
        let err = Outbox::direct(a)
            .send("cmd=x\n".into())
            .expect_err("the peer is gone");
        let source = std::error::Error::source(&err).expect("an OS error as the source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
        let (tx, rx) = crossbeam_channel::unbounded::<String>();
        drop(rx);
        assert!(Outbox::Queue(tx).send("cmd=x\n".into()).is_err());
    }
}

//! Byte streams as line links: a writer thread fed by a channel (so the event loop never
//! blocks on a slow peer), a reader thread that turns bytes into frames, and the
//! challenge-response (HMAC over the job secret) that opens every TCP connection between
//! launcher, daemons and DVM clients.

use crate::error::{LaunchError, Result};
use crate::protocol::{Challenge, Hello, Role, Welcome};
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

    /// Waits (at most `limit`) until the writer thread has taken every queued line.
    pub fn wait_sent(&self, limit: Duration) {
        if let Outbox::Queue(q) = self {
            let deadline = Instant::now() + limit;
            while !q.is_empty() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
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

/// How long each side of the opening waits for the other's line.
const AUTH_LIMIT: Duration = Duration::from_secs(10);

fn write_line(stream: &mut TcpStream, cmd: Command, peer: &str) -> Result<()> {
    stream
        .write_all(cmd.to_line().as_bytes())
        .map_err(|e| LaunchError::io(format!("write to {peer}"), e))
}

/// Opens a connection as `role` / `index`: answers the acceptor's challenge with an HMAC
/// under the job secret, and checks the acceptor's proof in turn (so neither side talks to a
/// peer without the secret). `port` / `node_uid` ride along in the hello.
pub fn connect_auth(
    stream: &mut TcpStream,
    secret: &str,
    role: Role,
    index: u32,
    extra: (Option<u16>, Option<String>),
    peer: &str,
) -> Result<()> {
    let first = read_first_line(stream, AUTH_LIMIT, peer)?;
    let challenge = Challenge::decode(&first).map_err(|e| LaunchError::Protocol {
        peer: peer.into(),
        why: e.to_string(),
    })?;
    let mine = crate::secret::nonce()?;
    let hello = Hello {
        proof: crate::secret::hello_proof(secret, &challenge.0, role.name(), index),
        nonce: mine.clone(),
        role,
        index,
        port: extra.0,
        node_uid: extra.1,
    };
    write_line(stream, hello.encode(), peer)?;
    let answer = read_first_line(stream, AUTH_LIMIT, peer).map_err(|e| LaunchError::Auth {
        peer: peer.into(),
        why: format!("no welcome after our hello ({e}): is it the same job (secret)?"),
    })?;
    match Welcome::decode(&answer) {
        Ok(w) if crate::secret::verify(secret, &["ibdyn-welcome", &mine, &challenge.0], &w.0) => {
            Ok(())
        }
        _ => Err(LaunchError::Auth {
            peer: peer.into(),
            why: "its welcome does not prove the job secret".into(),
        }),
    }
}

/// Challenges an accepted connection, checks its hello's proof and answers its challenge;
/// returns the hello when the peer knows the secret.
pub fn accept_hello(stream: &mut TcpStream, secret: &str) -> Result<Hello> {
    let peer = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "unknown peer".into());
    let nonce = crate::secret::nonce()?;
    write_line(stream, Challenge(nonce.clone()).encode(), &peer)?;
    let first = read_first_line(stream, AUTH_LIMIT, &peer)?;
    let refuse = |why: &str| LaunchError::Auth {
        peer: peer.clone(),
        why: why.into(),
    };
    let h = Hello::decode(&first).map_err(|_| refuse("no ibdyn hello in its first line"))?;
    let idx = h.index.to_string();
    if !crate::secret::verify(
        secret,
        &["ibdyn-hello", &nonce, h.role.name(), &idx],
        &h.proof,
    ) {
        return Err(refuse("its hello does not prove the job secret"));
    }
    let welcome = Welcome(crate::secret::proof(
        secret,
        &["ibdyn-welcome", &h.nonce, &nonce],
    ));
    write_line(stream, welcome.encode(), &peer)?;
    Ok(h)
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

    fn pair() -> (TcpStream, TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let c = TcpStream::connect(l.local_addr().unwrap()).expect("connect");
        (c, l.accept().expect("accept").0)
    }

    #[test]
    fn the_same_secret_opens_a_connection_both_ways() {
        let (mut c, mut a) = pair();
        let t = std::thread::spawn(move || accept_hello(&mut a, "00ff").map(|h| (h.index, h.port)));
        connect_auth(&mut c, "00ff", Role::Daemon, 3, (Some(7), None), "t").expect("accepted");
        assert_eq!(t.join().unwrap().expect("hello"), (3, Some(7)));
    }

    #[test]
    fn a_wrong_secret_is_refused_by_either_side_and_never_sent() {
        let (mut c, mut a) = pair();
        let t = std::thread::spawn(move || {
            let r = accept_hello(&mut a, "00ff");
            drop(a);
            r
        });
        let err = connect_auth(&mut c, "00fe", Role::Daemon, 1, (None, None), "t")
            .expect_err("a wrong secret gets no welcome");
        assert!(matches!(err, LaunchError::Auth { .. }), "{err}");
        let err = t.join().unwrap().expect_err("refused");
        assert!(
            err.to_string().contains("does not prove the job secret"),
            "{err}"
        );

        // A fake acceptor that does not know the secret: the connector refuses its welcome.
        let (mut c, mut a) = pair();
        let t = std::thread::spawn(move || {
            write_line(&mut a, Challenge("01".into()).encode(), "t").unwrap();
            let hello = read_first_line(&mut a, AUTH_LIMIT, "t").unwrap();
            write_line(&mut a, Welcome("00".repeat(32)).encode(), "t").unwrap();
            hello
        });
        let secret = "5ec2e75ec2e75ec2";
        let err = connect_auth(&mut c, secret, Role::Client, 0, (None, None), "t")
            .expect_err("a fake welcome");
        assert!(err.to_string().contains("welcome does not prove"), "{err}");
        let hello = t.join().unwrap().to_line();
        assert!(
            !hello.contains(secret),
            "the secret went on the wire: {hello}"
        );
    }

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

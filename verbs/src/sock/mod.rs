//! The `sock` provider: UD over UDP (datagrams up to the set MTU, may be lost), RC over TCP
//! (one stream per connection), RDMA read/write served by the target's progress loop.

mod poll_skips;
mod rdma;
mod spare;
mod stream;
mod streams;

use crate::auth::{self, Authenticator, TAG_LEN};
use crate::card::{AddressCard, SockAddr};
use crate::config::{FabricConfig, ProviderKind};
use crate::error::{Result, VerbsError};
use crate::provider::{Provider, RcEndpoint, RcEvent};
use crate::RemoteBuf;
use poll_skips::PollSkips;
use rdma::Windows;
use spare::read_spare;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::{Duration, Instant};
use stream::{Fill, Stream};
use streams::StreamSet;

const F_HELLO: u8 = 1;
/// Accepted TCP connections kept while waiting for their HELLO frame; more wait in the
/// kernel's accept queue (an all-to-all wire-up of N ranks brings N-1 at once).
const MAX_UNIDENTIFIED: usize = 64;
/// An unidentified connection may be evicted to make room only after this long without a
/// HELLO. A peer sends its HELLO right after connecting, but 256 ranks on 2 cores can leave
/// it unscheduled for seconds; evicting it then breaks its connection for good.
const HELLO_GRACE: Duration = Duration::from_secs(10);
/// Accept queue length asked of the kernel (capped by `net.core.somaxconn`): std's 128 drops
/// connections of an all-to-all wire-up beyond 128 ranks, which then wait for SYN retries.
const LISTEN_BACKLOG: libc::c_int = 4096;
/// Frame length of a HELLO (type byte + two queue pair numbers + authenticator).
const HELLO_FRAME: usize = 1 + HELLO_LEN;
const HELLO_LEN: usize = 8 + TAG_LEN;
/// Up to this many connected streams are each in the provider's poll(2); beyond, their epoll
/// set is (see `streams.rs`).
const POLL_EACH_MAX: usize = 32;
const F_MSG: u8 = 2;
const F_READ_REQ: u8 = 3;
const F_READ_RESP: u8 = 4;
const F_WRITE_REQ: u8 = 5;
const F_WRITE_RESP: u8 = 6;

struct Qp {
    remote: Option<(SockAddr, RcEndpoint)>,
    stream: Option<Stream>,
    /// Frames queued before the stream exists.
    early: Vec<(u8, Vec<u8>)>,
}

impl Qp {
    /// Everything sent on it has been acknowledged by the peer's kernel.
    fn flushed(&self) -> bool {
        self.early.is_empty() && self.stream.as_ref().is_none_or(|s| s.delivered())
    }

    /// Everything sent on it has been handed to the kernel.
    fn sent(&self) -> bool {
        self.early.is_empty() && self.stream.as_ref().is_none_or(|s| !s.wants_write())
    }
}

pub struct SockProvider {
    udp: UdpSocket,
    listener: TcpListener,
    card: SockAddr,
    /// Keys the HELLO's authenticator (the job secret never goes on the wire).
    hello_auth: Authenticator,
    mtu: usize,
    connect_timeout: Duration,
    drop_rate: f64,
    rng: u64,
    injected: u64,
    next_qp: u32,
    qps: HashMap<u32, Qp>,
    /// Accepted streams that have not sent their HELLO yet, with when they were accepted.
    accepted: Vec<(Stream, Instant)>,
    windows: Windows,
    /// Outstanding emulated RDMA by token: (qp, local address, length).
    reads: HashMap<u64, (u32, usize, usize)>,
    writes: HashMap<u64, u32>,
    /// Completions to report at the next rc_poll (operations on destroyed endpoints).
    failed_ops: Vec<RcEvent>,
    /// Room for one datagram: capacity only (see `read_spare`).
    ud_buf: Vec<u8>,
    /// The connected endpoints' streams, watched for input.
    streams: StreamSet,
    /// Readiness from the last poll(2), so an idle progress costs one system call.
    ready: Option<Ready>,
    ready_from_wait: bool,
    /// Rounds since the last poll (see `poll_skips.rs`).
    skips: PollSkips,
}

#[derive(Default)]
struct Ready {
    udp: bool,
    listener: bool,
    accepted: bool,
    /// Sorted.
    qps: Vec<u32>,
}

/// What a HELLO's authenticator covers: the two queue pair numbers and the accepting
/// side's card (so a hello is good for one endpoint of one process only).
fn hello_subject(qpns: &[u8], acceptor: &SockAddr) -> Vec<u8> {
    let mut b = qpns.to_vec();
    b.extend_from_slice(&AddressCard::Sock(*acceptor).to_bytes());
    b
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// A sock provider's sockets, bound before the process knows its job and rank: a prestarted
/// copy binds them while it waits (in a fresh process, opening the fabric costs 0.1-0.3 ms,
/// mostly first touches of its code and of the kernel's socket state).
pub struct BoundSockets {
    udp: UdpSocket,
    listener: TcpListener,
    ip: std::net::IpAddr,
}

impl BoundSockets {
    pub fn bind(cfg: &FabricConfig) -> Result<BoundSockets> {
        let ip = crate::iface::bind_ip_from_env(cfg.bind_ip)?;
        let udp = UdpSocket::bind((ip, 0)).map_err(|e| VerbsError::sock("bind udp", ip, e))?;
        let listener =
            TcpListener::bind((ip, 0)).map_err(|e| VerbsError::sock("bind tcp", ip, e))?;
        udp.set_nonblocking(true)
            .map_err(|e| VerbsError::sock("nonblock udp", ip, e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| VerbsError::sock("nonblock tcp", ip, e))?;
        // SAFETY: listen(2) on the listening socket we own; a second listen only resizes the
        // accept queue. Failure keeps std's backlog, which works, only slower at scale.
        unsafe { libc::listen(listener.as_raw_fd(), LISTEN_BACKLOG) };
        Ok(BoundSockets { udp, listener, ip })
    }

    /// These sockets if they are bound where `cfg` (and the environment now) says, else new
    /// ones: a prestarted copy learns the node's fabric address (`IBDYN_FABRIC_IP`) only with
    /// its assignment.
    pub fn rebound_for(self, cfg: &FabricConfig) -> Result<BoundSockets> {
        if crate::iface::bind_ip_from_env(cfg.bind_ip)? == self.ip {
            return Ok(self);
        }
        drop(self);
        BoundSockets::bind(cfg)
    }
}

impl SockProvider {
    /// Opens the provider on sockets bound with the same configuration.
    pub fn open_on(cfg: &FabricConfig, sockets: BoundSockets) -> Result<SockProvider> {
        let BoundSockets { udp, listener, ip } = sockets;
        let cfg = &FabricConfig {
            bind_ip: ip,
            ..cfg.clone()
        };
        let udp_port = udp
            .local_addr()
            .map_err(|e| VerbsError::sock("local_addr", ip, e))?
            .port();
        let tcp_port = listener
            .local_addr()
            .map_err(|e| VerbsError::sock("local_addr", ip, e))?
            .port();
        if cfg.ud_mtu > 65000 {
            return Err(VerbsError::InvalidArgument(format!(
                "UD MTU {} exceeds what UDP carries",
                cfg.ud_mtu
            )));
        }
        let seed = (udp_port as u64) << 32
            ^ tcp_port as u64
            ^ std::process::id() as u64
            ^ cfg.local_key.rotate_left(17);
        Ok(SockProvider {
            udp,
            listener,
            card: SockAddr {
                ip: cfg.bind_ip,
                udp_port,
                tcp_port,
            },
            hello_auth: Authenticator::new(cfg.job_secret, auth::SOCK_HELLO),
            mtu: cfg.ud_mtu,
            connect_timeout: cfg
                .retry_budget()
                .clamp(Duration::from_millis(200), Duration::from_secs(10)),
            drop_rate: cfg.effective_drop_rate(),
            rng: seed | 1,
            injected: 0,
            next_qp: 0,
            qps: HashMap::new(),
            accepted: Vec::new(),
            windows: Windows::default(),
            reads: HashMap::new(),
            writes: HashMap::new(),
            failed_ops: Vec::new(),
            ud_buf: Vec::with_capacity(65536),
            streams: StreamSet::new(),
            ready: None,
            ready_from_wait: false,
            skips: PollSkips::default(),
        })
    }

    fn coin(&mut self) -> f64 {
        // xorshift64*: cheap, good enough for a fault-injection knob.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn push(&mut self, qp: u32, kind: u8, parts: &[&[u8]]) -> Result<()> {
        let q = self
            .qps
            .get_mut(&qp)
            .ok_or_else(|| VerbsError::InvalidArgument(format!("no RC endpoint {qp}")))?;
        match q.stream.as_mut() {
            Some(s) => {
                s.push(kind, parts);
                // Broken streams are reported by the next rc_poll.
                let _ = s.flush();
            }
            None => q.early.push((kind, parts.concat())),
        }
        Ok(())
    }

    fn push_owned(&mut self, qp: u32, kind: u8, body: Vec<u8>) -> Result<()> {
        let q = self
            .qps
            .get_mut(&qp)
            .ok_or_else(|| VerbsError::InvalidArgument(format!("no RC endpoint {qp}")))?;
        match q.stream.as_mut() {
            Some(s) => {
                s.push_owned(kind, body);
                let _ = s.flush();
            }
            None => q.early.push((kind, body)),
        }
        Ok(())
    }

    /// Report every outstanding read/write on `qp` as failed (at the next rc_poll).
    fn fail_ops(&mut self, qp: u32, why: &str) {
        let error =
            || VerbsError::RemoteAccess(format!("emulated RDMA on endpoint {qp} aborted: {why}"));
        let reads: Vec<u64> = self
            .reads
            .iter()
            .filter(|(_, r)| r.0 == qp)
            .map(|(t, _)| *t)
            .collect();
        for token in reads {
            self.reads.remove(&token);
            self.failed_ops.push(RcEvent::ReadFailed {
                token,
                error: error(),
            });
        }
        let writes: Vec<u64> = self
            .writes
            .iter()
            .filter(|(_, q)| **q == qp)
            .map(|(t, _)| *t)
            .collect();
        for token in writes {
            self.writes.remove(&token);
            self.failed_ops.push(RcEvent::WriteFailed {
                token,
                error: error(),
            });
        }
    }

    /// Serve or complete one frame; Err means the peer broke the protocol.
    fn on_frame(
        &mut self,
        qp: u32,
        kind: u8,
        body: Vec<u8>,
        out: &mut Vec<RcEvent>,
    ) -> std::result::Result<(), String> {
        let bad = || format!("malformed frame type {kind}");
        match kind {
            F_MSG => out.push(RcEvent::Recv { qp, data: body }),
            F_READ_REQ => {
                let (token, addr, len, rkey) = (
                    u64_at(&body, 0).ok_or_else(bad)?,
                    u64_at(&body, 8).ok_or_else(bad)?,
                    u64_at(&body, 16).ok_or_else(bad)?,
                    u32_at(&body, 24).ok_or_else(bad)?,
                );
                match self.windows.check(rkey, addr, len) {
                    Ok(()) => {
                        // SAFETY: [addr, addr+len) lies inside a window exposed by this process,
                        // whose owner promised it stays valid until released.
                        let data =
                            unsafe { std::slice::from_raw_parts(addr as *const u8, len as usize) };
                        let _ = self.push(qp, F_READ_RESP, &[&token.to_le_bytes(), &[0], data]);
                    }
                    Err(why) => {
                        tracing::debug!("refused emulated RDMA read: {why}");
                        let _ = self.push(
                            qp,
                            F_READ_RESP,
                            &[&token.to_le_bytes(), &[1], why.as_bytes()],
                        );
                    }
                }
            }
            F_READ_RESP => {
                let token = u64_at(&body, 0).ok_or_else(bad)?;
                let status = *body.get(8).ok_or_else(bad)?;
                let data = &body[9..];
                let Some((_, local, len)) = self.reads.remove(&token) else {
                    return Ok(());
                };
                if status == 0 && data.len() == len {
                    // SAFETY: `local` is valid for `len` bytes until this completion (contract
                    // of Fabric::read).
                    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), local as *mut u8, len) };
                    out.push(RcEvent::ReadDone { token });
                } else {
                    let why = if status == 0 {
                        format!("short read reply ({} of {len} bytes)", data.len())
                    } else {
                        String::from_utf8_lossy(data).into_owned()
                    };
                    out.push(RcEvent::ReadFailed {
                        token,
                        error: VerbsError::RemoteAccess(why),
                    });
                }
            }
            F_WRITE_REQ => {
                let (token, addr, rkey) = (
                    u64_at(&body, 0).ok_or_else(bad)?,
                    u64_at(&body, 8).ok_or_else(bad)?,
                    u32_at(&body, 16).ok_or_else(bad)?,
                );
                let data = &body[20..];
                match self.windows.check(rkey, addr, data.len() as u64) {
                    Ok(()) => {
                        // SAFETY: the range lies inside an exposed window (checked above).
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                data.as_ptr(),
                                addr as *mut u8,
                                data.len(),
                            )
                        };
                        let _ = self.push(qp, F_WRITE_RESP, &[&token.to_le_bytes(), &[0]]);
                    }
                    Err(why) => {
                        tracing::debug!("refused emulated RDMA write: {why}");
                        let _ = self.push(
                            qp,
                            F_WRITE_RESP,
                            &[&token.to_le_bytes(), &[1], why.as_bytes()],
                        );
                    }
                }
            }
            F_WRITE_RESP => {
                let token = u64_at(&body, 0).ok_or_else(bad)?;
                let status = *body.get(8).ok_or_else(bad)?;
                if self.writes.remove(&token).is_some() {
                    if status == 0 {
                        out.push(RcEvent::WriteDone { token });
                    } else {
                        let why = String::from_utf8_lossy(&body[9..]).into_owned();
                        out.push(RcEvent::WriteFailed {
                            token,
                            error: VerbsError::RemoteAccess(why),
                        });
                    }
                }
            }
            _ => return Err(bad()),
        }
        Ok(())
    }

    /// Polls the datagram socket, the listener, the connections not yet identified and the
    /// streams for `ms` (and `bell`, which only ends the poll), and records which are ready.
    /// With few streams each is in the poll; with more, the poll holds their epoll set and
    /// only the streams with output waiting (one set costs a system call more per round).
    fn poll_fds(&mut self, ms: i32, bell: Option<BorrowedFd<'_>>) {
        self.skips.polled();
        let pollin = |fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = vec![
            pollin(self.udp.as_raw_fd()),
            pollin(self.listener.as_raw_fd()),
        ];
        fds.extend(self.accepted.iter().map(|(s, _)| pollin(s.fd())));
        let acc = self.accepted.len();
        let set = self
            .streams
            .fd()
            .filter(|_| self.qps.values().filter(|q| q.stream.is_some()).count() > POLL_EACH_MAX);
        let direct = set.is_none();
        // -1: poll(2) skips the entry.
        fds.push(pollin(set.unwrap_or(-1)));
        let mut ids = Vec::new();
        for (id, s) in self
            .qps
            .iter()
            .filter_map(|(id, q)| q.stream.as_ref().map(|s| (*id, s)))
        {
            let events = if direct { libc::POLLIN } else { 0 }
                | if s.wants_write() { libc::POLLOUT } else { 0 };
            if events != 0 {
                fds.push(libc::pollfd {
                    fd: s.fd(),
                    events,
                    revents: 0,
                });
                ids.push(id);
            }
        }
        if let Some(b) = bell {
            fds.push(pollin(b.as_raw_fd()));
        }
        // SAFETY: `fds` is a valid array of pollfd for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            // EINTR or similar: look at everything rather than miss something.
            self.ready = None;
            return;
        }
        let hit = |f: &libc::pollfd| f.revents != 0;
        let mut qps: Vec<u32> = ids
            .into_iter()
            .zip(&fds[3 + acc..])
            .filter(|(_, f)| hit(f))
            .map(|(id, _)| id)
            .collect();
        if hit(&fds[2 + acc]) {
            self.streams.take_ready(&mut qps);
        }
        qps.sort_unstable();
        qps.dedup();
        self.ready = Some(Ready {
            udp: hit(&fds[0]),
            listener: hit(&fds[1]),
            accepted: fds[2..2 + acc].iter().any(hit),
            qps,
        });
    }

    /// When the process has one connection and this round may skip its poll, reads that
    /// stream and skips the poll (true). The round then looks at nothing else; the stream's
    /// frames are taken by `rc_poll`, which takes what a stream holds whether or not it was
    /// polled. A closed stream is left to the poll, which shows it readable, so `rc_poll`
    /// reads its end and reports it. With more connections every round polls: a read of the
    /// one that delivered last would mostly come back empty, a system call for nothing when
    /// messages come from several peers in turn (a collective).
    fn read_only_stream(&mut self) -> bool {
        if self.qps.len() != 1 || !self.accepted.is_empty() || !self.skips.may_skip() {
            return false;
        }
        let Some(s) = self.qps.values_mut().next().and_then(|q| q.stream.as_mut()) else {
            return false;
        };
        if let Fill::Closed(_) = s.fill() {
            return false;
        }
        self.skips.skipped();
        self.ready = Some(Ready::default());
        true
    }

    /// Accept connections and match them to endpoints by their HELLO frame, in rounds of
    /// at most `MAX_UNIDENTIFIED` (the rest wait in the kernel's queue, not dropped).
    fn poll_accepts(&mut self) {
        loop {
            let took = self.accept_some();
            let known = self.identify_accepted();
            if took == 0 || (known == 0 && self.accepted.len() >= MAX_UNIDENTIFIED) {
                break;
            }
        }
    }

    /// Accepts while there is room (evicting a connection silent for `HELLO_GRACE` if none);
    /// returns how many were accepted.
    fn accept_some(&mut self) -> usize {
        let mut took = 0;
        loop {
            if self.accepted.len() >= MAX_UNIDENTIFIED {
                let now = Instant::now();
                let Some(stale) = self
                    .accepted
                    .iter()
                    .position(|(_, t)| now.duration_since(*t) > HELLO_GRACE)
                else {
                    return took;
                };
                tracing::debug!("dropping a TCP connection that sent no HELLO in {HELLO_GRACE:?}");
                self.accepted.swap_remove(stale);
            }
            match self.listener.accept() {
                Ok((tcp, _)) => match Stream::new(tcp) {
                    Ok(mut s) => {
                        s.max_frame = HELLO_FRAME;
                        self.accepted.push((s, Instant::now()));
                        took += 1;
                    }
                    Err(e) => tracing::debug!("accepted stream setup: {e}"),
                },
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return took,
            }
        }
    }

    /// Hands each accepted stream whose HELLO has come to its endpoint, drops closed ones and
    /// those with a bad HELLO; returns how many left the unidentified list.
    fn identify_accepted(&mut self) -> usize {
        let mut gone = 0;
        let mut i = 0;
        while i < self.accepted.len() {
            let s = &mut self.accepted[i].0;
            let closed = matches!(s.fill(), Fill::Closed(_));
            match s.next_frame() {
                Ok(Some((F_HELLO, body))) if body.len() == HELLO_LEN => {
                    let (s, _) = self.accepted.swap_remove(i);
                    gone += 1;
                    let (target, src) = (u32_at(&body, 0), u32_at(&body, 4));
                    if !self
                        .hello_auth
                        .verify(&hello_subject(&body[..8], &self.card), &body[8..])
                    {
                        tracing::debug!("dropped TCP connection with a wrong authenticator");
                        continue;
                    }
                    let (target, src) = (target.unwrap_or(0), src.unwrap_or(0));
                    match self.qps.get_mut(&target) {
                        Some(q)
                            if q.stream.is_none()
                                && !matches!(q.remote, Some((_, ep)) if ep.qpn != src) =>
                        {
                            let mut s = s;
                            s.max_frame = stream::MAX_FRAME;
                            for (k, b) in q.early.drain(..) {
                                s.push_owned(k, b);
                            }
                            let _ = s.flush();
                            self.streams.watch(target, s.fd());
                            q.stream = Some(s);
                        }
                        _ => {
                            tracing::debug!("dropped TCP connection for unknown endpoint {target}")
                        }
                    }
                }
                Ok(None) if !closed => i += 1,
                _ => {
                    self.accepted.swap_remove(i);
                    gone += 1;
                }
            }
        }
        gone
    }
}

/// Move every complete frame out of the stream; Err when the peer broke the framing.
fn take_frames(s: &mut Stream, frames: &mut Vec<(u8, Vec<u8>)>) -> std::result::Result<(), String> {
    while let Some(f) = s.next_frame()? {
        frames.push(f);
    }
    Ok(())
}

impl Provider for SockProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Sock
    }

    fn card(&self) -> AddressCard {
        AddressCard::Sock(self.card)
    }

    fn ud_mtu(&self) -> usize {
        self.mtu
    }

    fn ud_send(&mut self, to: &AddressCard, datagram: &[u8]) -> Result<()> {
        let AddressCard::Sock(a) = to else {
            return Err(VerbsError::ProviderMismatch {
                card: to.provider().to_string(),
                local: "sock".into(),
            });
        };
        if datagram.len() > self.mtu {
            return Err(VerbsError::TooLarge {
                len: datagram.len(),
                max: self.mtu,
            });
        }
        if self.drop_rate > 0.0 && self.coin() < self.drop_rate {
            self.injected += 1;
            return Ok(());
        }
        match self.udp.send_to(datagram, a.udp()) {
            Ok(_) => Ok(()),
            // Unreliable by contract: a full buffer or an ICMP error is a lost datagram.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::ConnectionRefused
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(VerbsError::sock("sendto", a.udp(), e)),
        }
    }

    fn ud_poll(&mut self, out: &mut Vec<Vec<u8>>) -> Result<()> {
        // At most one poll(2) per progress round (none right after `wait`, which just polled,
        // nor when the one connection was read instead); rc_poll uses the same snapshot.
        if !std::mem::take(&mut self.ready_from_wait) && !self.read_only_stream() {
            self.poll_fds(0, None);
        }
        if self.ready.as_ref().is_some_and(|r| !r.udp) {
            return Ok(());
        }
        loop {
            self.ud_buf.clear();
            match read_spare(self.udp.as_raw_fd(), &mut self.ud_buf) {
                Ok(_) => out.push(self.ud_buf.clone()),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::ConnectionRefused
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(VerbsError::sock("recvfrom", self.card.udp(), e)),
            }
        }
    }

    fn rc_create(&mut self) -> Result<RcEndpoint> {
        self.next_qp = self.next_qp.wrapping_add(1).max(1);
        let qpn = self.next_qp;
        self.qps.insert(
            qpn,
            Qp {
                remote: None,
                stream: None,
                early: Vec::new(),
            },
        );
        Ok(RcEndpoint { qpn, psn: 0 })
    }

    fn rc_connect(&mut self, qp: u32, remote_card: &AddressCard, remote: RcEndpoint) -> Result<()> {
        let AddressCard::Sock(ra) = *remote_card else {
            return Err(VerbsError::ProviderMismatch {
                card: remote_card.provider().to_string(),
                local: "sock".into(),
            });
        };
        let local_id = (AddressCard::Sock(self.card).to_bytes(), qp);
        let remote_id = (remote_card.to_bytes(), remote.qpn);
        let q = self
            .qps
            .get_mut(&qp)
            .ok_or_else(|| VerbsError::InvalidArgument(format!("no RC endpoint {qp}")))?;
        q.remote = Some((ra, remote));
        // Exactly one side opens the TCP stream: the one with the larger (card, qpn).
        if local_id > remote_id && q.stream.is_none() {
            let tcp = TcpStream::connect_timeout(&ra.tcp(), self.connect_timeout)
                .map_err(|e| VerbsError::sock("connect", ra.tcp(), e))?;
            let mut s = Stream::new(tcp).map_err(|e| VerbsError::sock("setup", ra.tcp(), e))?;
            let mut hello = Vec::with_capacity(HELLO_LEN);
            hello.extend_from_slice(&remote.qpn.to_le_bytes());
            hello.extend_from_slice(&qp.to_le_bytes());
            let tag = self.hello_auth.tag(&hello_subject(&hello, &ra));
            hello.extend_from_slice(&tag);
            s.push(F_HELLO, &[&hello]);
            for (k, b) in q.early.drain(..) {
                s.push_owned(k, b);
            }
            s.flush().map_err(|e| VerbsError::Socket {
                op: "write",
                addr: ra.tcp().to_string(),
                detail: e,
            })?;
            self.streams.watch(qp, s.fd());
            q.stream = Some(s);
        }
        Ok(())
    }

    fn rc_destroy(&mut self, qp: u32) {
        self.qps.remove(&qp);
        self.fail_ops(qp, "its connection was closed");
    }

    fn rc_send(&mut self, qp: u32, parts: &[&[u8]]) -> Result<()> {
        self.push(qp, F_MSG, parts)
    }

    fn rc_send_owned(&mut self, qp: u32, data: Vec<u8>) -> Result<()> {
        self.push_owned(qp, F_MSG, data)
    }

    fn rc_poll(&mut self, out: &mut Vec<RcEvent>) -> Result<()> {
        out.append(&mut self.failed_ops);
        let ready = self.ready.take();
        if ready.as_ref().is_none_or(|r| r.listener || r.accepted) {
            self.poll_accepts();
        }
        let ids: Vec<u32> = self.qps.keys().copied().collect();
        for qp in ids {
            let readable = ready
                .as_ref()
                .is_none_or(|r| r.qps.binary_search(&qp).is_ok());
            let mut frames = Vec::new();
            let mut broken = None;
            if let Some(s) = self.qps.get_mut(&qp).and_then(|q| q.stream.as_mut()) {
                // A write fails once the peer has gone; what it sent before going must still
                // be read, to its end, before the connection is reported broken.
                let write_failed = s.flush().err();
                let drain = write_failed.is_some();
                loop {
                    let fill = (readable || drain).then(|| s.fill());
                    let before = frames.len();
                    if let Err(e) = take_frames(s, &mut frames) {
                        broken = Some(e);
                        break;
                    }
                    match fill {
                        Some(Fill::Closed(e)) => {
                            broken = Some(e);
                            break;
                        }
                        Some(Fill::Open(read)) if drain && (read > 0 || frames.len() > before) => {}
                        _ => break,
                    }
                }
                if let Some(e) = write_failed {
                    broken.get_or_insert(e);
                }
            }
            for (kind, body) in frames {
                if let Err(e) = self.on_frame(qp, kind, body, out) {
                    broken = Some(e);
                    break;
                }
            }
            if let Some(e) = broken {
                self.qps.remove(&qp);
                self.fail_ops(qp, &e);
                out.push(RcEvent::Broken {
                    qp,
                    error: VerbsError::Socket {
                        op: "rc stream",
                        addr: format!("qp {qp}"),
                        detail: e,
                    },
                });
            }
        }
        Ok(())
    }

    fn rc_flushed(&self) -> bool {
        self.qps.values().all(Qp::flushed)
    }

    fn rc_sent(&self, qp: u32) -> bool {
        self.qps.get(&qp).is_none_or(Qp::sent)
    }

    fn expose(&mut self, ptr: *const u8, len: usize) -> Result<RemoteBuf> {
        let rkey = self.windows.expose(ptr as u64, len as u64);
        Ok(RemoteBuf {
            addr: ptr as u64,
            len: len as u64,
            rkey,
        })
    }

    fn release(&mut self, buf: &RemoteBuf) {
        self.windows.release(buf.rkey);
    }

    unsafe fn rc_read(
        &mut self,
        qp: u32,
        remote: RemoteBuf,
        local: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<()> {
        let mut req = Vec::with_capacity(28);
        req.extend_from_slice(&token.to_le_bytes());
        req.extend_from_slice(&remote.addr.to_le_bytes());
        req.extend_from_slice(&(len as u64).to_le_bytes());
        req.extend_from_slice(&remote.rkey.to_le_bytes());
        self.push(qp, F_READ_REQ, &[&req])?;
        self.reads.insert(token, (qp, local as usize, len));
        Ok(())
    }

    unsafe fn rc_write(
        &mut self,
        qp: u32,
        remote: RemoteBuf,
        local: *const u8,
        len: usize,
        token: u64,
    ) -> Result<()> {
        // SAFETY: the caller promised `local` is readable for `len` bytes.
        let data = unsafe { std::slice::from_raw_parts(local, len) };
        let mut hdr = Vec::with_capacity(20);
        hdr.extend_from_slice(&token.to_le_bytes());
        hdr.extend_from_slice(&remote.addr.to_le_bytes());
        hdr.extend_from_slice(&remote.rkey.to_le_bytes());
        self.push(qp, F_WRITE_REQ, &[&hdr, data])?;
        self.writes.insert(token, qp);
        Ok(())
    }

    fn wait(&mut self, timeout: Duration, bell: Option<BorrowedFd<'_>>) {
        self.poll_fds(crate::provider::poll_ms(timeout), bell);
        self.ready_from_wait = self.ready.is_some();
    }

    fn injected_drops(&self) -> u64 {
        self.injected
    }

    fn reports_peer_exit(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    /// An all-to-all wire-up brings more HELLO-carrying connections at once than the
    /// unidentified list holds: forced here by queueing 150 of them in the kernel before the
    /// provider looks. Every one must reach its endpoint (the list used to drop the oldest at
    /// once, cutting the peers' connections).
    #[test]
    fn more_connections_at_once_than_the_unidentified_list_holds_all_reach_their_endpoints() {
        let cfg = FabricConfig {
            provider: Some(ProviderKind::Sock),
            job_secret: 7,
            ..FabricConfig::default()
        };
        let mut p =
            SockProvider::open_on(&cfg, BoundSockets::bind(&cfg).expect("bind")).expect("open");
        let n = 150u32;
        let qps: Vec<u32> = (0..n).map(|_| p.rc_create().expect("qp").qpn).collect();
        let addr = p.card.tcp();
        let mut peers = Vec::new();
        for (i, &qp) in qps.iter().enumerate() {
            let mut s = TcpStream::connect(addr).expect("connect");
            let mut hello = Vec::new();
            hello.extend_from_slice(&qp.to_le_bytes());
            hello.extend_from_slice(&(1000 + i as u32).to_le_bytes());
            let tag = p.hello_auth.tag(&hello_subject(&hello, &p.card));
            hello.extend_from_slice(&tag);
            let mut frame = ((HELLO_LEN + 1) as u32).to_le_bytes().to_vec();
            frame.push(F_HELLO);
            frame.extend_from_slice(&hello);
            s.write_all(&frame).expect("hello");
            peers.push(s);
        }
        assert!(n as usize > MAX_UNIDENTIFIED);
        let end = Instant::now() + Duration::from_secs(20);
        while qps.iter().any(|q| p.qps[q].stream.is_none()) {
            assert!(Instant::now() < end, "not every connection was matched");
            p.poll_accepts();
        }
        assert!(p.accepted.is_empty());
    }
}

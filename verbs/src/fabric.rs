//! `Fabric`: one provider plus the shared UD control channel and RC connection manager.

use crate::card::AddressCard;
use crate::config::{FabricConfig, ProviderKind};
use crate::conn_wire::{self, ControlMsg};
use crate::connmgr::{ConnManager, ConnStats, Io, Op};
use crate::error::{Result, VerbsError};
use crate::pieces::Pieces;
use crate::preopen::Preopened;
use crate::provider::{Provider, RcEvent};
use crate::ud_channel::{ChannelEvent, ChannelStats, UdChannel};
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

/// A window of memory another process may RDMA-read (or write); travels in rendezvous headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RemoteBuf {
    pub addr: u64,
    pub len: u64,
    pub rkey: u32,
}

impl RemoteBuf {
    pub const WIRE_LEN: usize = 20;
    pub fn to_bytes(&self) -> [u8; 20] {
        let mut b = [0u8; 20];
        b[0..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..16].copy_from_slice(&self.len.to_le_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_le_bytes());
        b
    }
    pub fn from_bytes(b: &[u8]) -> Result<RemoteBuf> {
        if b.len() != Self::WIRE_LEN {
            return Err(VerbsError::InvalidArgument(format!(
                "remote buffer descriptor of {} bytes",
                b.len()
            )));
        }
        Ok(RemoteBuf {
            addr: u64::from_le_bytes(b[0..8].try_into().expect("8 bytes")),
            len: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
            rkey: u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")),
        })
    }
}

/// What `progress` reports.
#[derive(Debug)]
pub enum Event {
    /// A message from a peer over its RC connection (whole, in order per peer).
    Message {
        peer: u64,
        data: Vec<u8>,
    },
    ReadDone {
        token: u64,
    },
    ReadFailed {
        token: u64,
        error: VerbsError,
    },
    WriteDone {
        token: u64,
    },
    WriteFailed {
        token: u64,
        error: VerbsError,
    },
    /// A control datagram (sent with `control_send`), delivered once.
    Control {
        from: AddressCard,
        data: Vec<u8>,
    },
    /// A `control_send` that was never acknowledged.
    ControlFailed {
        to: AddressCard,
        error: VerbsError,
    },
    /// The peer is unreachable; later operations towards it fail.
    PeerFailed {
        peer: u64,
        error: VerbsError,
    },
    /// With `FabricConfig::patient_connects`: the connect handshake with the peer has not
    /// finished after `waited` and was started over; its operations still wait. The owner
    /// may `abandon` the peer.
    ConnectSlow {
        peer: u64,
        waited: Duration,
    },
}

/// Counters for tests, logs and `ibdyn info`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FabricStats {
    pub channel: ChannelStats,
    pub conn: ConnStats,
    pub connections: usize,
    /// `sock` drop knob: UD datagrams deliberately not sent.
    pub injected_drops: u64,
}

pub struct Fabric {
    provider: Box<dyn Provider>,
    channel: UdChannel,
    cm: ConnManager,
    scratch: Vec<Vec<u8>>,
    rc_events: Vec<RcEvent>,
    ch_events: Vec<ChannelEvent>,
    /// Events of calls outside `progress` (`abandon`), reported by the next one.
    later: Vec<Event>,
    pieces: Pieces,
}

impl Fabric {
    /// Open the provider chosen by `cfg` (see [`FabricConfig::provider`]).
    pub fn open(cfg: FabricConfig) -> Result<Fabric> {
        Self::open_with(cfg, None)
    }

    /// Like `open`, on what was opened earlier with the same configuration, if anything.
    pub fn open_with(cfg: FabricConfig, early: Option<Preopened>) -> Result<Fabric> {
        let early = match early {
            Some(early) => early,
            None => Preopened::open(&cfg)?,
        };
        let provider = early.into_provider(&cfg)?;
        tracing::debug!(
            "fabric open: provider {}, card {}",
            provider.kind(),
            provider.card()
        );
        Self::with_provider(cfg, provider)
    }

    /// Build a fabric on any provider (tests use an in-process fake).
    pub fn with_provider(cfg: FabricConfig, provider: Box<dyn Provider>) -> Result<Fabric> {
        let channel = UdChannel::new(&cfg, &provider.card(), provider.ud_mtu(), incarnation())?;
        Ok(Fabric {
            provider,
            channel,
            cm: ConnManager::new(&cfg),
            scratch: Vec::new(),
            rc_events: Vec::new(),
            ch_events: Vec::new(),
            later: Vec::new(),
            pieces: Pieces::new(cfg.max_transfer),
        })
    }

    pub fn provider(&self) -> ProviderKind {
        self.provider.kind()
    }

    pub fn card(&self) -> AddressCard {
        self.provider.card()
    }

    /// Reliable, ordered per peer, non-blocking: connects on first use and queues meanwhile.
    pub fn send(&mut self, peer: u64, card: &AddressCard, parts: &[&[u8]]) -> Result<()> {
        let data = if parts.len() == 1 {
            parts[0].to_vec()
        } else {
            parts.concat()
        };
        self.cm.submit(
            &mut *self.provider,
            &mut self.channel,
            peer,
            card,
            Some(Op::Send(data)),
            Instant::now(),
        )
    }

    /// Start connecting to `peer` without sending anything (eager wire-up). Idempotent.
    pub fn connect(&mut self, peer: u64, card: &AddressCard) -> Result<()> {
        self.cm.submit(
            &mut *self.provider,
            &mut self.channel,
            peer,
            card,
            None,
            Instant::now(),
        )
    }

    /// True once the RC connection to `peer` is established (from this side's view).
    pub fn is_connected(&self, peer: u64) -> bool {
        self.cm.is_connected(peer)
    }

    /// True when `peer`'s exit will show as a broken connection without any traffic: it is
    /// connected, over a provider whose connections break when the peer's process ends.
    pub fn reports_exit_of(&self, peer: u64) -> bool {
        self.provider.reports_peer_exit() && self.cm.is_connected(peer)
    }

    /// Make memory readable by peers; the returned descriptor goes into a rendezvous header.
    /// The memory must stay valid and unmoved until [`Fabric::release`].
    pub fn expose(&mut self, ptr: *const u8, len: usize) -> Result<RemoteBuf> {
        if ptr.is_null() && len > 0 {
            return Err(VerbsError::InvalidArgument(
                "expose of a null pointer".into(),
            ));
        }
        self.provider.expose(ptr, len)
    }

    pub fn release(&mut self, buf: &RemoteBuf) {
        self.provider.release(buf)
    }

    /// RDMA read of `remote` (exposed by `peer`) into `local[..len]`; completes with
    /// `Event::ReadDone { token }` or `Event::ReadFailed`.
    ///
    /// # Safety
    /// `local` must be valid for `len` bytes of writes, and not otherwise accessed, until the
    /// completion event for `token` has been returned by `progress`.
    pub unsafe fn read(
        &mut self,
        peer: u64,
        card: &AddressCard,
        remote: RemoteBuf,
        local: *mut u8,
        len: usize,
        token: u64,
    ) -> Result<()> {
        if len as u64 > remote.len {
            return Err(VerbsError::InvalidArgument(format!(
                "read of {len} bytes from a {}-byte remote buffer",
                remote.len
            )));
        }
        self.transfer(peer, card, remote, local as usize, len, token, false)
    }

    /// RDMA write of `local[..len]` into `remote`; completes with `Event::WriteDone { token }`.
    ///
    /// # Safety
    /// `local` must be valid for `len` bytes of reads until the completion event for `token`.
    pub unsafe fn write(
        &mut self,
        peer: u64,
        card: &AddressCard,
        remote: RemoteBuf,
        local: *const u8,
        len: usize,
        token: u64,
    ) -> Result<()> {
        if len as u64 > remote.len {
            return Err(VerbsError::InvalidArgument(format!(
                "write of {len} bytes into a {}-byte remote buffer",
                remote.len
            )));
        }
        self.transfer(peer, card, remote, local as usize, len, token, true)
    }

    /// Submits a read or write, in pieces when it is longer than one provider transfer.
    #[allow(clippy::too_many_arguments)]
    fn transfer(
        &mut self,
        peer: u64,
        card: &AddressCard,
        remote: RemoteBuf,
        local: usize,
        len: usize,
        token: u64,
        write: bool,
    ) -> Result<()> {
        Pieces::check_token(token)?;
        let op = |offset: usize, len: usize, token: u64| {
            let remote = RemoteBuf {
                addr: remote.addr + offset as u64,
                len: len as u64,
                rkey: remote.rkey,
            };
            let local = local + offset;
            match write {
                false => Op::Read {
                    remote,
                    local,
                    len,
                    token,
                },
                true => Op::Write {
                    remote,
                    local,
                    len,
                    token,
                },
            }
        };
        let now = Instant::now();
        let submit = |f: &mut Fabric, op: Op| {
            let (prov, ch) = (&mut *f.provider, &mut f.channel);
            f.cm.submit(prov, ch, peer, card, Some(op), now)
        };
        if len <= self.pieces.max() {
            return submit(self, op(0, len, token));
        }
        let pieces = self.pieces.split(token, len, write);
        for (i, p) in pieces.iter().enumerate() {
            if let Err(e) = submit(self, op(p.offset, p.len, p.token)) {
                return match self.pieces.unsent(&pieces[i..], e) {
                    Some(e) => Err(e),
                    None => Ok(()),
                };
            }
        }
        Ok(())
    }

    /// Reliable datagram over UD to any card (no connection); delivered once as `Event::Control`.
    pub fn control_send(&mut self, to: &AddressCard, data: &[u8]) -> Result<()> {
        if to.provider() != self.provider.kind() {
            return Err(VerbsError::ProviderMismatch {
                card: to.provider().to_string(),
                local: self.provider.kind().to_string(),
            });
        }
        self.channel
            .send(to, &conn_wire::encode_user(data), Instant::now())?;
        // Put it on the wire now rather than at the next progress.
        let provider = &mut self.provider;
        self.channel.tick(
            Instant::now(),
            &mut |c, d| provider.ud_send(c, d),
            &mut self.ch_events,
        );
        Ok(())
    }

    /// Gives up on `peer` (see `FabricConfig::patient_connects`): its waiting operations
    /// fail, and the next `progress` reports it failed with `reason`.
    pub fn abandon(&mut self, peer: u64, reason: String) {
        self.cm
            .fail(&mut *self.provider, peer, reason, &mut self.later);
    }

    /// Whether something sent to `peer` has not left this process yet: it waits for the
    /// connection, or in the provider's buffer of the connection. Sending it on then needs
    /// this process's progress, whatever the peer does.
    pub fn holds_back(&self, peer: u64) -> bool {
        let prov = &*self.provider;
        self.cm.holds_back(peer, |qp| prov.rc_sent(qp))
    }

    /// Drive everything; never blocks.
    pub fn progress(&mut self, out: &mut Vec<Event>) -> Result<()> {
        let from = out.len();
        let r = self.progress_all(out);
        self.pieces.gather(out, from);
        r
    }

    fn progress_all(&mut self, out: &mut Vec<Event>) -> Result<()> {
        out.append(&mut self.later);
        let now = Instant::now();
        self.scratch.clear();
        self.provider.ud_poll(&mut self.scratch)?;
        {
            let provider = &mut self.provider;
            for d in self.scratch.iter() {
                self.channel.on_datagram(
                    d,
                    &mut |c, b| provider.ud_send(c, b),
                    &mut self.ch_events,
                );
            }
        }
        let mut events = std::mem::take(&mut self.ch_events);
        for ev in events.drain(..) {
            match ev {
                ChannelEvent::Delivered { from, data } => match conn_wire::decode(&data) {
                    Some(ControlMsg::User(body)) => out.push(Event::Control {
                        from,
                        data: body.to_vec(),
                    }),
                    Some(ControlMsg::Handshake(h)) => {
                        let mut io = Io {
                            prov: &mut *self.provider,
                            ch: &mut self.channel,
                            now,
                            out,
                        };
                        if !self.cm.on_handshake(&mut io, h, from) {
                            self.channel.stats.dropped_malformed += 1;
                        }
                    }
                    None => self.channel.stats.dropped_malformed += 1,
                },
                ChannelEvent::Failed { to, seq, error } => {
                    let mut io = Io {
                        prov: &mut *self.provider,
                        ch: &mut self.channel,
                        now,
                        out,
                    };
                    if !self.cm.on_undelivered(&mut io, &to, seq) {
                        out.push(Event::ControlFailed { to, error });
                    }
                }
            }
        }
        self.ch_events = events;
        self.cm.tick(&mut Io {
            prov: &mut *self.provider,
            ch: &mut self.channel,
            now,
            out,
        });
        {
            let provider = &mut self.provider;
            self.channel
                .tick(now, &mut |c, d| provider.ud_send(c, d), &mut self.ch_events);
        }
        self.rc_events.clear();
        self.provider.rc_poll(&mut self.rc_events)?;
        for ev in self.rc_events.drain(..) {
            match ev {
                RcEvent::Recv { qp, data } => match self.cm.on_recv(&mut *self.provider, qp, out) {
                    Some(peer) => out.push(Event::Message { peer, data }),
                    None => tracing::debug!("message on unknown qp {qp} dropped"),
                },
                RcEvent::ReadDone { token } => out.push(Event::ReadDone { token }),
                RcEvent::ReadFailed { token, error } => {
                    out.push(Event::ReadFailed { token, error })
                }
                RcEvent::WriteDone { token } => out.push(Event::WriteDone { token }),
                RcEvent::WriteFailed { token, error } => {
                    out.push(Event::WriteFailed { token, error })
                }
                RcEvent::Broken { qp, error } => {
                    self.cm.on_broken(&mut *self.provider, qp, error, out)
                }
            }
        }
        Ok(())
    }

    /// Block until traffic may have arrived, a retransmission is due, or `timeout` passed.
    pub fn wait(&mut self, timeout: Duration) {
        self.wait_or_bell(timeout, None)
    }

    /// `wait`, also ended by `bell` becoming readable (a shared-memory queue's bell, so that
    /// one blocking wait serves both paths).
    pub fn wait_or_bell(&mut self, timeout: Duration, bell: Option<BorrowedFd<'_>>) {
        let now = Instant::now();
        let mut t = timeout;
        for d in [self.channel.next_deadline(), self.cm.next_deadline()]
            .into_iter()
            .flatten()
        {
            t = t.min(d.saturating_duration_since(now));
        }
        if !self.ch_events.is_empty() {
            return;
        }
        self.provider.wait(t, bell);
    }

    /// True when everything handed to the fabric has left this process: no operation waits
    /// for a connection, the provider has no unsent bytes, every control datagram went out once.
    /// A process must not exit before this holds (what it sent would be lost).
    pub fn flushed(&self) -> bool {
        self.cm.quiescent() && self.provider.rc_flushed() && self.channel.all_sent()
    }

    /// Tests: report endpoint `qp` as broken, as a provider would.
    #[cfg(test)]
    pub(crate) fn inject_broken_for_test(&mut self, qp: u32, out: &mut Vec<Event>) {
        let error = VerbsError::InvalidArgument(format!("endpoint {qp} broke (injected)"));
        self.cm.on_broken(&mut *self.provider, qp, error, out);
    }

    pub fn connection_count(&self) -> usize {
        self.cm.connection_count()
    }

    pub fn stats(&self) -> FabricStats {
        FabricStats {
            channel: self.channel.stats,
            conn: self.cm.stats,
            connections: self.cm.connection_count(),
            injected_drops: self.provider.injected_drops(),
        }
    }

    /// Largest `control_send` payload.
    pub fn max_control_message(&self) -> usize {
        self.channel.max_message() - 1
    }
}

/// A number that differs between incarnations of a process bound to the same address.
fn incarnation() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ ((std::process::id() as u64) << 40) ^ 0x9e37_79b9_7f4a_7c15
}

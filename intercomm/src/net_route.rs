//! The fabric route: packets go over the peer's RC connection (made on first use); a
//! rendezvous's data is registered by the sender and RDMA-read by the receiver. The route
//! also keeps the UD control datagrams the fabric delivers, for the dynamic-process layer.

use crate::error::{CommError, Result};
use crate::fabric_share::SharedFabric;
use crate::gpid::Gpid;
use crate::route::{Pull, Pulled, Route, Sink};
use ibdyn_verbs::{AddressCard, Event, Fabric, RemoteBuf};
use std::collections::VecDeque;
use std::os::fd::BorrowedFd;
use std::sync::MutexGuard;
use std::time::Duration;

/// Progress passes between two looks at an idle fabric (it then only has connect requests).
const IDLE_POLL_EVERY: u64 = 1024;

pub(crate) struct NetRoute {
    shared: Option<SharedFabric>,
    events: Vec<Event>,
    polls: u64,
    /// Set once the fabric carries traffic: from then on every progress pass polls it.
    active: bool,
    /// Set while a control datagram is awaited (idle waits then block on the fabric).
    expect_control: bool,
    control_inbox: VecDeque<(AddressCard, Vec<u8>)>,
    /// Control datagrams that were never acknowledged, with why.
    control_failures: VecDeque<(AddressCard, String)>,
    /// Answers a control datagram as it arrives, instead of keeping it for a wait (see
    /// `ControlResponder`).
    responder: Option<ControlResponder>,
}

/// Looks at each control datagram as it arrives: `Some(reply)` sends `reply` back to its
/// sender and drops the datagram (a connect to a port this process no longer has is refused
/// even while no accept waits), `None` keeps it for the waits that take control datagrams.
pub type ControlResponder = Box<dyn FnMut(&[u8]) -> Option<Vec<u8>>>;

impl NetRoute {
    pub fn new(fabric: Option<Fabric>) -> NetRoute {
        NetRoute {
            shared: fabric.map(SharedFabric::new),
            events: Vec::new(),
            polls: 0,
            active: false,
            expect_control: false,
            control_inbox: VecDeque::new(),
            control_failures: VecDeque::new(),
            responder: None,
        }
    }

    /// Sets the responder that looks at control datagrams as they arrive.
    pub fn set_control_responder(&mut self, r: ControlResponder) {
        self.responder = Some(r);
    }

    /// Runs `f` with the fabric, if this process has one.
    pub fn with_fabric<R>(&self, f: impl FnOnce(&Fabric) -> R) -> Option<R> {
        self.shared.as_ref().map(|sh| f(&sh.lock()))
    }

    pub fn has_fabric(&self) -> bool {
        self.shared.is_some()
    }

    /// The fabric, for traffic to a process on another node.
    fn fabric_mut(&mut self) -> Result<MutexGuard<'_, Fabric>> {
        self.shared.as_ref().map(|sh| sh.lock()).ok_or_else(|| {
            CommError::InvalidArgument(
                "this process has no fabric endpoint, so it cannot reach processes on other \
                 nodes (see the warning logged at start-up; IBDYN_PROVIDER=sock forces sockets)"
                    .into(),
            )
        })
    }

    /// Whether a progress pass should poll the fabric now. Until the fabric carries traffic
    /// it only has connect requests to deliver, so it is looked at rarely, and not at all
    /// without `look_for_connects` (a short spin, after which the caller waits the general way).
    #[inline]
    pub fn due(&mut self, look_for_connects: bool) -> bool {
        if self.active || self.stashed() {
            return true;
        }
        if look_for_connects {
            self.polls += 1;
            return self.polls.is_multiple_of(IDLE_POLL_EVERY);
        }
        false
    }

    /// Whether something sent to `g` still waits in this process (`Fabric::holds_back`).
    #[inline(never)]
    pub fn holds_back(&self, g: Gpid) -> bool {
        self.with_fabric(|f| f.holds_back(g.to_u64()))
            .unwrap_or(false)
    }

    /// Stops waiting for `g`'s connection: what waits for it fails with `why`, reported by
    /// the next progress pass.
    pub fn abandon(&mut self, g: Gpid, why: String) {
        if let Some(sh) = self.shared.as_ref() {
            sh.lock().abandon(g.to_u64(), why);
        }
    }

    /// Whether `g`'s exit will end its connection, unasked (see `Fabric::reports_exit_of`).
    pub fn reports_exit_of(&self, g: Gpid) -> bool {
        self.with_fabric(|f| f.reports_exit_of(g.to_u64()))
            .unwrap_or(false)
    }

    /// Whether an idle wait should block in the fabric's poll rather than on the
    /// shared-memory doorbell: the fabric carries traffic, or a control datagram is awaited.
    pub fn blocks_idle_waits(&self) -> bool {
        self.shared.is_some() && (self.active || self.expect_control)
    }

    /// Sends one reliable datagram over the fabric's UD control channel.
    pub fn control_send(&mut self, to: &AddressCard, data: &[u8]) -> Result<()> {
        let sh = self.shared.as_ref().ok_or_else(no_fabric)?;
        let r = sh.lock().control_send(to, data);
        Ok(r?)
    }

    /// Whether the idle hook left events for the next progress pass.
    fn stashed(&self) -> bool {
        self.shared.as_ref().is_some_and(|sh| sh.stashed())
    }

    /// Blocks in the fabric's poll, which `bell` (the shared-memory queue's) also ends.
    /// Returns at once when the progress thread or a process-manager wait took events aside
    /// (the fabric's sockets no longer show them; they are stashed under the fabric's lock).
    pub fn wait_or_bell(&mut self, t: Duration, bell: BorrowedFd<'_>) {
        if let Some(sh) = self.shared.as_ref() {
            let mut fabric = sh.lock();
            if !sh.stashed() {
                fabric.wait_or_bell(t, Some(bell));
            }
        }
    }

    /// Marks whether a control datagram is awaited.
    pub fn expect_control(&mut self, on: bool) {
        self.expect_control = on;
    }

    /// Removes and returns the oldest control datagram for which `want` holds.
    pub fn take_control(
        &mut self,
        mut want: impl FnMut(&[u8]) -> bool,
    ) -> Option<(AddressCard, Vec<u8>)> {
        let i = self.control_inbox.iter().position(|(_, d)| want(d))?;
        self.control_inbox.remove(i)
    }

    /// The oldest control datagram that was never acknowledged: its destination and why.
    pub fn take_control_failure(&mut self) -> Option<(AddressCard, String)> {
        self.control_failures.pop_front()
    }
}

impl Route for NetRoute {
    type Link = AddressCard;

    fn send(&mut self, card: &mut AddressCard, to: Gpid, parts: &[&[u8]]) -> Result<()> {
        self.fabric_mut()?.send(to.to_u64(), card, parts)?;
        self.active = true;
        Ok(())
    }

    fn expose(&mut self, buf: &[u8]) -> Result<Option<RemoteBuf>> {
        Ok(Some(self.fabric_mut()?.expose(buf.as_ptr(), buf.len())?))
    }

    fn release(&mut self, exposed: &RemoteBuf) {
        if let Some(sh) = self.shared.as_ref() {
            sh.lock().release(exposed);
        }
    }

    unsafe fn pull(&mut self, card: &AddressCard, pull: &Pull) -> Result<Pulled> {
        let remote = RemoteBuf {
            addr: pull.rts.addr,
            len: pull.rts.len,
            rkey: pull.rts.rkey,
        };
        let mut f = self.fabric_mut()?;
        // SAFETY: the caller lends `dst` for `len` bytes until the read completes (ReadDone
        // or ReadFailed of `token`, handed to the sink).
        unsafe {
            f.read(
                pull.from.to_u64(),
                card,
                remote,
                pull.dst,
                pull.len,
                pull.token,
            )?
        };
        Ok(Pulled::Started)
    }

    fn progress(&mut self, sink: &mut impl Sink<Self>) -> Result<bool> {
        let Some(sh) = self.shared.as_mut() else {
            return Ok(false);
        };
        let mut events = std::mem::take(&mut self.events);
        sh.progress(&mut events)?;
        let did = !events.is_empty();
        // Connection traffic makes every progress pass poll the fabric; control datagrams
        // (a spawn's wire-up) do not: they are awaited explicitly.
        self.active |= events
            .iter()
            .any(|e| !matches!(e, Event::Control { .. } | Event::ControlFailed { .. }));
        for ev in events.drain(..) {
            match ev {
                Event::Message { data, .. } => sink.packet(self, &data),
                Event::ReadDone { token } => sink.read_done(self, token),
                Event::ReadFailed { token, error } => sink.read_failed(self, token, error),
                Event::Control { from, data } => {
                    match self.responder.as_mut().and_then(|r| r(&data)) {
                        Some(reply) => {
                            if let Err(e) = self.control_send(&from, &reply) {
                                tracing::debug!("could not answer {from:?} at once: {e}");
                            }
                        }
                        None => self.control_inbox.push_back((from, data)),
                    }
                }
                Event::ControlFailed { to, error } => {
                    tracing::debug!("control datagram to {to:?} failed: {error}");
                    self.control_failures.push_back((to, error.to_string()));
                }
                // The protocol issues no RDMA writes.
                Event::WriteDone { .. } | Event::WriteFailed { .. } => {}
                Event::PeerFailed { peer, error } => {
                    sink.peer_failed(self, Gpid::from_u64(peer), &error.to_string())
                }
                Event::ConnectSlow { peer, waited } => {
                    sink.connect_slow(self, Gpid::from_u64(peer), waited)
                }
            }
        }
        self.events = events;
        Ok(did)
    }

    fn wait(&mut self, t: Duration) {
        if let Some(sh) = self.shared.as_ref() {
            sh.lock().wait(t);
        }
    }
}

pub(crate) fn no_fabric() -> CommError {
    CommError::InvalidArgument(
        "this process has no fabric endpoint (control datagrams need one)".into(),
    )
}

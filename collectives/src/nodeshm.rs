//! Collectives of a team whose processes all share one node, through the node's shared-memory
//! collective buffer (`ibdyn_shm::CollBuf`): one copy in, flags, one copy out, instead of
//! messages through the point-to-point queues. Blocking forms with the team's rank 0 as the
//! root (the leader): barrier, bcast, reduce, allreduce, gather, allgather.
//!
//! The buffer is made on first use, inside the first operation that wants it (every member
//! is then in the same call): the leader creates it and sends its name to each member over
//! point-to-point, each member maps it and answers, the leader unlinks the name and sends the
//! verdict (all mapped, or everyone stays on point-to-point for good).

use crate::coll::Collectives;
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::p2p::PointToPoint;
use ibdyn_shm::CollBuf;
use std::cell::{Ref, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};

enum State {
    Untried,
    Ready(CollBuf),
    Off,
}

/// The collective buffer of a node-local team, made once the team has shown it is not a
/// one-off (see `get`).
pub(crate) struct NodeShm {
    state: RefCell<State>,
    /// Eligible operations run on point-to-point so far.
    uses: std::cell::Cell<u32>,
}

/// Eligible operations a team runs on point-to-point before it makes its buffer: a
/// communicator made for one or two collectives (a merge, a split for one step) would pay
/// more for the segment than it saves. Every member counts the same calls, so all decide alike.
const USES_BEFORE_BUFFER: u32 = 2;
/// Smallest team with a buffer: for two processes one message each way is as good.
const MIN_TEAM: usize = 3;

/// Bytes per rank and step of the buffer (two halves each): large enough that a step's
/// flags cost little against its copy, small enough to stay in cache.
const CHUNK: usize = 64 * 1024;
/// Longest segment name a member accepts.
const NAME_MAX: usize = 255;

fn shm_err(e: ibdyn_shm::ShmError) -> CollError {
    CollError::comm(e)
}

impl NodeShm {
    pub fn new() -> NodeShm {
        NodeShm {
            state: RefCell::new(State::Untried),
            uses: std::cell::Cell::new(0),
        }
    }

    /// The buffer, or None when the team stays on point-to-point (for now or for good). The
    /// call that makes it is collective over the team and uses `tag` for the set-up messages.
    pub fn get<C: PointToPoint>(
        &self,
        team: &Collectives<C>,
        tag: i32,
    ) -> Result<Option<Ref<'_, CollBuf>>> {
        if matches!(*self.state.borrow(), State::Untried) {
            if team.size() < MIN_TEAM {
                *self.state.borrow_mut() = State::Off;
                return Ok(None);
            }
            if self.uses.get() < USES_BEFORE_BUFFER {
                self.uses.set(self.uses.get() + 1);
                return Ok(None);
            }
            let made = set_up(team, tag)?;
            *self.state.borrow_mut() = match made {
                Some(b) => State::Ready(b),
                None => State::Off,
            };
        }
        Ok(Ref::filter_map(self.state.borrow(), |s| match s {
            State::Ready(b) => Some(b),
            _ => None,
        })
        .ok())
    }
}

fn send_to<C: PointToPoint>(team: &Collectives<C>, r: usize, data: &[u8], tag: i32) -> Result<()> {
    let to = team.team().comm_rank(r);
    crate::patience::wait(team.comm().isend(data, to, tag)?).map(|_| ())
}

fn recv_from<C: PointToPoint>(
    team: &Collectives<C>,
    r: usize,
    buf: &mut [u8],
    tag: i32,
) -> Result<usize> {
    let from = team.team().comm_rank(r);
    crate::patience::wait(team.comm().irecv(buf, from, tag)?)
}

fn set_up<C: PointToPoint>(team: &Collectives<C>, tag: i32) -> Result<Option<CollBuf>> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let (me, n) = (team.rank(), team.size());
    if me == 0 {
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let made = CollBuf::create(n, CHUNK, team.comm().context_id(), serial);
        if let Err(e) = &made {
            tracing::debug!("no node collective buffer: {e}");
        }
        let name = made.as_ref().map_or("", |b| b.name()).as_bytes().to_vec();
        for r in 1..n {
            send_to(team, r, &name, tag)?;
        }
        let mut all = made.is_ok();
        for r in 1..n {
            let mut ok = [0u8];
            let got = recv_from(team, r, &mut ok, tag)?;
            all &= got == 1 && ok[0] == 1;
        }
        if let Ok(b) = &made {
            b.unlink();
        }
        for r in 1..n {
            send_to(team, r, &[u8::from(all)], tag)?;
        }
        Ok(if all { made.ok() } else { None })
    } else {
        let mut name = [0u8; NAME_MAX];
        let len = recv_from(team, 0, &mut name, tag)?;
        if len == 0 {
            return Ok(None);
        }
        let opened = std::str::from_utf8(&name[..len])
            .map_err(|_| CollError::Failed("node collective buffer name is not UTF-8".into()))
            .and_then(|s| CollBuf::open(s, me).map_err(shm_err));
        if let Err(e) = &opened {
            tracing::debug!("cannot map the node collective buffer: {e}");
        }
        send_to(team, 0, &[u8::from(opened.is_ok())], tag)?;
        let mut verdict = [0u8];
        recv_from(team, 0, &mut verdict, tag)?;
        Ok(if verdict[0] == 1 { opened.ok() } else { None })
    }
}

/// Runs `f` on the buffer: converts its errors.
pub(crate) fn run<T>(
    b: &CollBuf,
    f: impl FnOnce(&CollBuf) -> std::result::Result<T, ibdyn_shm::ShmError>,
) -> Result<T> {
    f(b).map_err(shm_err)
}

impl<C: PointToPoint> Collectives<C> {
    /// The node buffer for `op` on `bytes` (the size the thresholds name) rooted at `root`,
    /// when this team has one and it is the better path; draws the operation's tag (which
    /// the point-to-point form then reuses if the buffer could not be made).
    pub(crate) fn node_buf(
        &self,
        op: CollOp,
        bytes: usize,
        root: usize,
    ) -> Result<Option<Ref<'_, CollBuf>>> {
        let Some(shm) = self.node_shm() else {
            return Ok(None);
        };
        let cfg = self.config();
        if root != 0 || cfg.forced(op).is_some() || cfg.shm_max(op).is_none_or(|m| bytes > m) {
            return Ok(None);
        }
        let tag = self.next_tag();
        let b = shm.get(self, tag)?;
        if b.is_none() {
            self.set_tag_override(Some(tag));
        }
        Ok(b)
    }

    pub(crate) fn shm_bcast(&self, b: &CollBuf, buf: &mut [u8]) -> Result<()> {
        run(b, |b| b.bcast(buf, &|| self.comm().progress()))
    }

    pub(crate) fn shm_barrier(&self, b: &CollBuf) -> Result<()> {
        run(b, |b| b.barrier(&|| self.comm().progress()))
    }

    pub(crate) fn shm_reduce(
        &self,
        b: &CollBuf,
        send: &[u8],
        recv: &mut [u8],
        op: &crate::op::Op,
    ) -> Result<()> {
        run(b, |b| {
            b.reduce(
                send,
                recv,
                op.elem_size(),
                &mut |a, x| op.apply(a, x),
                &|| self.comm().progress(),
            )
        })
    }

    pub(crate) fn shm_gather(&self, b: &CollBuf, send: &[u8], recv: &mut [u8]) -> Result<()> {
        run(b, |b| b.gather(send, recv, &|| self.comm().progress()))
    }
}

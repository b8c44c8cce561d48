//! The node shared-memory tier: collectives of a team whose processes all share one node,
//! through the node's shared-memory collective buffer (`ibdyn_shm::CollBuf`): one copy in,
//! flags, one copy out, instead of messages through the point-to-point queues. Blocking
//! forms with the team's rank 0 as the root (the leader): barrier, bcast, reduce, allreduce,
//! gather, allgather. Until the buffer exists (or when it cannot be made) an operation runs
//! flat under the same tag.
//!
//! The buffer is made on first use, inside the first operation that wants it (every member
//! is then in the same call): the leader creates it and sends its name to each member over
//! point-to-point, each member maps it and answers, the leader unlinks the name and sends the
//! verdict (all mapped, or everyone stays on point-to-point for good).

use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::flat::Flat;
use crate::op::Op;
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
    fn get<C: PointToPoint>(&self, team: &Flat<C>, tag: i32) -> Result<Option<Ref<'_, CollBuf>>> {
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

fn send_to<C: PointToPoint>(team: &Flat<C>, r: usize, data: &[u8], tag: i32) -> Result<()> {
    let to = team.team().comm_rank(r);
    crate::patience::wait(team.comm().isend(data, to, tag)?).map(|_| ())
}

fn recv_from<C: PointToPoint>(team: &Flat<C>, r: usize, buf: &mut [u8], tag: i32) -> Result<usize> {
    let from = team.team().comm_rank(r);
    crate::patience::wait(team.comm().irecv(buf, from, tag)?)
}

fn set_up<C: PointToPoint>(team: &Flat<C>, tag: i32) -> Result<Option<CollBuf>> {
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
        // An empty name ends the members' part: they answer only a buffer they can map.
        let Ok(made) = made else {
            return Ok(None);
        };
        let mut all = true;
        for r in 1..n {
            let mut ok = [0u8];
            let got = recv_from(team, r, &mut ok, tag)?;
            all &= got == 1 && ok[0] == 1;
        }
        made.unlink();
        for r in 1..n {
            send_to(team, r, &[u8::from(all)], tag)?;
        }
        Ok(all.then_some(made))
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

impl NodeShm {
    pub fn barrier<C: PointToPoint>(&self, team: &Flat<C>, tag: i32) -> Result<()> {
        match self.get(team, tag)? {
            Some(b) => run(&b, |b| b.barrier(&|| team.comm().progress())),
            None => team.ibarrier(tag, false)?.wait(),
        }
    }

    /// From the team's rank 0.
    pub fn bcast<C: PointToPoint>(&self, team: &Flat<C>, tag: i32, buf: &mut [u8]) -> Result<()> {
        match self.get(team, tag)? {
            Some(b) => bcast_on(&b, team, buf),
            None => team.ibcast(tag, buf, 0)?.wait(),
        }
    }

    /// To the team's rank 0.
    pub fn reduce<C: PointToPoint>(
        &self,
        team: &Flat<C>,
        tag: i32,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
    ) -> Result<()> {
        match self.get(team, tag)? {
            Some(b) => {
                team.check_op(CollOp::Reduce, op, send.len())?;
                reduce_on(&b, team, send, recv, op)
            }
            None => team.ireduce(tag, send, recv, op, 0)?.wait(),
        }
    }

    /// A reduce to the team's rank 0 and a bcast from it.
    pub fn allreduce<C: PointToPoint>(
        &self,
        team: &Flat<C>,
        tag: i32,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
    ) -> Result<()> {
        match self.get(team, tag)? {
            Some(b) => {
                team.allreduce_args(op, send, recv)?;
                reduce_on(&b, team, send, leader_only(team, recv), op)?;
                bcast_on(&b, team, recv)
            }
            None => team.iallreduce(tag, send, recv, op)?.wait(),
        }
    }

    /// To the team's rank 0.
    pub fn gather<C: PointToPoint>(
        &self,
        team: &Flat<C>,
        tag: i32,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<()> {
        match self.get(team, tag)? {
            Some(b) => gather_on(&b, team, send, recv),
            None => team.igather(tag, send, recv, 0)?.wait(),
        }
    }

    /// A gather to the team's rank 0 and a bcast from it.
    pub fn allgather<C: PointToPoint>(
        &self,
        team: &Flat<C>,
        tag: i32,
        send: &[u8],
        recv: &mut [u8],
    ) -> Result<()> {
        match self.get(team, tag)? {
            Some(b) => {
                team.allgather_args(send, recv)?;
                gather_on(&b, team, send, leader_only(team, recv))?;
                bcast_on(&b, team, recv)
            }
            None => team.iallgather(tag, send, recv)?.wait(),
        }
    }
}

/// `buf` on the team's rank 0, nothing elsewhere.
fn leader_only<'a, C: PointToPoint>(team: &Flat<C>, buf: &'a mut [u8]) -> &'a mut [u8] {
    if team.rank() == 0 {
        buf
    } else {
        &mut []
    }
}

fn bcast_on<C: PointToPoint>(b: &CollBuf, team: &Flat<C>, buf: &mut [u8]) -> Result<()> {
    run(b, |b| b.bcast(buf, &|| team.comm().progress()))
}

fn reduce_on<C: PointToPoint>(
    b: &CollBuf,
    team: &Flat<C>,
    send: &[u8],
    recv: &mut [u8],
    op: &Op,
) -> Result<()> {
    run(b, |b| {
        b.reduce(
            send,
            recv,
            op.elem_size(),
            &mut |a, x| op.apply(a, x),
            &|| team.comm().progress(),
        )
    })
}

fn gather_on<C: PointToPoint>(
    b: &CollBuf,
    team: &Flat<C>,
    send: &[u8],
    recv: &mut [u8],
) -> Result<()> {
    run(b, |b| b.gather(send, recv, &|| team.comm().progress()))
}

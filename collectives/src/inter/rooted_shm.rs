//! Rooted intercommunicator collectives through one shared-memory buffer that spans the root
//! and the whole other group, when they all share one node: the root leads the buffer and
//! the other group's ranks 0..q are its members 1..=q. A bcast is then one copy in by the
//! root and one copy out by each member; a reduce, one copy in by each member and the fold
//! at the root: no hop through the other group's leader and no message between groups.
//!
//! One buffer per root, made (as the node buffers are) once that root has run
//! `USES_BEFORE_BUFFER` eligible operations, inside an operation that every member is in:
//! the root creates it and sends its node id and the buffer's name to each member over the
//! intercommunicator; a member on another node, or one that cannot map it, answers no, and
//! the root tells everyone the verdict (all mapped, or point-to-point for good for this root).
//! `IBDYN_COLL_ALGO=<op>:p2p` (or a forced algorithm) keeps an operation off it, as it keeps
//! the node buffers; the thresholds are the node buffers' (`shm_*`).

use super::fanout::reduce_bytes;
use super::{InterCollectives, InterRole};
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::nodeshm::run;
use crate::op::Op;
use crate::p2p::PointToPoint;
use ibdyn_shm::CollBuf;
use std::cell::{Ref, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Eligible operations with one root before its buffer is made (a root used once or twice
/// would pay more for the segment than it saves).
const USES_BEFORE_BUFFER: u32 = 2;
/// Bytes per member and step of the buffer (as the node buffers).
const CHUNK: usize = 64 * 1024;
/// Longest set-up message a member accepts (node id and segment name).
const SETUP_MAX: usize = 1024;
/// The set-up messages' tag offset within the operation's tag (tags are multiples of 8).
const SETUP_TAG: i32 = 7;

/// Whose buffer: this process's own as a root, or that of the remote group's rank r.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
enum Key {
    Mine,
    Remote(usize),
}

enum State {
    Counting(u32),
    Ready(CollBuf),
    Off,
}

/// The rooted buffers of one intercommunicator.
#[derive(Default)]
pub(super) struct RootedShm {
    bufs: RefCell<HashMap<Key, State>>,
}

impl<C: PointToPoint> InterCollectives<C> {
    /// The buffer this rooted operation goes through, or None (point-to-point). Collective
    /// over the root and the other group: both sides count the same calls and decide alike.
    fn rooted_buf(
        &self,
        op: CollOp,
        bytes: usize,
        role: InterRole,
        tag: i32,
    ) -> Result<Option<Ref<'_, CollBuf>>> {
        let (key, members) = match role {
            InterRole::Root => (Key::Mine, self.remote_size),
            InterRole::Remote(r) => (Key::Remote(r), self.size),
            InterRole::ProcNull => return Ok(None),
        };
        let cfg = self.local.config();
        if members < 2 || cfg.forced(op).is_some() || cfg.shm_max(op).is_none_or(|m| bytes > m) {
            return Ok(None);
        }
        let uses = match self.rooted.bufs.borrow().get(&key) {
            None => 0,
            Some(State::Counting(n)) => *n,
            Some(_) => u32::MAX,
        };
        if uses < USES_BEFORE_BUFFER {
            self.rooted
                .bufs
                .borrow_mut()
                .insert(key, State::Counting(uses + 1));
            return Ok(None);
        }
        if uses == USES_BEFORE_BUFFER {
            let made = match role {
                InterRole::Root => self.rooted_set_up_root(tag + SETUP_TAG)?,
                _ => self.rooted_set_up_member(tag + SETUP_TAG, key)?,
            };
            let state = made.map_or(State::Off, State::Ready);
            self.rooted.bufs.borrow_mut().insert(key, state);
        }
        Ok(
            Ref::filter_map(self.rooted.bufs.borrow(), |m| match m.get(&key) {
                Some(State::Ready(b)) => Some(b),
                _ => None,
            })
            .ok(),
        )
    }

    fn send_bridge(&self, data: &[u8], to: usize, tag: i32) -> Result<()> {
        crate::patience::wait(PointToPoint::isend(&self.bridge, data, to, tag)?).map(|_| ())
    }

    fn recv_bridge(&self, buf: &mut [u8], from: usize, tag: i32) -> Result<usize> {
        crate::patience::wait(PointToPoint::irecv(&self.bridge, buf, from, tag)?)
    }

    fn rooted_set_up_root(&self, tag: i32) -> Result<Option<CollBuf>> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let q = self.remote_size;
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed) | 1 << 63;
        let made = CollBuf::create(q + 1, CHUNK, self.bridge.context_id(), serial);
        if let Err(e) = &made {
            tracing::debug!("no intercommunicator collective buffer: {e}");
        }
        let mut msg = self.node.clone().into_bytes();
        msg.push(b'\n');
        if let Ok(b) = &made {
            msg.extend_from_slice(b.name().as_bytes());
        }
        for r in 0..q {
            self.send_bridge(&msg, r, tag)?;
        }
        let mut all = made.is_ok();
        for r in 0..q {
            let mut ok = [0u8];
            let got = self.recv_bridge(&mut ok, r, tag)?;
            all &= got == 1 && ok[0] == 1;
        }
        if let Ok(b) = &made {
            b.unlink();
        }
        for r in 0..q {
            self.send_bridge(&[u8::from(all)], r, tag)?;
        }
        Ok(if all { made.ok() } else { None })
    }

    fn rooted_set_up_member(&self, tag: i32, key: Key) -> Result<Option<CollBuf>> {
        let Key::Remote(root) = key else {
            return Ok(None);
        };
        let mut msg = [0u8; SETUP_MAX];
        let len = self.recv_bridge(&mut msg, root, tag)?;
        let text = std::str::from_utf8(&msg[..len]).map_err(|_| {
            CollError::Failed("intercommunicator buffer set-up message is not UTF-8".into())
        })?;
        let (uid, name) = text.split_once('\n').unwrap_or((text, ""));
        let opened = if uid != self.node || name.is_empty() {
            None
        } else {
            CollBuf::open(name, self.rank + 1)
                .map_err(|e| tracing::debug!("cannot map the intercommunicator buffer: {e}"))
                .ok()
        };
        self.send_bridge(&[u8::from(opened.is_some())], root, tag)?;
        let mut verdict = [0u8];
        self.recv_bridge(&mut verdict, root, tag)?;
        Ok(if verdict[0] == 1 { opened } else { None })
    }

    /// The bcast through the root's buffer, when there is one: Some(result).
    pub(super) fn rooted_bcast(
        &self,
        tag: i32,
        buf: &mut [u8],
        role: InterRole,
    ) -> Result<Option<()>> {
        let Some(b) = self.rooted_buf(CollOp::Bcast, buf.len(), role, tag)? else {
            return Ok(None);
        };
        run(&b, |b| {
            b.bcast(buf, &|| PointToPoint::progress(&self.bridge))
        })
        .map(Some)
    }

    /// The reduce through the root's buffer, when there is one: Some(result).
    pub(super) fn rooted_reduce(
        &self,
        tag: i32,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
        role: InterRole,
    ) -> Result<Option<()>> {
        let bytes = reduce_bytes(send, recv, role);
        let Some(b) = self.rooted_buf(CollOp::Reduce, bytes, role, tag)? else {
            return Ok(None);
        };
        run(&b, |b| {
            b.reduce_members(
                send,
                recv,
                op.elem_size(),
                &mut |a, x| op.apply(a, x),
                &|| PointToPoint::progress(&self.bridge),
            )
        })
        .map(Some)
    }
}

//! Communicators, intra and inter: a context id, the local group, the remote group for an
//! intercommunicator, and point-to-point on them.

use crate::context;
use crate::engine::Engine;
use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use crate::group::Group;
use crate::local_ids::WireIds;
use crate::matching::{ANY_SOURCE, ANY_TAG, PROC_NULL};
use crate::protocol::SendStart;
use crate::reqs::{PostedRecv, Status};
use crate::request::Request;
use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Tag of the internal exchange that communicator management (split) uses on the
/// collective context.
const TAG_SPLIT: i32 = 0x7ff0_0001;
const TAG_BCAST: i32 = 0x7ff0_0003;
const TAG_BARRIER: i32 = 0x7ff0_0005;

struct CommInner {
    eng: Rc<RefCell<Engine>>,
    ctx: u64,
    /// A communicator made from groups: the local context ids the packets carry (else
    /// `ctx` itself, the same at every member).
    wire: Option<WireIds>,
    local: Group,
    remote: Option<Group>,
    rank: u32,
    freed: Cell<bool>,
    /// Communicators derived from this one so far (drives their context ids).
    derived: Cell<u64>,
    /// Cached per-communicator state of higher layers (MPI's attribute caching).
    attrs: RefCell<Vec<(TypeId, Rc<dyn Any>)>>,
}

impl Drop for CommInner {
    fn drop(&mut self) {
        crate::process::context_released(self.ctx);
        if let Some(w) = &self.wire {
            crate::process::context_released(w.receive(false));
        }
    }
}

/// A communicator. Cloning gives another handle to the same communicator.
#[derive(Clone)]
pub struct Communicator {
    inner: Rc<CommInner>,
    /// `ctx` or `ctx | 1`: a collective view shares everything but the context.
    ctx: u64,
}

impl Communicator {
    pub(crate) fn new(
        eng: Rc<RefCell<Engine>>,
        ctx: u64,
        local: Group,
        remote: Option<Group>,
        me: Gpid,
    ) -> Result<Communicator> {
        Self::build(eng, ctx, None, local, remote, me)
    }

    /// A communicator made from groups: `ctx` is the id the members agreed on (context_id,
    /// and the seed of derived communicators); packets carry the ids of `wire`.
    pub(crate) fn from_groups(
        eng: Rc<RefCell<Engine>>,
        ctx: u64,
        wire: WireIds,
        local: Group,
        remote: Option<Group>,
        me: Gpid,
    ) -> Result<Communicator> {
        Self::build(eng, ctx, Some(wire), local, remote, me)
    }

    fn build(
        eng: Rc<RefCell<Engine>>,
        ctx: u64,
        wire: Option<WireIds>,
        local: Group,
        remote: Option<Group>,
        me: Gpid,
    ) -> Result<Communicator> {
        let rank = local.rank_of(me).ok_or_else(|| {
            CommError::InvalidArgument(format!("{me} is not a member of the group"))
        })? as u32;
        if let Some(w) = &wire {
            crate::process::context_in_use(w.receive(false));
        }
        let inner = CommInner {
            eng,
            ctx,
            wire,
            local,
            remote,
            rank,
            freed: Cell::new(false),
            derived: Cell::new(0),
            attrs: RefCell::new(Vec::new()),
        };
        crate::process::context_in_use(ctx);
        Ok(Communicator {
            inner: Rc::new(inner),
            ctx,
        })
    }

    pub fn rank(&self) -> i32 {
        self.inner.rank as i32
    }

    /// Size of the local group.
    pub fn size(&self) -> i32 {
        self.inner.local.size() as i32
    }

    pub fn is_inter(&self) -> bool {
        self.inner.remote.is_some()
    }

    /// Size of the group that ranks in point-to-point calls refer to (the remote group of an
    /// intercommunicator, the local group otherwise).
    pub fn remote_size(&self) -> i32 {
        self.peer_group().size() as i32
    }

    pub fn group(&self) -> &Group {
        &self.inner.local
    }

    pub fn remote_group(&self) -> Option<&Group> {
        self.inner.remote.as_ref()
    }

    pub fn context_id(&self) -> u64 {
        self.ctx
    }

    /// The same communicator on its collective context: traffic there never matches
    /// point-to-point receives. Collective algorithms run on this view.
    pub fn collective_view(&self) -> Communicator {
        Communicator {
            inner: self.inner.clone(),
            ctx: context::collective(self.inner.ctx),
        }
    }

    /// A private channel of this communicator named by `key`: the same groups on a context
    /// both ends compute alone (`context::channel`), so its messages never match this
    /// communicator's. Local: no message.
    pub fn channel(&self, key: &[u64]) -> Result<Communicator> {
        self.check()?;
        Communicator::new(
            self.inner.eng.clone(),
            context::channel(self.inner.ctx, key),
            self.inner.local.clone(),
            self.inner.remote.clone(),
            self.me(),
        )
    }

    /// The process id of rank `r` of the peer group.
    pub fn gpid_of(&self, r: i32) -> Result<Gpid> {
        self.peer_group().get(r as i64)
    }

    fn is_collective_view(&self) -> bool {
        self.ctx & 1 == 1
    }

    /// The context id packets to rank `dest` of the peer group carry.
    fn send_ctx(&self, dest: i32) -> Result<u64> {
        match &self.inner.wire {
            Some(w) => w.send(dest as usize, self.is_collective_view()),
            None => Ok(self.ctx),
        }
    }

    /// The context id packets to this process carry.
    fn recv_ctx(&self) -> u64 {
        match &self.inner.wire {
            Some(w) => w.receive(self.is_collective_view()),
            None => self.ctx,
        }
    }

    fn peer_group(&self) -> &Group {
        self.inner.remote.as_ref().unwrap_or(&self.inner.local)
    }

    pub(crate) fn engine(&self) -> &Rc<RefCell<Engine>> {
        &self.inner.eng
    }

    fn check(&self) -> Result<()> {
        if self.inner.freed.get() {
            Err(CommError::CommFreed)
        } else {
            Ok(())
        }
    }

    fn check_send_tag(tag: i32) -> Result<()> {
        if tag < 0 {
            Err(CommError::InvalidTag(tag))
        } else {
            Ok(())
        }
    }

    fn check_recv(&self, src: i32, tag: i32) -> Result<Option<Gpid>> {
        if tag < 0 && tag != ANY_TAG {
            return Err(CommError::InvalidTag(tag));
        }
        if src == ANY_SOURCE {
            return Ok(None);
        }
        Ok(Some(self.gpid_of(src)?))
    }

    // ---- point-to-point ----

    /// Starts a send; the buffer stays borrowed until the request completes.
    pub fn isend<'a>(&self, buf: &'a [u8], dest: i32, tag: i32) -> Result<Request<'a>> {
        self.check()?;
        Self::check_send_tag(tag)?;
        if dest == PROC_NULL {
            return Ok(Request::completed(
                self.inner.eng.clone(),
                Status {
                    source: PROC_NULL,
                    tag,
                    count: 0,
                },
            ));
        }
        let to = self.gpid_of(dest)?;
        let ctx = self.send_ctx(dest)?;
        let start = self
            .inner
            .eng
            .borrow_mut()
            .isend(ctx, self.inner.rank, to, dest, tag, buf)?;
        Ok(match start {
            SendStart::Done(status) => Request::completed(self.inner.eng.clone(), status),
            SendStart::Pending(id) => Request::new(self.inner.eng.clone(), id),
        })
    }

    /// Starts a synchronous send (MPI_Issend): it completes once the receiver has matched it.
    pub fn issend<'a>(&self, buf: &'a [u8], dest: i32, tag: i32) -> Result<Request<'a>> {
        self.check()?;
        Self::check_send_tag(tag)?;
        if dest == PROC_NULL {
            return self.isend(buf, dest, tag);
        }
        let to = self.gpid_of(dest)?;
        let start =
            self.inner
                .eng
                .borrow_mut()
                .issend(self.ctx, self.inner.rank, to, dest, tag, buf)?;
        Ok(match start {
            SendStart::Done(status) => Request::completed(self.inner.eng.clone(), status),
            SendStart::Pending(id) => Request::new(self.inner.eng.clone(), id),
        })
    }

    /// Starts a receive into `buf`; `src` may be `ANY_SOURCE`, `tag` may be `ANY_TAG`.
    pub fn irecv<'a>(&self, buf: &'a mut [u8], src: i32, tag: i32) -> Result<Request<'a>> {
        self.check()?;
        if src == PROC_NULL {
            return Ok(Request::completed(
                self.inner.eng.clone(),
                Status {
                    source: PROC_NULL,
                    tag: ANY_TAG,
                    count: 0,
                },
            ));
        }
        let posted = self.posted_recv(buf, src, tag)?;
        let id = self.inner.eng.borrow_mut().irecv(posted)?;
        Ok(Request::new(self.inner.eng.clone(), id))
    }

    pub fn send(&self, buf: &[u8], dest: i32, tag: i32) -> Result<()> {
        self.check()?;
        Self::check_send_tag(tag)?;
        if dest == PROC_NULL {
            return Ok(());
        }
        if crate::turns::taken() {
            return self.isend(buf, dest, tag)?.wait().map(drop);
        }
        let to = self.gpid_of(dest)?;
        let ctx = self.send_ctx(dest)?;
        // Blocking, so no request object (the engine makes one only for a rendezvous).
        self.inner
            .eng
            .borrow_mut()
            .send(ctx, self.inner.rank, to, dest, tag, buf)
    }

    pub fn recv(&self, buf: &mut [u8], src: i32, tag: i32) -> Result<Status> {
        self.check()?;
        if src == PROC_NULL {
            return Ok(Status {
                source: PROC_NULL,
                tag: ANY_TAG,
                count: 0,
            });
        }
        if crate::turns::taken() {
            return self.irecv(buf, src, tag)?.wait();
        }
        let posted = self.posted_recv(buf, src, tag)?;
        // Blocking: an eager message can go straight into `buf` (see Engine::recv).
        self.inner.eng.borrow_mut().recv(posted)
    }

    /// A receive of `buf` from `src` with `tag`, checked, ready to post.
    fn posted_recv(&self, buf: &mut [u8], src: i32, tag: i32) -> Result<PostedRecv> {
        let peer = self.check_recv(src, tag)?;
        Ok(PostedRecv {
            buf: buf.as_mut_ptr(),
            cap: buf.len(),
            ctx: self.recv_ctx(),
            src,
            tag,
            peer,
        })
    }

    /// Receives a message of any size into a new vector.
    pub fn recv_vec(&self, src: i32, tag: i32) -> Result<(Vec<u8>, Status)> {
        let st = self.probe(src, tag)?;
        let mut v = vec![0u8; st.count];
        let got = self.recv(&mut v, st.source, st.tag)?;
        Ok((v, got))
    }

    pub fn sendrecv(
        &self,
        sbuf: &[u8],
        dest: i32,
        stag: i32,
        rbuf: &mut [u8],
        src: i32,
        rtag: i32,
    ) -> Result<Status> {
        let r = self.irecv(rbuf, src, rtag)?;
        let s = self.isend(sbuf, dest, stag)?;
        let st = r.wait();
        s.wait()?;
        st
    }

    /// Reports a matching message without receiving it, if one has arrived.
    pub fn iprobe(&self, src: i32, tag: i32) -> Result<Option<Status>> {
        self.check()?;
        self.check_recv(src, tag)?;
        let mut eng = self.inner.eng.borrow_mut();
        eng.progress()?;
        Ok(eng.iprobe(self.recv_ctx(), src, tag))
    }

    /// The error of rank `r`'s process if it is known to have failed (checked now for a
    /// process of this node): for waits that poll instead of posting a receive.
    pub fn peer_failure(&self, r: i32) -> Option<CommError> {
        let g = self.gpid_of(r).ok()?;
        self.inner
            .eng
            .borrow_mut()
            .peer_failure(g, "a one-sided epoch")
    }

    /// Blocks until a matching message has arrived and reports it.
    pub fn probe(&self, src: i32, tag: i32) -> Result<Status> {
        self.check()?;
        let peer = self.check_recv(src, tag)?;
        let ctx = self.recv_ctx();
        self.wait_for_message(peer, "probe", |e| e.iprobe(ctx, src, tag))
    }

    /// Takes a matching message out of matching if one has arrived (MPI_Improbe): a
    /// receive posted afterwards cannot take it; `imrecv` with the `Message` receives it.
    pub fn improbe(&self, src: i32, tag: i32) -> Result<Option<(Status, Message)>> {
        self.check()?;
        self.check_matched_probe(src, tag)?;
        let mut eng = self.inner.eng.borrow_mut();
        eng.progress()?;
        Ok(eng
            .improbe(self.recv_ctx(), src, tag)
            .map(|(st, id)| (st, Message::new(id, &st))))
    }

    /// Blocks until a matching message has arrived and takes it out of matching
    /// (MPI_Mprobe; see `improbe`).
    pub fn mprobe(&self, src: i32, tag: i32) -> Result<(Status, Message)> {
        self.check()?;
        let peer = self.check_matched_probe(src, tag)?;
        let ctx = self.recv_ctx();
        self.wait_for_message(peer, "matched probe", |e| {
            e.improbe(ctx, src, tag)
                .map(|(st, id)| (st, Message::new(id, &st)))
        })
    }

    /// Waits until `look` finds a message, failing if `peer` (the source, when one process)
    /// is found dead meanwhile; `what` names the wait in that error.
    fn wait_for_message<T>(
        &self,
        peer: Option<Gpid>,
        what: &str,
        mut look: impl FnMut(&mut Engine) -> Option<T>,
    ) -> Result<T> {
        let mut found = None;
        let mut checks = 0u32;
        let mut step = |e: &mut Engine| {
            found = look(e).map(Ok);
            if found.is_none() {
                checks += 1;
                if let Some(g) = peer.filter(|_| checks.is_multiple_of(4096)) {
                    found = e.peer_failure(g, what).map(Err);
                }
            }
            found.take()
        };
        if crate::turns::taken() {
            return crate::turns::wait_taking_turns(|| {
                let mut e = self.inner.eng.borrow_mut();
                e.progress()?;
                step(&mut e).transpose()
            });
        }
        let mut eng = self.inner.eng.borrow_mut();
        let mut result = None;
        eng.wait_until(|e| {
            result = step(e);
            result.is_some()
        })?;
        result.expect("wait_until returns when found")
    }

    /// Starts receiving the message a matched probe took (MPI_Imrecv).
    pub fn imrecv<'a>(&self, buf: &'a mut [u8], msg: Message) -> Result<Request<'a>> {
        self.check()?;
        let posted = self.posted_recv(buf, msg.source, msg.tag)?;
        let id = self.inner.eng.borrow_mut().imrecv(msg.id, posted)?;
        Ok(Request::new(self.inner.eng.clone(), id))
    }

    fn check_matched_probe(&self, src: i32, tag: i32) -> Result<Option<Gpid>> {
        if src == PROC_NULL {
            return Err(CommError::InvalidArgument(
                "a matched probe of PROC_NULL has no message to take; skip the probe".into(),
            ));
        }
        self.check_recv(src, tag)
    }

    // ---- services ----

    /// Runs `handler` on every message with `tag` that reaches this process on this
    /// communicator, as it arrives, in any call that progresses the engine; its answers are
    /// sent on this communicator (see `crate::service`). Such messages are never matched by
    /// receives. Until `stop_serving`.
    pub fn serve(&self, tag: i32, handler: Box<dyn crate::Service>) -> Result<()> {
        self.check()?;
        Self::check_send_tag(tag)?;
        let n = self.peer_group().size();
        let peers = (0..n as i32)
            .map(|r| Ok((self.gpid_of(r)?, self.send_ctx(r)?)))
            .collect::<Result<Vec<_>>>()?;
        let served =
            crate::service::Served::new(self.recv_ctx(), tag, self.inner.rank, peers, handler);
        self.inner.eng.borrow_mut().add_service(served);
        Ok(())
    }

    /// Ends what `serve` started, once the answers sent have left.
    pub fn stop_serving(&self, tag: i32) -> Result<()> {
        let ctx = self.recv_ctx();
        self.inner.eng.borrow_mut().remove_service(ctx, tag)
    }

    // ---- communicator management ----

    /// A new context id derived from this communicator. Collective: every member calls it
    /// in the same order (the dynamic-process layer uses it for new intercommunicators).
    pub fn derive_context(&self) -> u64 {
        self.next_ctx()
    }

    pub(crate) fn next_ctx(&self) -> u64 {
        let seq = self.inner.derived.get();
        self.inner.derived.set(seq + 1);
        context::derive(self.inner.ctx, seq)
    }

    pub(crate) fn base_ctx(&self) -> u64 {
        self.inner.ctx
    }

    pub(crate) fn me(&self) -> Gpid {
        self.inner.local.members()[self.inner.rank as usize]
    }

    /// A new communicator with the same groups and a new context (collective).
    pub fn dup(&self) -> Result<Communicator> {
        self.check()?;
        let ctx = self.next_ctx();
        Communicator::new(
            self.inner.eng.clone(),
            ctx,
            self.inner.local.clone(),
            self.inner.remote.clone(),
            self.me(),
        )
    }

    /// Partitions the communicator by colour, ordering each part by (key, old rank). `None`
    /// colour (MPI_UNDEFINED) gives `None`. Collective over an intracommunicator.
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Communicator>> {
        self.check()?;
        if self.is_inter() {
            return Err(CommError::InvalidArgument(
                "split of an intercommunicator is not supported".into(),
            ));
        }
        let ctx = self.next_ctx();
        let mut mine = [0u8; 12];
        mine[0..8].copy_from_slice(&color.map_or(-1i64, |c| c as i64).to_le_bytes());
        mine[8..12].copy_from_slice(&key.to_le_bytes());
        let all = self.collective_view().ring_allgather(&mine)?;
        let Some(color) = color else { return Ok(None) };
        let mut members: Vec<(i32, usize)> = all
            .chunks_exact(12)
            .enumerate()
            .filter(|(_, c)| i64::from_le_bytes(c[0..8].try_into().unwrap()) == color as i64)
            .map(|(r, c)| (i32::from_le_bytes(c[8..12].try_into().unwrap()), r))
            .collect();
        members.sort();
        let group = Group::new(
            members
                .iter()
                .map(|&(_, r)| self.inner.local.members()[r])
                .collect(),
        );
        Communicator::new(self.inner.eng.clone(), ctx, group, None, self.me()).map(Some)
    }

    /// A communicator over `group`, a subset of this one's group; processes outside it get
    /// `None`. Collective over this communicator, and every member passes the same group.
    pub fn create(&self, group: &Group) -> Result<Option<Communicator>> {
        self.check()?;
        if let Some(p) = group
            .members()
            .iter()
            .find(|p| self.inner.local.rank_of(**p).is_none())
        {
            return Err(CommError::InvalidArgument(format!(
                "{p} is not in the parent communicator"
            )));
        }
        let ctx = self.next_ctx();
        if group.rank_of(self.me()).is_none() {
            return Ok(None);
        }
        Communicator::new(self.inner.eng.clone(), ctx, group.clone(), None, self.me()).map(Some)
    }

    /// Marks the communicator freed: further operations on any handle of it fail.
    pub fn free(&self) {
        self.inner.freed.set(true);
        self.inner.attrs.borrow_mut().clear();
    }

    /// Drops the cached attributes (at finalisation, to break handle cycles).
    pub(crate) fn clear_attributes(&self) {
        self.inner.attrs.borrow_mut().clear();
    }

    /// Whether `free` was called on any handle of this communicator.
    pub fn is_freed(&self) -> bool {
        self.inner.freed.get()
    }

    /// The value of type `T` cached on this communicator, made by `make` on first use
    /// (MPI attribute caching; the collectives layer keeps its per-communicator state here).
    /// A value holding a handle of this communicator lives until `free`.
    pub fn attribute<T: 'static>(&self, make: impl FnOnce() -> T) -> Rc<T> {
        let id = TypeId::of::<T>();
        if let Some((_, v)) = self.inner.attrs.borrow().iter().find(|(t, _)| *t == id) {
            return v
                .clone()
                .downcast::<T>()
                .expect("attribute stored under its own type id");
        }
        let v: Rc<T> = Rc::new(make());
        self.inner.attrs.borrow_mut().push((id, v.clone()));
        v
    }

    /// Broadcasts `data` from `root` along a binomial tree (management only; the collectives
    /// crate has the tuned algorithms). Returns the root's data on every rank.
    pub(crate) fn bcast_bytes(&self, data: Vec<u8>, root: i32) -> Result<Vec<u8>> {
        let p = self.size();
        let me = (self.rank() - root + p) % p;
        let mut data = data;
        let mut mask = 1;
        while mask < p {
            if me & mask != 0 {
                let src = (me - mask + root) % p;
                data = self.recv_vec(src, TAG_BCAST)?.0;
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if me + mask < p {
                self.send(&data, (me + mask + root) % p, TAG_BCAST)?;
            }
            mask >>= 1;
        }
        Ok(data)
    }

    /// Dissemination barrier (management only).
    pub(crate) fn barrier_internal(&self) -> Result<()> {
        let (p, r) = (self.size(), self.rank());
        let mut dist = 1;
        while dist < p {
            let mut b = [0u8; 0];
            self.sendrecv(
                &[],
                (r + dist) % p,
                TAG_BARRIER,
                &mut b,
                (r - dist + p) % p,
                TAG_BARRIER,
            )?;
            dist <<= 1;
        }
        Ok(())
    }

    /// Every member's equal-sized `mine`, concatenated in rank order (ring; management only).
    fn ring_allgather(&self, mine: &[u8]) -> Result<Vec<u8>> {
        let n = mine.len();
        let p = self.size() as usize;
        let r = self.rank() as usize;
        let mut all = vec![0u8; n * p];
        all[r * n..(r + 1) * n].copy_from_slice(mine);
        let right = ((r + 1) % p) as i32;
        let left = ((r + p - 1) % p) as i32;
        for step in 0..p.saturating_sub(1) {
            let sb = (r + p - step) % p;
            let rb = (r + p - step - 1) % p;
            let out = all[sb * n..(sb + 1) * n].to_vec();
            let mut inb = vec![0u8; n];
            self.sendrecv(&out, right, TAG_SPLIT, &mut inb, left, TAG_SPLIT)?;
            all[rb * n..(rb + 1) * n].copy_from_slice(&inb);
        }
        Ok(all)
    }
}

/// A message a matched probe took out of matching; receive it with `Communicator::imrecv`.
#[derive(Debug)]
pub struct Message {
    id: u64,
    source: i32,
    tag: i32,
}

impl Message {
    fn new(id: u64, st: &Status) -> Message {
        Message {
            id,
            source: st.source,
            tag: st.tag,
        }
    }
}

//! An in-process communicator for tests: one thread per rank, channels between them, MPI
//! matching (per source and tag, in posting order), truncation errors, bounded waits; and
//! intercommunicators (two groups, each with its own context, plus a bridge between them).
#![allow(dead_code)]

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use ibdyn_collectives::{
    AlgoConfig, BuiltinOp, CollError, Collectives, ElemType, InterCollectives, Op, P2pRequest,
    PointToPoint,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum MockError {
    #[error("message truncated: {got} bytes for a {cap}-byte buffer")]
    Truncated { got: usize, cap: usize },
    #[error("timed out waiting for a message from rank {src}")]
    Timeout { src: usize },
    #[error("rank {0} is gone")]
    Gone(usize),
    #[error("rank {0} out of range")]
    BadRank(usize),
    #[error("deadlock: every rank waits and no message is in flight (waiting for rank {src})")]
    Deadlock { src: usize },
}

/// Deadlock detection for the threads of one mock world: a wait fails when every live rank
/// waits and no message is in flight, a state nothing can leave. So a wait needs no
/// wall-clock bound to end, and a slow (descheduled) rank is never mistaken for a dead one.
pub struct Watch(Mutex<WatchState>);

struct WatchState {
    live: usize,
    waiting: usize,
    in_flight: usize,
    deadlocked: bool,
}

impl Watch {
    fn new(threads: usize) -> Arc<Watch> {
        Arc::new(Watch(Mutex::new(WatchState {
            live: threads,
            waiting: 0,
            in_flight: 0,
            deadlocked: false,
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A rank's thread has finished: it sends nothing more.
    pub fn leave(&self) {
        self.state().live -= 1;
    }

    /// Counts a message in flight for as long as `send` takes; `send` false: it did not go.
    /// Under the watch's lock, so that an ending rank's drain (`Endpoint::drop`) sees every
    /// message sent to it or refuses it.
    fn send_counted(&self, send: impl FnOnce() -> bool) -> bool {
        let mut s = self.state();
        s.in_flight += 1;
        let sent = send();
        if !sent {
            s.in_flight -= 1;
        }
        sent
    }

    fn filed(&self) {
        self.state().in_flight -= 1;
    }

    /// Called by a rank about to wait: true when the world is (or now becomes) deadlocked.
    fn start_wait(&self) -> bool {
        let mut s = self.state();
        s.waiting += 1;
        if s.waiting == s.live && s.in_flight == 0 {
            s.deadlocked = true;
        }
        s.deadlocked
    }

    fn stop_wait(&self) {
        self.state().waiting -= 1;
    }
}

struct Msg {
    src: usize,
    tag: i32,
    data: Vec<u8>,
}

#[derive(Default)]
struct Matching {
    /// (src, tag) -> number of receives posted so far (the next ticket).
    posted: HashMap<(usize, i32), u64>,
    /// (src, tag) -> number of messages arrived so far.
    arrived: HashMap<(usize, i32), u64>,
    /// ((src, tag), index) -> payload, until its receive collects it.
    store: HashMap<((usize, i32), u64), Vec<u8>>,
}

/// One rank's end of one context: made on the test's thread, used on the rank's thread.
pub struct Endpoint {
    rank: usize,
    /// The size of the rank's own group.
    size: usize,
    /// The ranks that point-to-point ranks name (the remote group of an intercommunicator).
    peers: Vec<Sender<Msg>>,
    inbox: Receiver<Msg>,
    m: RefCell<Matching>,
    timeout: Duration,
    watch: Arc<Watch>,
}

/// A rank's communicator; clones are handles to the same endpoint (as communicator handles).
#[derive(Clone)]
pub struct MockComm(Rc<Endpoint>);

impl From<Endpoint> for MockComm {
    fn from(e: Endpoint) -> MockComm {
        MockComm(Rc::new(e))
    }
}

fn endpoints(n: usize) -> (Vec<Sender<Msg>>, Vec<Receiver<Msg>>) {
    (0..n).map(|_| unbounded()).unzip()
}

fn endpoint(
    rank: usize,
    size: usize,
    peers: Vec<Sender<Msg>>,
    inbox: Receiver<Msg>,
    timeout: Duration,
    watch: &Arc<Watch>,
) -> Endpoint {
    Endpoint {
        rank,
        size,
        peers,
        inbox,
        m: RefCell::new(Matching::default()),
        timeout,
        watch: watch.clone(),
    }
}

impl MockComm {
    /// A world of `n` connected ranks.
    pub fn world(n: usize, timeout: Duration) -> Vec<Endpoint> {
        Self::world_watched(n, timeout, &Watch::new(n))
    }

    fn world_watched(n: usize, timeout: Duration, watch: &Arc<Watch>) -> Vec<Endpoint> {
        let (txs, rxs) = endpoints(n);
        rxs.into_iter()
            .enumerate()
            .map(|(rank, inbox)| endpoint(rank, n, txs.clone(), inbox, timeout, watch))
            .collect()
    }

    /// The watch shared by every endpoint of `ends`' world (for the runner to call `leave`).
    pub fn watch_of(end: &Endpoint) -> Arc<Watch> {
        end.watch.clone()
    }

    /// An intercommunicator between a group of `p` and one of `q` ranks: for each of the
    /// `p + q` ranks (the first group's, then the second's), its local group's communicator
    /// and its end of the bridge (whose ranks name the other group's).
    pub fn inter(p: usize, q: usize, timeout: Duration) -> Vec<(Endpoint, Endpoint)> {
        let watch = Watch::new(p + q);
        let (a, b) = (
            MockComm::world_watched(p, timeout, &watch),
            MockComm::world_watched(q, timeout, &watch),
        );
        let (a_tx, a_rx) = endpoints(p);
        let (b_tx, b_rx) = endpoints(q);
        let a_bridge = a_rx
            .into_iter()
            .enumerate()
            .map(|(r, inbox)| endpoint(r, p, b_tx.clone(), inbox, timeout, &watch));
        let b_bridge = b_rx
            .into_iter()
            .enumerate()
            .map(|(r, inbox)| endpoint(r, q, a_tx.clone(), inbox, timeout, &watch));
        a.into_iter()
            .zip(a_bridge)
            .chain(b.into_iter().zip(b_bridge))
            .collect()
    }
}

/// A rank that ends with messages unread (a collective it left on an error) takes them out of
/// flight: else the deadlock check never sees the world idle, and its peers wait out the
/// whole timeout (20 s each, 80 s for `mismatched_counts_give_errors`).
impl Drop for Endpoint {
    fn drop(&mut self) {
        let inbox = std::mem::replace(&mut self.inbox, crossbeam_channel::never());
        let mut s = self.watch.state();
        while inbox.try_recv().is_ok() {
            s.in_flight -= 1;
        }
        // Disconnected with the lock held: a later send fails, uncounted.
        drop(inbox);
    }
}

impl Endpoint {
    fn file(&self, msg: Msg) {
        self.watch.filed();
        let mut m = self.m.borrow_mut();
        let key = (msg.src, msg.tag);
        let idx = m.arrived.entry(key).or_insert(0);
        let i = *idx;
        *idx += 1;
        m.store.insert((key, i), msg.data);
    }

    fn take(&self, key: (usize, i32), ticket: u64) -> Option<Vec<u8>> {
        self.m.borrow_mut().store.remove(&(key, ticket))
    }
}

pub enum MockReq<'a> {
    Sent(usize),
    Recv {
        comm: &'a Endpoint,
        buf: &'a mut [u8],
        key: (usize, i32),
        ticket: u64,
    },
    Done(usize),
}

fn deliver(buf: &mut [u8], data: Vec<u8>) -> Result<usize, CollError> {
    if data.len() > buf.len() {
        return Err(CollError::comm(MockError::Truncated {
            got: data.len(),
            cap: buf.len(),
        }));
    }
    buf[..data.len()].copy_from_slice(&data);
    Ok(data.len())
}

impl P2pRequest for MockReq<'_> {
    fn wait(mut self) -> Result<usize, CollError> {
        loop {
            if let Some(n) = self.test()? {
                return Ok(n);
            }
            let MockReq::Recv { comm, key, .. } = &self else {
                unreachable!()
            };
            let deadline = Instant::now() + comm.timeout;
            // The poll interval only paces the deadlock check; the outer bound is `timeout`.
            let poll = Duration::from_millis(2);
            loop {
                if comm.watch.start_wait() {
                    comm.watch.stop_wait();
                    return Err(CollError::comm(MockError::Deadlock { src: key.0 }));
                }
                let got = comm.inbox.recv_timeout(poll);
                comm.watch.stop_wait();
                match got {
                    Ok(msg) => {
                        comm.file(msg);
                        break;
                    }
                    Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                    Err(RecvTimeoutError::Timeout) => {
                        return Err(CollError::comm(MockError::Timeout { src: key.0 }))
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(CollError::comm(MockError::Gone(key.0)))
                    }
                }
            }
        }
    }

    fn test(&mut self) -> Result<Option<usize>, CollError> {
        match self {
            MockReq::Sent(n) | MockReq::Done(n) => Ok(Some(*n)),
            MockReq::Recv {
                comm,
                buf,
                key,
                ticket,
            } => {
                while let Ok(msg) = comm.inbox.try_recv() {
                    comm.file(msg);
                }
                match comm.take(*key, *ticket) {
                    Some(data) => {
                        let n = deliver(buf, data)?;
                        *self = MockReq::Done(n);
                        Ok(Some(n))
                    }
                    None => Ok(None),
                }
            }
        }
    }
}

impl PointToPoint for MockComm {
    type Request<'a>
        = MockReq<'a>
    where
        Self: 'a;

    fn rank(&self) -> usize {
        self.0.rank
    }
    fn size(&self) -> usize {
        self.0.size
    }
    fn isend<'a>(&'a self, buf: &'a [u8], dest: usize, tag: i32) -> Result<MockReq<'a>, CollError> {
        let me = &self.0;
        let tx = me
            .peers
            .get(dest)
            .ok_or_else(|| CollError::comm(MockError::BadRank(dest)))?;
        let msg = Msg {
            src: me.rank,
            tag,
            data: buf.to_vec(),
        };
        if !me.watch.send_counted(|| tx.send(msg).is_ok()) {
            return Err(CollError::comm(MockError::Gone(dest)));
        }
        Ok(MockReq::Sent(buf.len()))
    }
    fn irecv<'a>(
        &'a self,
        buf: &'a mut [u8],
        src: usize,
        tag: i32,
    ) -> Result<MockReq<'a>, CollError> {
        let me = &self.0;
        if src >= me.peers.len() {
            return Err(CollError::comm(MockError::BadRank(src)));
        }
        let key = (src, tag);
        let mut m = me.m.borrow_mut();
        let t = m.posted.entry(key).or_insert(0);
        let ticket = *t;
        *t += 1;
        Ok(MockReq::Recv {
            comm: me,
            buf,
            key,
            ticket,
        })
    }
}

/// Runs `f` on `n` ranks (one thread each) and returns their results in rank order.
pub fn run<R: Send>(
    n: usize,
    config: &AlgoConfig,
    f: impl Fn(&Collectives<MockComm>) -> R + Sync,
) -> Vec<R> {
    run_with_timeout(n, config, Duration::from_secs(20), f)
}

pub fn run_with_timeout<R: Send>(
    n: usize,
    config: &AlgoConfig,
    timeout: Duration,
    f: impl Fn(&Collectives<MockComm>) -> R + Sync,
) -> Vec<R> {
    let comms = MockComm::world(n, timeout);
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|c| {
                let f = &f;
                let cfg = config.clone();
                let watch = MockComm::watch_of(&c);
                s.spawn(move || {
                    let coll = Collectives::with_config(MockComm::from(c), cfg)
                        .expect("team of a mock world");
                    let out = f(&coll);
                    watch.leave();
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread panicked"))
            .collect()
    })
}

const TABLE_LEN: usize = (1 << 21) + 143;

fn table() -> &'static [u8] {
    static T: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut v = Vec::with_capacity(TABLE_LEN + 8);
        while v.len() < TABLE_LEN {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.truncate(TABLE_LEN);
        v
    })
}

/// Deterministic test data: rank `r`'s buffer of `len` bytes (up to 2 MiB) for case `salt`.
pub fn data(r: usize, len: usize, salt: usize) -> Vec<u8> {
    let t = table();
    let start = (r * 7919 + salt * 104_729) % (TABLE_LEN - len);
    t[start..start + len].to_vec()
}

/// As `run`, on a world whose rank r runs on node `node_ids[r]` (two-level forms across
/// nodes; the node's shared-memory collective buffer on one node).
pub fn run_on_nodes<R: Send>(
    node_ids: &[u32],
    config: &AlgoConfig,
    f: impl Fn(&Collectives<MockComm>) -> R + Sync,
) -> Vec<R> {
    let comms = MockComm::world(node_ids.len(), Duration::from_secs(20));
    std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|c| {
                let f = &f;
                let cfg = config.clone();
                s.spawn(move || {
                    let coll = Collectives::with_config(MockComm::from(c), cfg)
                        .and_then(|c| c.with_nodes(node_ids))
                        .expect("team of a mock world");
                    f(&coll)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread panicked"))
            .collect()
    })
}

/// `b = a then b` for affine maps x -> m x + c held as (m, c) u32 halves of a u64.
fn compose(a: u64, b: u64) -> u64 {
    let (m1, c1) = (a as u32, (a >> 32) as u32);
    let (m2, c2) = (b as u32, (b >> 32) as u32);
    let m = m2.wrapping_mul(m1);
    let c = m2.wrapping_mul(c1).wrapping_add(c2);
    u64::from(m) | (u64::from(c) << 32)
}

/// Composition of affine maps in rank order (not commutative; 8-byte elements).
pub fn affine() -> Op {
    Op::user::<u64, _>(false, |a: &[u64], b: &mut [u64]| {
        for (x, y) in a.iter().zip(b.iter_mut()) {
            *y = compose(*x, *y);
        }
    })
}

/// u32 sums, or (not `commutative`) affine compositions.
pub fn op(commutative: bool) -> Op {
    if commutative {
        Op::builtin(BuiltinOp::Sum, ElemType::U32).unwrap()
    } else {
        affine()
    }
}

/// `b = a op b` on bytes, for `op(commutative)`.
pub fn combine(a: &[u8], b: &mut [u8], commutative: bool) {
    if commutative {
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
            let s = u32::from_ne_bytes(x.try_into().unwrap())
                .wrapping_add(u32::from_ne_bytes(y[..].try_into().unwrap()));
            y.copy_from_slice(&s.to_ne_bytes());
        }
    } else {
        for (x, y) in a.chunks_exact(8).zip(b.chunks_exact_mut(8)) {
            let v = compose(
                u64::from_ne_bytes(x.try_into().unwrap()),
                u64::from_ne_bytes(y[..].try_into().unwrap()),
            );
            y.copy_from_slice(&v.to_ne_bytes());
        }
    }
}

/// `data(r, n, salt)` of the ranks `rs` (at least one), reduced in their order.
pub fn fold_of(
    rs: impl DoubleEndedIterator<Item = usize>,
    n: usize,
    salt: usize,
    commutative: bool,
) -> Vec<u8> {
    let mut rs = rs.rev();
    let mut acc = data(rs.next().expect("a rank to reduce"), n, salt);
    for r in rs {
        combine(&data(r, n, salt), &mut acc, commutative);
    }
    acc
}

/// Where the processes of an intercommunicator test run.
#[derive(Copy, Clone, Debug)]
pub enum InterLayout {
    /// No node information: the groups' local steps run flat; every process names one node
    /// (so bcast and reduce may use a buffer spanning the root and the other group).
    Flat,
    /// Everything on one node: local steps on the groups' node buffers.
    OneNode,
    /// Each group on its own two nodes (local steps two-level where a group has 3 or more
    /// processes); the groups name different nodes (rooted operations stay on messages).
    TwoNodesEach,
}

/// Runs `f(collectives, group)` on an intercommunicator between a group of `p` and one of
/// `q` ranks (group 0, then group 1); returns the results of the `p + q` ranks in that order.
pub fn run_inter<R: Send>(
    p: usize,
    q: usize,
    layout: InterLayout,
    config: &AlgoConfig,
    f: impl Fn(&InterCollectives<MockComm>, usize) -> R + Sync,
) -> Vec<R> {
    run_inter_timeout(p, q, layout, config, Duration::from_secs(20), f)
}

/// `run_inter` whose waits give up after `timeout` (for tests of a process that never comes).
pub fn run_inter_timeout<R: Send>(
    p: usize,
    q: usize,
    layout: InterLayout,
    config: &AlgoConfig,
    timeout: Duration,
    f: impl Fn(&InterCollectives<MockComm>, usize) -> R + Sync,
) -> Vec<R> {
    let ends = MockComm::inter(p, q, timeout);
    std::thread::scope(|s| {
        let handles: Vec<_> = ends
            .into_iter()
            .enumerate()
            .map(|(i, (local, bridge))| {
                let f = &f;
                let cfg = config.clone();
                let (g, size, remote) = if i < p { (0, p, q) } else { (1, q, p) };
                let watch = MockComm::watch_of(&local);
                s.spawn(move || {
                    let local = Collectives::with_config(MockComm::from(local), cfg)
                        .expect("team of a mock group");
                    let (local, node) = match layout {
                        InterLayout::Flat => (Ok(local), "mock".to_string()),
                        InterLayout::OneNode => (local.with_nodes(&vec![0; size]), "mock".into()),
                        InterLayout::TwoNodesEach => {
                            let ids: Vec<u32> =
                                (0..size).map(|r| u32::from(r >= size / 2)).collect();
                            (local.with_nodes(&ids), format!("mock-{g}"))
                        }
                    };
                    let local = Rc::new(local.expect("node-aware mock group"));
                    let ic = InterCollectives::new(local, MockComm::from(bridge), remote, node)
                        .expect("intercommunicator of a mock world");
                    let out = f(&ic, g);
                    watch.leave();
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread panicked"))
            .collect()
    })
}

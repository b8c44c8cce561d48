//! An in-process communicator for tests: one thread per rank, channels between them, MPI
//! matching (per source and tag, in posting order), truncation errors, bounded waits.
#![allow(dead_code)]

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use ibdyn_collectives::{AlgoConfig, CollError, Collectives, P2pRequest, PointToPoint};
use std::cell::RefCell;
use std::collections::HashMap;
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

pub struct MockComm {
    rank: usize,
    size: usize,
    peers: Vec<Sender<Msg>>,
    inbox: Receiver<Msg>,
    m: RefCell<Matching>,
    timeout: Duration,
}

impl MockComm {
    /// A world of `n` connected ranks.
    pub fn world(n: usize, timeout: Duration) -> Vec<MockComm> {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..n).map(|_| unbounded()).unzip();
        rxs.into_iter()
            .enumerate()
            .map(|(rank, inbox)| MockComm {
                rank,
                size: n,
                peers: txs.clone(),
                inbox,
                m: RefCell::new(Matching::default()),
                timeout,
            })
            .collect()
    }

    fn file(&self, msg: Msg) {
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
        comm: &'a MockComm,
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
            match comm.inbox.recv_deadline(deadline) {
                Ok(msg) => comm.file(msg),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(CollError::comm(MockError::Timeout { src: key.0 }))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(CollError::comm(MockError::Gone(key.0)))
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
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn isend<'a>(&'a self, buf: &'a [u8], dest: usize, tag: i32) -> Result<MockReq<'a>, CollError> {
        let tx = self
            .peers
            .get(dest)
            .ok_or_else(|| CollError::comm(MockError::BadRank(dest)))?;
        tx.send(Msg {
            src: self.rank,
            tag,
            data: buf.to_vec(),
        })
        .map_err(|_| CollError::comm(MockError::Gone(dest)))?;
        Ok(MockReq::Sent(buf.len()))
    }
    fn irecv<'a>(
        &'a self,
        buf: &'a mut [u8],
        src: usize,
        tag: i32,
    ) -> Result<MockReq<'a>, CollError> {
        if src >= self.size {
            return Err(CollError::comm(MockError::BadRank(src)));
        }
        let key = (src, tag);
        let mut m = self.m.borrow_mut();
        let t = m.posted.entry(key).or_insert(0);
        let ticket = *t;
        *t += 1;
        Ok(MockReq::Recv {
            comm: self,
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
                s.spawn(move || {
                    let coll = Collectives::with_config(c, cfg).expect("team of a mock world");
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

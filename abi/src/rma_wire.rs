//! The messages of one-sided operations on a target of another node: an origin sends
//! `Request`s on the window's private communicator, several in one `Batch`, the target
//! applies them to its own memory and answers each with a `Reply` (the data of a get, or an
//! acknowledgement), in one batch too. Little-endian,
//! length-prefixed; a message that does not parse is an error, never a panic.

use crate::consts::*;
use crate::error::{err, MpiResult};
use ibdyn_collectives::ElemType;

/// Tag of requests on a window's private communicator (post and done use 1 and 2).
pub const TAG_REQUEST: i32 = 3;
/// Tag of replies.
pub const TAG_REPLY: i32 = 4;
/// Bytes of requests (or replies) that travel in one batch: an origin sends a target's queue
/// once it holds this much, without waiting for the epoch's end.
pub const BATCH_BYTES: usize = 64 << 10;

/// What the target does with its memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Writes the data.
    Put,
    /// Answers with the data.
    Get,
    /// Under its accumulate mutex: answers with the data (if `fetch`), then combines the
    /// origin's data into it with `reduce` (unless the operation is MPI_NO_OP).
    Accumulate { reduce: Reduce, fetch: bool },
    /// Under its accumulate mutex: answers with the data, and writes the first half of the
    /// request's data where the data equals the second half.
    CompareAndSwap,
    /// Takes the target's lock for the origin (MPI_Win_lock, or the first operation of an
    /// MPI_Win_lock_all epoch on it); the requests after it wait until it is granted.
    Lock { exclusive: bool },
    /// Gives back the lock `Lock` took.
    Unlock { exclusive: bool },
}

/// The reduction of an accumulate: a predefined operation on elements of a predefined
/// datatype, or of the element kind a derived datatype is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduce {
    pub op: Handle,
    /// The target datatype when it is predefined, else MPI_DATATYPE_NULL.
    pub ty: Handle,
    pub elem: Option<ElemType>,
}

/// One operation, as the target applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The origin's number for it, which the reply carries back.
    pub seq: u64,
    pub kind: Kind,
    /// Blocks of the target's memory, in the order of the data: (address, length).
    pub blocks: Vec<(u64, u64)>,
    pub data: Vec<u8>,
}

/// The target's answer to request `seq`: its data, or the error that stopped it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub seq: u64,
    pub outcome: Result<Vec<u8>, (i32, String)>,
}

const ELEMS: [ElemType; 10] = [
    ElemType::U8,
    ElemType::U16,
    ElemType::U32,
    ElemType::U64,
    ElemType::I8,
    ElemType::I16,
    ElemType::I32,
    ElemType::I64,
    ElemType::F32,
    ElemType::F64,
];

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(
            48 + 16 * self.blocks.len() + self.data.len(),
        ));
        w.u64(self.seq);
        match self.kind {
            Kind::Put => w.u8(0),
            Kind::Get => w.u8(1),
            Kind::Accumulate { reduce, fetch } => {
                w.u8(2);
                w.u8(u8::from(fetch));
                w.u64(reduce.op as u64);
                w.u64(reduce.ty as u64);
                let code = reduce.elem.and_then(|e| ELEMS.iter().position(|&x| x == e));
                w.u8(code.map_or(u8::MAX, |c| c as u8));
            }
            Kind::CompareAndSwap => w.u8(3),
            Kind::Lock { exclusive } => {
                w.u8(4);
                w.u8(u8::from(exclusive));
            }
            Kind::Unlock { exclusive } => {
                w.u8(5);
                w.u8(u8::from(exclusive));
            }
        }
        w.u64(self.blocks.len() as u64);
        for &(a, l) in &self.blocks {
            w.u64(a);
            w.u64(l);
        }
        w.bytes(&self.data);
        w.0
    }

    pub fn decode(b: &[u8]) -> MpiResult<Request> {
        let mut r = Reader { b, at: 0 };
        let seq = r.u64()?;
        let kind = match r.u8()? {
            0 => Kind::Put,
            1 => Kind::Get,
            2 => {
                let fetch = r.u8()? != 0;
                let op = r.u64()? as Handle;
                let ty = r.u64()? as Handle;
                let elem = ELEMS.get(usize::from(r.u8()?)).copied();
                Kind::Accumulate {
                    reduce: Reduce { op, ty, elem },
                    fetch,
                }
            }
            3 => Kind::CompareAndSwap,
            4 => Kind::Lock {
                exclusive: r.u8()? != 0,
            },
            5 => Kind::Unlock {
                exclusive: r.u8()? != 0,
            },
            k => return malformed(format!("unknown operation kind {k}")),
        };
        let n = r.len(16)?;
        let mut blocks = Vec::with_capacity(n);
        for _ in 0..n {
            blocks.push((r.u64()?, r.u64()?));
        }
        let data = r.bytes()?.to_vec();
        r.end()?;
        Ok(Request {
            seq,
            kind,
            blocks,
            data,
        })
    }

    /// Bytes of target memory the request covers.
    pub fn span(&self) -> u64 {
        self.blocks.iter().map(|b| b.1).sum()
    }
}

impl Reply {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.u64(self.seq);
        match &self.outcome {
            Ok(data) => {
                w.u8(0);
                w.bytes(data);
            }
            Err((code, why)) => {
                w.u8(1);
                w.u64(*code as u32 as u64);
                w.bytes(why.as_bytes());
            }
        }
        w.0
    }

    pub fn decode(b: &[u8]) -> MpiResult<Reply> {
        let mut r = Reader { b, at: 0 };
        let seq = r.u64()?;
        let outcome = match r.u8()? {
            0 => Ok(r.bytes()?.to_vec()),
            1 => {
                let code = r.u64()? as u32 as i32;
                Err((code, String::from_utf8_lossy(r.bytes()?).into_owned()))
            }
            k => return malformed(format!("unknown reply kind {k}")),
        };
        r.end()?;
        Ok(Reply { seq, outcome })
    }
}

/// Several requests (or replies) in one message, each length-prefixed: an origin sends the
/// operations of an epoch on one target together, and the target answers them together.
#[derive(Default)]
pub struct Batch {
    bytes: Vec<u8>,
}

impl Batch {
    pub fn push(&mut self, item: &[u8]) {
        let mut w = Writer(std::mem::take(&mut self.bytes));
        w.bytes(item);
        self.bytes = w.0;
    }

    /// Bytes so far.
    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    #[cfg(test)]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The items of a batch message.
    pub fn items(b: &[u8]) -> MpiResult<Vec<&[u8]>> {
        let mut r = Reader { b, at: 0 };
        let mut out = Vec::new();
        while r.at < b.len() {
            out.push(r.bytes()?);
        }
        Ok(out)
    }
}

fn malformed<T>(why: String) -> MpiResult<T> {
    err(
        MPI_ERR_OTHER,
        format!("a one-sided message from another node is malformed: {why}"),
    )
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> MpiResult<&'a [u8]> {
        match self.b.get(self.at..self.at.saturating_add(n)) {
            Some(s) => {
                self.at += n;
                Ok(s)
            }
            None => malformed(format!(
                "{n} bytes wanted at offset {} of {}",
                self.at,
                self.b.len()
            )),
        }
    }
    fn u8(&mut self) -> MpiResult<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> MpiResult<u64> {
        let s = self.take(8)?;
        Ok(u64::from_le_bytes(s.try_into().expect("8 bytes")))
    }
    /// A count of items of `each` bytes that the rest of the message can hold.
    fn len(&mut self, each: usize) -> MpiResult<usize> {
        let n = self.u64()?;
        let left = (self.b.len() - self.at) as u64;
        if n > left / each as u64 {
            return malformed(format!("{n} items of {each} bytes in {left} bytes"));
        }
        Ok(n as usize)
    }
    fn bytes(&mut self) -> MpiResult<&'a [u8]> {
        let n = self.len(1)?;
        self.take(n)
    }
    fn end(&self) -> MpiResult<()> {
        if self.at != self.b.len() {
            return malformed(format!("{} bytes left over", self.b.len() - self.at));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requests() -> Vec<Request> {
        let reduce = Reduce {
            op: MPI_SUM,
            ty: MPI_DATATYPE_NULL,
            elem: Some(ElemType::F64),
        };
        [
            Kind::Put,
            Kind::Get,
            Kind::Accumulate {
                reduce,
                fetch: true,
            },
            Kind::Accumulate {
                reduce: Reduce {
                    op: MPI_MAXLOC,
                    ty: MPI_INT,
                    elem: None,
                },
                fetch: false,
            },
            Kind::CompareAndSwap,
            Kind::Lock { exclusive: true },
            Kind::Unlock { exclusive: false },
        ]
        .into_iter()
        .enumerate()
        .map(|(i, kind)| Request {
            seq: i as u64 * 1_000_003,
            kind,
            blocks: vec![(0x7fff_0000_1000, 8), (0x7fff_0000_1010, 24)],
            data: (0..32).collect(),
        })
        .collect()
    }

    #[test]
    fn requests_and_replies_read_back_as_written() {
        for q in requests() {
            assert_eq!(Request::decode(&q.encode()).unwrap(), q);
            assert_eq!(q.span(), 32);
        }
        for outcome in [
            Ok(vec![1, 2, 3]),
            Err((MPI_ERR_RMA_RANGE, "outside".into())),
        ] {
            let r = Reply { seq: 9, outcome };
            assert_eq!(Reply::decode(&r.encode()).unwrap(), r);
        }
    }

    #[test]
    fn every_cut_or_grown_message_is_an_error() {
        for q in requests() {
            let b = q.encode();
            for cut in 0..b.len() {
                let e = Request::decode(&b[..cut]).unwrap_err().message;
                assert!(e.contains("malformed"), "{e}");
            }
            let mut longer = b.clone();
            longer.push(0);
            assert!(Request::decode(&longer).is_err());
        }
        let r = Reply {
            seq: 1,
            outcome: Ok(vec![7; 5]),
        }
        .encode();
        for cut in 0..r.len() {
            assert!(Reply::decode(&r[..cut]).is_err());
        }
    }

    #[test]
    fn a_batch_gives_back_its_items_and_refuses_a_cut() {
        let items: Vec<Vec<u8>> = requests().iter().map(Request::encode).collect();
        let mut b = Batch::default();
        assert_eq!(b.size(), 0);
        for i in &items {
            b.push(i);
        }
        assert_eq!(b.size(), items.iter().map(|i| i.len() + 8).sum::<usize>());
        let bytes = b.into_bytes();
        let back = Batch::items(&bytes).unwrap();
        assert_eq!(back, items.iter().map(Vec::as_slice).collect::<Vec<_>>());
        assert!(Batch::items(&[]).unwrap().is_empty());
        assert!(Batch::items(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn a_huge_count_is_refused_before_anything_is_allocated() {
        let mut b = 5u64.to_le_bytes().to_vec();
        b.push(0);
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(Request::decode(&b).is_err());
        b[8] = 9;
        assert!(Request::decode(&b).is_err());
    }
}

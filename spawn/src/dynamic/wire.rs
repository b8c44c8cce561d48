//! The few messages of the dynamic-process wire-up: what the spawning root leaves for the
//! children, the child root's hello, the parent root's welcome, and connect/accept.

use ibdyn_intercomm::{encode_cards, CommError, Gpid, ProcCard, Result};

const HELLO: &[u8; 4] = b"IBDH";
const WELCOME: &[u8; 4] = b"IBDW";
const CONNECT: &[u8; 4] = b"IBDC";
const ACCEPT: &[u8; 4] = b"IBDA";
const CONFIRM: &[u8; 4] = b"IBDK";
const WITHDRAW: &[u8; 4] = b"IBDX";
const REFUSE: &[u8; 4] = b"IBDR";

/// The key under which the spawning root leaves `ParentInfo` in the children's key-value space.
pub const PARENT_KEY: &str = "ibdyn-parent";

/// How the two roots of a spawn find each other.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wireup {
    /// One UD control datagram each way (the paper's design).
    Ud,
    /// A connection between the roots (shared memory on one node, RC across nodes).
    Rc,
}

impl Wireup {
    pub fn parse(s: &str) -> Result<Wireup> {
        match s {
            "ud" => Ok(Wireup::Ud),
            "rc" => Ok(Wireup::Rc),
            _ => Err(CommError::InvalidArgument(format!(
                "wire-up {s:?} is not ud or rc"
            ))),
        }
    }
}

fn malformed(what: &str) -> CommError {
    CommError::Malformed(format!("{what} message is malformed"))
}

struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(malformed(what));
        }
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        Ok(h)
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    fn blob(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }
}

fn put_blob(b: &mut Vec<u8>, x: &[u8]) {
    b.extend_from_slice(&(x.len() as u32).to_le_bytes());
    b.extend_from_slice(x);
}

/// What the children need to reach the spawning root.
#[derive(Clone, Debug, PartialEq)]
pub struct ParentInfo {
    pub spawn_id: u64,
    pub wireup: Wireup,
    pub root: ProcCard,
}

impl ParentInfo {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&self.spawn_id.to_le_bytes());
        b.push(matches!(self.wireup, Wireup::Rc) as u8);
        put_blob(&mut b, &self.root.to_bytes());
        b
    }
    pub fn decode(b: &[u8]) -> Result<ParentInfo> {
        let mut r = Rd(b);
        let spawn_id = r.u64("parent info")?;
        let wireup = if r.take(1, "parent info")?[0] == 1 {
            Wireup::Rc
        } else {
            Wireup::Ud
        };
        let root = ProcCard::from_bytes(r.blob("parent info")?)?;
        Ok(ParentInfo {
            spawn_id,
            wireup,
            root,
        })
    }
}

fn decode_cards(r: &mut Rd<'_>) -> Result<Vec<ProcCard>> {
    let (cards, rest) = ibdyn_intercomm::decode_cards(r.0)?;
    r.0 = rest;
    Ok(cards)
}

/// The child root's hello: which spawn, and the children's job.
#[derive(Clone, Debug, PartialEq)]
pub struct Hello {
    pub spawn_id: u64,
    pub job: u32,
    pub size: u32,
    pub root: ProcCard,
}

impl Hello {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = HELLO.to_vec();
        b.extend_from_slice(&self.spawn_id.to_le_bytes());
        b.extend_from_slice(&self.job.to_le_bytes());
        b.extend_from_slice(&self.size.to_le_bytes());
        put_blob(&mut b, &self.root.to_bytes());
        b
    }
    pub fn is(b: &[u8], spawn_id: u64) -> bool {
        b.len() >= 12 && &b[..4] == HELLO && b[4..12] == spawn_id.to_le_bytes()
    }
    pub fn decode(b: &[u8]) -> Result<Hello> {
        let mut r = Rd(b);
        if r.take(4, "hello")? != HELLO {
            return Err(malformed("hello"));
        }
        Ok(Hello {
            spawn_id: r.u64("hello")?,
            job: r.u32("hello")?,
            size: r.u32("hello")?,
            root: ProcCard::from_bytes(r.blob("hello")?)?,
        })
    }
}

/// The parent root's answer: the intercommunicator's context id and the parents' cards.
#[derive(Clone, Debug, PartialEq)]
pub struct Welcome {
    pub spawn_id: u64,
    pub ctx: u64,
    pub group: Vec<ProcCard>,
}

impl Welcome {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = WELCOME.to_vec();
        b.extend_from_slice(&self.spawn_id.to_le_bytes());
        b.extend_from_slice(&self.ctx.to_le_bytes());
        b.extend_from_slice(&encode_cards(&self.group));
        b
    }
    pub fn is(b: &[u8], spawn_id: u64) -> bool {
        b.len() >= 12 && &b[..4] == WELCOME && b[4..12] == spawn_id.to_le_bytes()
    }
    pub fn decode(b: &[u8]) -> Result<Welcome> {
        let mut r = Rd(b);
        if r.take(4, "welcome")? != WELCOME {
            return Err(malformed("welcome"));
        }
        let spawn_id = r.u64("welcome")?;
        let ctx = r.u64("welcome")?;
        let group = decode_cards(&mut r)?;
        Ok(Welcome {
            spawn_id,
            ctx,
            group,
        })
    }
}

/// Connect request (client root → server root) and its answer (server root → client root):
/// the port, the request's id (fresh per connect call; the answer repeats it, so an answer
/// to an earlier, abandoned connect is never taken for this one), the sender's group, and
/// (in the answer) the context id.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendezvous {
    pub accept: bool,
    pub port_id: u64,
    pub req: u64,
    pub ctx: u64,
    pub group: Vec<ProcCard>,
}

impl Rendezvous {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = if self.accept {
            ACCEPT.to_vec()
        } else {
            CONNECT.to_vec()
        };
        b.extend_from_slice(&self.port_id.to_le_bytes());
        b.extend_from_slice(&self.req.to_le_bytes());
        b.extend_from_slice(&self.ctx.to_le_bytes());
        b.extend_from_slice(&encode_cards(&self.group));
        b
    }
    /// A request (`accept` false) or an answer on `port_id`.
    pub fn is(b: &[u8], accept: bool, port_id: u64) -> bool {
        let magic = if accept { ACCEPT } else { CONNECT };
        b.len() >= 12 && &b[..4] == magic && b[4..12] == port_id.to_le_bytes()
    }
    /// The answer to request `req` on `port_id`.
    pub fn is_answer(b: &[u8], port_id: u64, req: u64) -> bool {
        Rendezvous::is(b, true, port_id) && b.len() >= 20 && b[12..20] == req.to_le_bytes()
    }
    pub fn decode(b: &[u8]) -> Result<Rendezvous> {
        let mut r = Rd(b);
        let accept = match r.take(4, "connect")? {
            m if m == ACCEPT => true,
            m if m == CONNECT => false,
            _ => return Err(malformed("connect")),
        };
        let port_id = r.u64("connect")?;
        let req = r.u64("connect")?;
        let ctx = r.u64("connect")?;
        let group = decode_cards(&mut r)?;
        Ok(Rendezvous {
            accept,
            port_id,
            req,
            ctx,
            group,
        })
    }
}

/// The connecting root's last word on request `req`: it took the answer (the accepting root
/// may return), or it gave up waiting (the accepting root drops the request, or the answer
/// it sent, and waits for another connect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectEnd {
    pub port_id: u64,
    pub req: u64,
    pub confirmed: bool,
}

impl ConnectEnd {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = if self.confirmed {
            CONFIRM.to_vec()
        } else {
            WITHDRAW.to_vec()
        };
        b.extend_from_slice(&self.port_id.to_le_bytes());
        b.extend_from_slice(&self.req.to_le_bytes());
        b
    }
    /// A confirmation or withdrawal of any request on `port_id`.
    pub fn is(b: &[u8], port_id: u64) -> bool {
        b.len() >= 12
            && (&b[..4] == CONFIRM || &b[..4] == WITHDRAW)
            && b[4..12] == port_id.to_le_bytes()
    }
    /// One of request `req` on `port_id`.
    pub fn is_for(b: &[u8], port_id: u64, req: u64) -> bool {
        ConnectEnd::is(b, port_id) && b.len() >= 20 && b[12..20] == req.to_le_bytes()
    }
    pub fn decode(b: &[u8]) -> Result<ConnectEnd> {
        let mut r = Rd(b);
        let confirmed = match r.take(4, "connect end")? {
            m if m == CONFIRM => true,
            m if m == WITHDRAW => false,
            _ => return Err(malformed("connect end")),
        };
        Ok(ConnectEnd {
            port_id: r.u64("connect end")?,
            req: r.u64("connect end")?,
            confirmed,
        })
    }
}

/// The members of a group given by cards.
pub fn gpids(cards: &[ProcCard]) -> Vec<Gpid> {
    cards.iter().map(|c| c.gpid).collect()
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Result<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return Err(CommError::Malformed("odd-length hex string".into()));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16)
                .map_err(|_| CommError::Malformed(format!("bad hex in {s:?}")))
        })
        .collect()
}

/// A random 64-bit id (spawn ids, port ids).
pub fn random_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.finish()
}

/// The answer of a process to a connect on a port it does not have (closed, or never
/// opened there): the connecting root fails at once instead of waiting out its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub port_id: u64,
    pub req: u64,
}

impl Refusal {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = REFUSE.to_vec();
        b.extend_from_slice(&self.port_id.to_le_bytes());
        b.extend_from_slice(&self.req.to_le_bytes());
        b
    }
    /// The refusal of request `req` on `port_id`.
    pub fn is_for(b: &[u8], port_id: u64, req: u64) -> bool {
        b.len() >= 20
            && &b[..4] == REFUSE
            && b[4..12] == port_id.to_le_bytes()
            && b[12..20] == req.to_le_bytes()
    }
    /// The refusal a connect request `b` gets when `open` does not hold its port; `None` for
    /// any other datagram, and for a request on a port that is open.
    pub fn of_request(b: &[u8], open: impl Fn(u64) -> bool) -> Option<Refusal> {
        if b.len() < 20 || &b[..4] != CONNECT {
            return None;
        }
        let port_id = u64::from_le_bytes(b[4..12].try_into().expect("8 bytes"));
        let req = u64::from_le_bytes(b[12..20].try_into().expect("8 bytes"));
        (!open(port_id)).then_some(Refusal { port_id, req })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(rank: u32) -> ProcCard {
        ProcCard {
            gpid: Gpid { job: 3, rank },
            node_uid: "n".into(),
            pid: 10 + rank as i32,
            start: 1000 + u64::from(rank),
            shm_name: "s".into(),
            fabric: vec![1, 2],
        }
    }

    #[test]
    fn messages_round_trip_and_reject_garbage() {
        let p = ParentInfo {
            spawn_id: 9,
            wireup: Wireup::Rc,
            root: card(0),
        };
        assert_eq!(ParentInfo::decode(&p.encode()).unwrap(), p);
        let h = Hello {
            spawn_id: 9,
            job: 4,
            size: 8,
            root: card(1),
        };
        assert!(Hello::is(&h.encode(), 9) && !Hello::is(&h.encode(), 8));
        assert_eq!(Hello::decode(&h.encode()).unwrap(), h);
        let w = Welcome {
            spawn_id: 9,
            ctx: 42,
            group: vec![card(0), card(1)],
        };
        assert_eq!(Welcome::decode(&w.encode()).unwrap(), w);
        let c = Rendezvous {
            accept: false,
            port_id: 5,
            req: 77,
            ctx: 0,
            group: vec![card(2)],
        };
        assert!(Rendezvous::is(&c.encode(), false, 5) && !Rendezvous::is(&c.encode(), true, 5));
        assert_eq!(Rendezvous::decode(&c.encode()).unwrap(), c);
        let a = Rendezvous {
            accept: true,
            ctx: 42,
            ..c.clone()
        };
        assert!(Rendezvous::is_answer(&a.encode(), 5, 77));
        assert!(
            !Rendezvous::is_answer(&a.encode(), 5, 78),
            "another request's answer"
        );
        assert!(
            !Rendezvous::is_answer(&c.encode(), 5, 77),
            "a request is no answer"
        );
        let end = ConnectEnd {
            port_id: 5,
            req: 77,
            confirmed: false,
        };
        assert!(ConnectEnd::is(&end.encode(), 5) && !ConnectEnd::is(&end.encode(), 6));
        assert!(
            ConnectEnd::is_for(&end.encode(), 5, 77) && !ConnectEnd::is_for(&end.encode(), 5, 7)
        );
        assert!(!ConnectEnd::is(&c.encode(), 5), "a request is no end");
        assert_eq!(ConnectEnd::decode(&end.encode()).unwrap(), end);
        let yes = ConnectEnd {
            confirmed: true,
            ..end
        };
        assert_eq!(ConnectEnd::decode(&yes.encode()).unwrap(), yes);
        for m in [h.encode(), w.encode(), c.encode(), end.encode()] {
            for cut in 0..m.len() {
                assert!(Hello::decode(&m[..cut]).is_err() || cut >= 4);
                let _ = Welcome::decode(&m[..cut]);
                let _ = Rendezvous::decode(&m[..cut]);
                assert!(ConnectEnd::decode(&m[..cut]).is_err() || cut >= 20);
            }
        }
        assert_eq!(unhex(&hex(&[0, 255, 16])).unwrap(), vec![0, 255, 16]);
        assert!(unhex("zz").is_err());
    }

    #[test]
    fn a_connect_to_a_port_not_open_is_refused_and_the_refusal_is_its() {
        let req = Rendezvous {
            accept: false,
            port_id: 7,
            req: 99,
            ctx: 0,
            group: Vec::new(),
        }
        .encode();
        assert_eq!(Refusal::of_request(&req, |id| id == 7), None);
        let r = Refusal::of_request(&req, |_| false).expect("refused");
        assert!(Refusal::is_for(&r.encode(), 7, 99));
        assert!(!Refusal::is_for(&r.encode(), 7, 98));
        // An answer, or a short datagram, is never refused.
        let answer = Rendezvous {
            accept: true,
            port_id: 7,
            req: 99,
            ctx: 0,
            group: Vec::new(),
        }
        .encode();
        assert_eq!(Refusal::of_request(&answer, |_| false), None);
        assert_eq!(Refusal::of_request(b"IBDC", |_| false), None);
    }
}

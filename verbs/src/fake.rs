//! An in-process fake provider for unit tests of the control channel and connection manager:
//! a shared "wire" of datagram queues and RC inboxes, with knobs to drop and reorder datagrams.
//! No RDMA. In `strict_rc` mode RC follows InfiniBand's rules instead of TCP's: a send may only
//! be posted on a connected endpoint, and a message reaching an endpoint that is not connected
//! yet is lost and breaks the sender's endpoint (retry count exceeded).

use crate::card::{AddressCard, SockAddr};
use crate::config::ProviderKind;
use crate::error::{Result, VerbsError};
use crate::provider::{Provider, RcEndpoint, RcEvent};
use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub(crate) struct Wire {
    ud: HashMap<u16, VecDeque<Vec<u8>>>,
    rc: HashMap<(u16, u32), VecDeque<Vec<u8>>>,
    /// Endpoints that are connected (ready to receive), by (port, qp).
    rtr: HashSet<(u16, u32)>,
    pub(crate) drop_every: u64,
    counter: u64,
    pub(crate) dropped: u64,
    /// InfiniBand's RC rules (see the module comment).
    pub(crate) strict_rc: bool,
    /// Nonzero: a `ud_poll` hands out the queued datagrams in an order drawn from this seed.
    pub(crate) shuffle: u64,
}

impl Wire {
    fn next_random(&mut self) -> u64 {
        self.shuffle ^= self.shuffle << 13;
        self.shuffle ^= self.shuffle >> 7;
        self.shuffle ^= self.shuffle << 17;
        self.shuffle
    }
}

pub(crate) type Net = Arc<Mutex<Wire>>;

pub(crate) struct FakeProvider {
    net: Net,
    port: u16,
    next_qp: u32,
    qps: HashMap<u32, Option<(u16, u32)>>,
    early: HashMap<u32, Vec<Vec<u8>>>,
    /// Endpoints whose messages were lost (strict mode), reported at the next poll.
    broken: Vec<u32>,
    mtu: usize,
}

pub(crate) fn card(port: u16) -> AddressCard {
    AddressCard::Sock(SockAddr {
        ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        udp_port: port,
        tcp_port: port,
    })
}

impl FakeProvider {
    pub(crate) fn new(net: &Net, port: u16, mtu: usize) -> Self {
        net.lock().unwrap().ud.entry(port).or_default();
        FakeProvider {
            net: net.clone(),
            port,
            next_qp: 0,
            qps: HashMap::new(),
            early: HashMap::new(),
            broken: Vec::new(),
            mtu,
        }
    }
}

impl Provider for FakeProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Sock
    }
    fn card(&self) -> AddressCard {
        card(self.port)
    }
    fn ud_mtu(&self) -> usize {
        self.mtu
    }
    fn ud_send(&mut self, to: &AddressCard, datagram: &[u8]) -> Result<()> {
        let AddressCard::Sock(a) = to else {
            return Ok(());
        };
        let mut w = self.net.lock().unwrap();
        w.counter += 1;
        if w.drop_every > 0 && w.counter >= w.drop_every {
            w.counter = 0;
            w.dropped += 1;
            return Ok(());
        }
        if let Some(q) = w.ud.get_mut(&a.udp_port) {
            q.push_back(datagram.to_vec());
        }
        Ok(())
    }
    fn ud_poll(&mut self, out: &mut Vec<Vec<u8>>) -> Result<()> {
        let mut w = self.net.lock().unwrap();
        let mut got: Vec<Vec<u8>> = match w.ud.get_mut(&self.port) {
            Some(q) => q.drain(..).collect(),
            None => return Ok(()),
        };
        if w.shuffle != 0 {
            for i in (1..got.len()).rev() {
                let j = (w.next_random() % (i as u64 + 1)) as usize;
                got.swap(i, j);
            }
        }
        out.extend(got);
        Ok(())
    }
    fn rc_create(&mut self) -> Result<RcEndpoint> {
        self.next_qp += 1;
        self.qps.insert(self.next_qp, None);
        Ok(RcEndpoint {
            qpn: self.next_qp,
            psn: 0,
        })
    }
    fn rc_connect(&mut self, qp: u32, remote_card: &AddressCard, remote: RcEndpoint) -> Result<()> {
        let AddressCard::Sock(a) = remote_card else {
            return Ok(());
        };
        self.qps.insert(qp, Some((a.udp_port, remote.qpn)));
        let early = self.early.remove(&qp).unwrap_or_default();
        let mut w = self.net.lock().unwrap();
        w.rtr.insert((self.port, qp));
        w.rc.entry((a.udp_port, remote.qpn))
            .or_default()
            .extend(early);
        Ok(())
    }
    fn rc_destroy(&mut self, qp: u32) {
        self.qps.remove(&qp);
        self.net.lock().unwrap().rtr.remove(&(self.port, qp));
    }
    fn rc_send(&mut self, qp: u32, parts: &[&[u8]]) -> Result<()> {
        let mut w = self.net.lock().unwrap();
        match self.qps.get(&qp) {
            Some(Some(dest)) if w.strict_rc && !w.rtr.contains(dest) => {
                self.broken.push(qp);
            }
            Some(Some(dest)) => w.rc.entry(*dest).or_default().push_back(parts.concat()),
            _ if w.strict_rc => {
                return Err(VerbsError::InvalidArgument(format!(
                    "send posted on endpoint {qp}, which is not connected"
                )))
            }
            _ => self.early.entry(qp).or_default().push(parts.concat()),
        }
        Ok(())
    }
    fn rc_poll(&mut self, out: &mut Vec<RcEvent>) -> Result<()> {
        for qp in self.broken.drain(..) {
            out.push(RcEvent::Broken {
                qp,
                error: VerbsError::InvalidArgument(format!(
                    "endpoint {qp}: retry count exceeded (the peer's endpoint was not ready)"
                )),
            });
        }
        let mut w = self.net.lock().unwrap();
        for qp in self.qps.keys() {
            if let Some(q) = w.rc.get_mut(&(self.port, *qp)) {
                out.extend(q.drain(..).map(|data| RcEvent::Recv { qp: *qp, data }));
            }
        }
        Ok(())
    }
}

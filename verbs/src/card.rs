//! The address card: what another process needs to reach this one. Published through PMI as hex.

use crate::config::ProviderKind;
use crate::error::{Result, VerbsError};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

const CARD_VERSION: u8 = 1;
const TAG_IB: u8 = 1;
const TAG_SOCK: u8 = 2;

/// Where an `ib` process listens: port LID, GID (used with a GRH on RoCE), UD queue pair number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IbAddr {
    pub lid: u16,
    pub gid: [u8; 16],
    pub qpn: u32,
    /// True on RoCE (and routed IB): address handles need a GRH.
    pub global: bool,
}

/// Where a `sock` process listens: IP, UDP port (UD), TCP port (RC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SockAddr {
    pub ip: IpAddr,
    pub udp_port: u16,
    pub tcp_port: u16,
}

impl SockAddr {
    pub fn udp(&self) -> SocketAddr {
        SocketAddr::new(self.ip, self.udp_port)
    }
    pub fn tcp(&self) -> SocketAddr {
        SocketAddr::new(self.ip, self.tcp_port)
    }
}

/// One process's address on the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressCard {
    Ib(IbAddr),
    Sock(SockAddr),
}

impl AddressCard {
    pub fn provider(&self) -> ProviderKind {
        match self {
            AddressCard::Ib(_) => ProviderKind::Ib,
            AddressCard::Sock(_) => ProviderKind::Sock,
        }
    }

    /// Compact binary form (at most 27 bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![CARD_VERSION];
        match self {
            AddressCard::Ib(a) => {
                b.push(TAG_IB);
                b.extend_from_slice(&a.lid.to_le_bytes());
                b.extend_from_slice(&a.gid);
                b.extend_from_slice(&a.qpn.to_le_bytes());
                b.push(a.global as u8);
            }
            AddressCard::Sock(a) => {
                b.push(TAG_SOCK);
                match a.ip {
                    IpAddr::V4(v4) => {
                        b.push(4);
                        b.extend_from_slice(&v4.octets());
                    }
                    IpAddr::V6(v6) => {
                        b.push(6);
                        b.extend_from_slice(&v6.octets());
                    }
                }
                b.extend_from_slice(&a.udp_port.to_le_bytes());
                b.extend_from_slice(&a.tcp_port.to_le_bytes());
            }
        }
        b
    }

    /// Parse and validate; the whole slice must be one card.
    pub fn from_bytes(b: &[u8]) -> Result<AddressCard> {
        let (card, used) = Self::parse_prefix(b)?;
        if used != b.len() {
            return Err(VerbsError::InvalidCard(format!(
                "{} trailing bytes",
                b.len() - used
            )));
        }
        Ok(card)
    }

    /// Parse a card at the start of `b`; returns the card and its length.
    pub(crate) fn parse_prefix(b: &[u8]) -> Result<(AddressCard, usize)> {
        let bad = |m: &str| VerbsError::InvalidCard(m.to_string());
        if b.len() < 2 {
            return Err(bad("truncated header"));
        }
        if b[0] != CARD_VERSION {
            return Err(VerbsError::InvalidCard(format!("unknown version {}", b[0])));
        }
        match b[1] {
            TAG_IB => {
                if b.len() < 2 + 2 + 16 + 4 + 1 {
                    return Err(bad("truncated ib card"));
                }
                let lid = u16::from_le_bytes([b[2], b[3]]);
                let mut gid = [0u8; 16];
                gid.copy_from_slice(&b[4..20]);
                let qpn = u32::from_le_bytes([b[20], b[21], b[22], b[23]]);
                if qpn == 0 || qpn > 0x00ff_ffff {
                    return Err(VerbsError::InvalidCard(format!(
                        "queue pair number {qpn:#x} out of range"
                    )));
                }
                let global = match b[24] {
                    0 => false,
                    1 => true,
                    x => return Err(VerbsError::InvalidCard(format!("bad GRH flag {x}"))),
                };
                Ok((
                    AddressCard::Ib(IbAddr {
                        lid,
                        gid,
                        qpn,
                        global,
                    }),
                    25,
                ))
            }
            TAG_SOCK => {
                let (ip, at) = match b.get(2) {
                    Some(4) if b.len() >= 7 => {
                        (IpAddr::V4(Ipv4Addr::new(b[3], b[4], b[5], b[6])), 7)
                    }
                    Some(6) if b.len() >= 19 => {
                        let mut o = [0u8; 16];
                        o.copy_from_slice(&b[3..19]);
                        (IpAddr::V6(Ipv6Addr::from(o)), 19)
                    }
                    _ => return Err(bad("bad or truncated IP address")),
                };
                if b.len() < at + 4 {
                    return Err(bad("truncated ports"));
                }
                let udp_port = u16::from_le_bytes([b[at], b[at + 1]]);
                let tcp_port = u16::from_le_bytes([b[at + 2], b[at + 3]]);
                if udp_port == 0 || tcp_port == 0 {
                    return Err(bad("port 0"));
                }
                Ok((
                    AddressCard::Sock(SockAddr {
                        ip,
                        udp_port,
                        tcp_port,
                    }),
                    at + 4,
                ))
            }
            t => Err(VerbsError::InvalidCard(format!("unknown provider tag {t}"))),
        }
    }

    /// Lower-case hex of [`Self::to_bytes`], for the PMI key-value space.
    pub fn to_hex(&self) -> String {
        self.to_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn from_hex(s: &str) -> Result<AddressCard> {
        let s = s.trim();
        if s.len() & 1 == 1 || s.len() > 128 {
            return Err(VerbsError::InvalidCard(format!(
                "bad hex length {}",
                s.len()
            )));
        }
        let bytes = (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16))
            .collect::<std::result::Result<Vec<u8>, _>>()
            .map_err(|e| VerbsError::InvalidCard(format!("bad hex: {e}")))?;
        Self::from_bytes(&bytes)
    }
}

impl std::fmt::Display for AddressCard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AddressCard::Ib(a) => {
                write!(f, "ib:lid={:#x},qpn={:#x}", a.lid, a.qpn)?;
                if a.global {
                    write!(f, ",gid={}", Ipv6Addr::from(a.gid))?;
                }
                Ok(())
            }
            AddressCard::Sock(a) => write!(f, "sock:{}/udp{}/tcp{}", a.ip, a.udp_port, a.tcp_port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_both_kinds() {
        let cards = [
            AddressCard::Ib(IbAddr {
                lid: 7,
                gid: [0xfe; 16],
                qpn: 0x1234,
                global: true,
            }),
            AddressCard::Sock(SockAddr {
                ip: "127.0.0.1".parse().unwrap(),
                udp_port: 9,
                tcp_port: 10,
            }),
            AddressCard::Sock(SockAddr {
                ip: "::1".parse().unwrap(),
                udp_port: 65535,
                tcp_port: 1,
            }),
        ];
        for c in cards {
            assert_eq!(AddressCard::from_bytes(&c.to_bytes()).unwrap(), c);
            assert_eq!(AddressCard::from_hex(&c.to_hex()).unwrap(), c);
        }
    }

    #[test]
    fn rejects_bad_cards() {
        let good = AddressCard::Ib(IbAddr {
            lid: 1,
            gid: [0; 16],
            qpn: 5,
            global: false,
        })
        .to_bytes();
        for n in 0..good.len() {
            assert!(
                AddressCard::from_bytes(&good[..n]).is_err(),
                "truncated at {n}"
            );
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert!(AddressCard::from_bytes(&trailing).is_err());
        let mut big_qpn = good.clone();
        big_qpn[23] = 0x01;
        assert!(AddressCard::from_bytes(&big_qpn).is_err());
        assert!(AddressCard::from_bytes(&[9, 1]).is_err());
        assert!(AddressCard::from_bytes(&[1, 9]).is_err());
        assert!(AddressCard::from_hex("zz").is_err());
        assert!(AddressCard::from_hex("010").is_err());
    }
}

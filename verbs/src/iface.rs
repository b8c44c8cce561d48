//! Which local address the `sock` fabric binds to: the interface that reaches the other
//! hosts. `IBDYN_IFACE` pins an interface (by name, or an address literal); a node daemon on
//! a real host sets `IBDYN_FABRIC_IP` for its ranks to the address it reaches the launcher
//! from; neither set: loopback (every process on this machine).

use crate::error::{Result, VerbsError};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// Interface (name or address) to use for the fabric and the daemons' links.
pub const IFACE_ENV: &str = "IBDYN_IFACE";
/// The address a node daemon chose for its ranks' fabric endpoints.
pub const FABRIC_IP_ENV: &str = "IBDYN_FABRIC_IP";

/// One address of one local interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfaceAddr {
    pub name: String,
    pub ip: IpAddr,
    pub loopback: bool,
}

/// Every address of every interface that is up (IPv4 and IPv6, link-local IPv6 left out).
pub fn local_addresses() -> Result<Vec<IfaceAddr>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(VerbsError::sock(
            "getifaddrs",
            "local interfaces",
            std::io::Error::last_os_error(),
        ));
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        let up = ifa.ifa_flags & (libc::IFF_UP as libc::c_uint) != 0;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() || !up {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr whose family says which struct it is.
        let ip = unsafe {
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)))
                }
                libc::AF_INET6 => {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr))
                }
                _ => continue,
            }
        };
        if let IpAddr::V6(v6) = ip {
            if v6.segments()[0] & 0xffc0 == 0xfe80 {
                continue;
            }
        }
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        let loopback = ifa.ifa_flags & (libc::IFF_LOOPBACK as libc::c_uint) != 0;
        out.push(IfaceAddr { name, ip, loopback });
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

/// The address of interface `name` (IPv4 preferred), or `name` itself when it is an address.
pub fn address_of(name: &str) -> Result<IpAddr> {
    if let Ok(ip) = name.trim().parse::<IpAddr>() {
        return Ok(ip);
    }
    let all = local_addresses()?;
    let mine: Vec<&IfaceAddr> = all.iter().filter(|a| a.name == name.trim()).collect();
    mine.iter()
        .find(|a| a.ip.is_ipv4())
        .or(mine.first())
        .map(|a| a.ip)
        .ok_or_else(|| {
            let names: std::collections::BTreeSet<&str> =
                all.iter().map(|a| a.name.as_str()).collect();
            VerbsError::InvalidArgument(format!(
                "{IFACE_ENV}={name}: no interface of that name is up with an address \
                 (interfaces up: {}); name one of them or an address",
                names.into_iter().collect::<Vec<_>>().join(", ")
            ))
        })
}

/// The local address the kernel would send from to reach `peer` (no packet is sent).
pub fn route_source(peer: IpAddr) -> Option<IpAddr> {
    let any: IpAddr = match peer {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let s = UdpSocket::bind((any, 0)).ok()?;
    s.connect(SocketAddr::new(peer, 9)).ok()?;
    s.local_addr().ok().map(|a| a.ip())
}

/// The fabric's bind address from the environment: `IBDYN_IFACE`, else `IBDYN_FABRIC_IP`,
/// else `default`.
pub fn bind_ip_from_env(default: IpAddr) -> Result<IpAddr> {
    if let Some(v) = std::env::var(IFACE_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        return address_of(&v);
    }
    match std::env::var(FABRIC_IP_ENV) {
        Ok(v) if !v.trim().is_empty() => v.trim().parse().map_err(|_| {
            VerbsError::InvalidArgument(format!("{FABRIC_IP_ENV}={v} is not an IP address"))
        }),
        _ => Ok(default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_listed_found_by_name_and_routes_to_itself() {
        let all = local_addresses().expect("getifaddrs");
        let lo = all
            .iter()
            .find(|a| a.loopback && a.ip.is_ipv4())
            .expect("an IPv4 loopback interface");
        assert_eq!(address_of(&lo.name).expect("by name"), lo.ip);
        assert_eq!(
            address_of("10.1.2.3").expect("a literal"),
            "10.1.2.3".parse::<IpAddr>().unwrap()
        );
        let err = address_of("no-such-iface0").expect_err("unknown interface");
        assert!(err.to_string().contains(&lo.name), "{err}");
        assert_eq!(route_source(lo.ip), Some(lo.ip));
    }
}

//! Provider choice and fabric settings.

use crate::error::{Result, VerbsError};
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

/// Where the kernel lists the verbs devices (one entry per uverbs device).
const VERBS_SYSFS_CLASS: &str = "/sys/class/infiniband_verbs";

/// Which provider carries the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// libibverbs (InfiniBand or RoCE).
    Ib,
    /// UDP for UD, TCP for RC, RDMA emulated by the target's progress loop.
    Sock,
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProviderKind::Ib => "ib",
            ProviderKind::Sock => "sock",
        })
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = VerbsError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ib" => Ok(ProviderKind::Ib),
            "sock" => Ok(ProviderKind::Sock),
            other => Err(VerbsError::UnknownProvider(other.to_string())),
        }
    }
}

/// Settings of one [`crate::Fabric`].
#[derive(Debug, Clone)]
pub struct FabricConfig {
    /// `None`: `IBDYN_PROVIDER` if set, else `ib` when a device is present, else `sock`.
    pub provider: Option<ProviderKind>,
    /// Carried in every control datagram; datagrams with another secret are dropped.
    pub job_secret: u64,
    /// This process's peer key (unique in the job); breaks simultaneous-connect ties.
    pub local_key: u64,
    /// `sock`: address to bind the UDP and TCP sockets to.
    pub bind_ip: IpAddr,
    /// Largest UD datagram, header included (`ib`: clamped to the port MTU).
    pub ud_mtu: usize,
    /// First retransmission timeout of the UD control channel (doubles per retry, capped at 8x).
    pub retry_timeout: Duration,
    /// Retransmissions before a control datagram (and a connect request) is given up.
    pub max_retries: u32,
    /// `sock` test knob: fraction of outgoing UD datagrams dropped (also `IBDYN_SOCK_DROP`).
    pub drop_rate: f64,
    /// A connect handshake that is not answered within the retry budget is started over
    /// (reported as `Event::ConnectSlow`) instead of failing the peer: the peer may be alive
    /// and busy outside any call that progresses its fabric. The owner then decides, from
    /// what else it knows of the peer, whether to wait on or to `Fabric::abandon` it.
    pub patient_connects: bool,
    /// Largest RDMA read or write handed to the provider in one piece; longer ones go as
    /// several (see `pieces`). Lower it for a device whose `max_msg_sz` is smaller.
    pub max_transfer: usize,
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig {
            provider: None,
            job_secret: 0,
            local_key: 0,
            bind_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            ud_mtu: 2048,
            retry_timeout: Duration::from_millis(50),
            max_retries: 10,
            drop_rate: 0.0,
            patient_connects: false,
            max_transfer: crate::pieces::PIECE,
        }
    }
}

impl FabricConfig {
    /// Resolve the provider: explicit setting, then `IBDYN_PROVIDER`, then device detection.
    pub fn resolve_provider(&self) -> Result<ProviderKind> {
        if let Some(p) = self.provider {
            return Ok(p);
        }
        if let Ok(v) = std::env::var("IBDYN_PROVIDER") {
            if !v.trim().is_empty() {
                return v.parse();
            }
        }
        // libibverbs finds its devices under this sysfs class: without it there is none, and
        // asking (a netlink socket, sysfs reads) would cost every process's start-up.
        if !std::path::Path::new(VERBS_SYSFS_CLASS).exists() {
            return Ok(ProviderKind::Sock);
        }
        match crate::devices() {
            Ok(d) if !d.is_empty() => Ok(ProviderKind::Ib),
            _ => Ok(ProviderKind::Sock),
        }
    }

    /// The drop rate after applying `IBDYN_SOCK_DROP` (the environment wins when set and valid).
    pub(crate) fn effective_drop_rate(&self) -> f64 {
        std::env::var("IBDYN_SOCK_DROP")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(self.drop_rate)
            .clamp(0.0, 1.0)
    }

    /// Retransmission timeout before attempt `attempt` (1-based): doubling, capped at 8x.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        self.retry_timeout * (1u32 << attempt.saturating_sub(1).min(3))
    }

    /// Time from the first send until the last retry of a control datagram has timed out.
    pub(crate) fn retry_budget(&self) -> Duration {
        (1..=self.max_retries + 1).map(|a| self.backoff(a)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_and_backoff() {
        assert_eq!("ib".parse::<ProviderKind>().unwrap(), ProviderKind::Ib);
        assert_eq!(
            " SOCK ".parse::<ProviderKind>().unwrap(),
            ProviderKind::Sock
        );
        assert!(matches!(
            "verbs".parse::<ProviderKind>(),
            Err(VerbsError::UnknownProvider(_))
        ));
        assert_eq!(
            (ProviderKind::Ib.to_string(), ProviderKind::Sock.to_string()),
            ("ib".into(), "sock".into())
        );
        let c = FabricConfig {
            retry_timeout: Duration::from_millis(10),
            max_retries: 5,
            ..FabricConfig::default()
        };
        let steps: Vec<u128> = (1..=6).map(|a| c.backoff(a).as_millis()).collect();
        assert_eq!(steps, vec![10, 20, 40, 80, 80, 80]);
        assert_eq!(c.retry_budget(), Duration::from_millis(310));
        let forced = FabricConfig {
            provider: Some(ProviderKind::Sock),
            ..FabricConfig::default()
        };
        assert_eq!(forced.resolve_provider().unwrap(), ProviderKind::Sock);
    }
}

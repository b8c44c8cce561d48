//! Server-side PMI state, independent of sockets: key-value spaces, the name service and the
//! aggregation of collectives (fence, allgather). A daemon owns one `Directory`; named process
//! sets will be one more map in it, next to the key-value spaces and the services.

use std::collections::{BTreeMap, HashMap};

/// One key-value space (one per job, named by its kvsname).
#[derive(Default, Debug)]
pub struct KvsStore {
    entries: HashMap<String, String>,
    /// Puts since the last fence, in order: what a fence has to carry to the other daemons.
    unfenced: Vec<(String, String)>,
}

impl KvsStore {
    /// A put made by a process (recorded for the next fence).
    pub fn put(&mut self, key: &str, value: &str) {
        self.entries.insert(key.to_string(), value.to_string());
        self.unfenced.push((key.to_string(), value.to_string()));
    }

    /// A value learnt from elsewhere (a fence or a fetch): cached, not re-sent.
    pub fn learn(&mut self, key: &str, value: &str) {
        self.entries.insert(key.to_string(), value.to_string());
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }

    /// Takes the puts made since the last call.
    pub fn take_unfenced(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.unfenced)
    }

    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("service {0:?} is already published")]
    AlreadyPublished(String),
    #[error("service {0:?} is not published")]
    NotPublished(String),
}

/// publish_name / lookup_name / unpublish_name. A name remembers the rank that published it
/// (when the process manager knows it), so that it can be withdrawn once that rank is gone: a
/// port lives in the process that opened it, and a name left behind by a job that ended only
/// sends clients to a dead port and stops a restarted server from publishing it again.
#[derive(Default, Debug)]
pub struct NameService {
    services: HashMap<String, Published>,
}

#[derive(Debug)]
struct Published {
    port: String,
    /// (job, rank) of the publisher.
    owner: Option<(u32, u32)>,
}

impl NameService {
    pub fn publish(
        &mut self,
        service: &str,
        port: &str,
        owner: Option<(u32, u32)>,
    ) -> Result<(), NameError> {
        if self.services.contains_key(service) {
            return Err(NameError::AlreadyPublished(service.into()));
        }
        let port = port.into();
        self.services
            .insert(service.into(), Published { port, owner });
        Ok(())
    }

    pub fn lookup(&self, service: &str) -> Result<&str, NameError> {
        self.services
            .get(service)
            .map(|p| p.port.as_str())
            .ok_or_else(|| NameError::NotPublished(service.into()))
    }

    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.services
            .iter()
            .map(|(k, p)| (k.as_str(), p.port.as_str()))
    }

    pub fn unpublish(&mut self, service: &str) -> Result<(), NameError> {
        self.services
            .remove(service)
            .map(|_| ())
            .ok_or_else(|| NameError::NotPublished(service.into()))
    }

    /// Withdraws every name rank `rank` of `job` published; returns them.
    pub fn withdraw_owned_by(&mut self, job: u32, rank: u32) -> Vec<String> {
        let gone: Vec<String> = self
            .services
            .iter()
            .filter(|(_, p)| p.owner == Some((job, rank)))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &gone {
            self.services.remove(k);
        }
        gone
    }
}

/// Every named thing a daemon serves.
#[derive(Default, Debug)]
pub struct Directory {
    pub kvs: HashMap<String, KvsStore>,
    pub names: NameService,
}

impl Directory {
    pub fn kvs(&mut self, kvsname: &str) -> &mut KvsStore {
        self.kvs.entry(kvsname.to_string()).or_default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollKind {
    Fence,
    Allgather,
}

impl CollKind {
    pub fn name(self) -> &'static str {
        match self {
            CollKind::Fence => "fence",
            CollKind::Allgather => "allgather",
        }
    }

    pub fn parse(s: &str) -> Option<CollKind> {
        match s {
            "fence" => Some(CollKind::Fence),
            "allgather" => Some(CollKind::Allgather),
            _ => None,
        }
    }
}

/// One collective in progress at one daemon: how many of the ranks of its subtree have arrived.
#[derive(Debug)]
pub struct Collective {
    pub kind: CollKind,
    pub arrived: u32,
    /// Allgather contributions as (rank, hex value).
    pub values: Vec<(u32, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CollError {
    #[error("rank {rank} {reason} before joining {kind} #{seq}")]
    RankGone {
        rank: u32,
        reason: String,
        kind: &'static str,
        seq: u64,
    },
    #[error("collective #{seq} mismatch: {got} called while the others called {want}")]
    Mismatch {
        seq: u64,
        got: &'static str,
        want: &'static str,
    },
}

/// Collectives of one job at one daemon, by sequence number (the k-th collective call of every
/// rank is the same collective, so ranks may have several non-blocking ones in flight).
#[derive(Debug)]
pub struct CollectiveTable {
    /// Ranks of this daemon's subtree: a collective is complete here when all have arrived.
    pub expected: u32,
    pending: BTreeMap<u64, Collective>,
    /// Set once a rank has left: every collective from `from_seq` on fails.
    broken: Option<(u64, u32, String)>,
}

impl CollectiveTable {
    pub fn new(expected: u32) -> CollectiveTable {
        CollectiveTable {
            expected,
            pending: BTreeMap::new(),
            broken: None,
        }
    }

    /// Adds `count` arrivals (and their values) to collective `seq`. Returns the collective
    /// when the whole subtree has arrived.
    pub fn arrive(
        &mut self,
        seq: u64,
        kind: CollKind,
        count: u32,
        values: Vec<(u32, String)>,
    ) -> Result<Option<Collective>, CollError> {
        if let Some(e) = self.broken_error(seq, kind) {
            return Err(e);
        }
        let c = self.pending.entry(seq).or_insert_with(|| Collective {
            kind,
            arrived: 0,
            values: Vec::new(),
        });
        if c.kind != kind {
            return Err(CollError::Mismatch {
                seq,
                got: kind.name(),
                want: c.kind.name(),
            });
        }
        c.arrived += count;
        c.values.extend(values);
        if c.arrived >= self.expected {
            return Ok(self.pending.remove(&seq));
        }
        Ok(None)
    }

    fn broken_error(&self, seq: u64, kind: CollKind) -> Option<CollError> {
        match &self.broken {
            Some((from, rank, reason)) if seq >= *from => Some(CollError::RankGone {
                rank: *rank,
                reason: reason.clone(),
                kind: kind.name(),
                seq,
            }),
            _ => None,
        }
    }

    /// Rank `rank` will never join collectives `from_seq` and later: those pending fail.
    pub fn rank_gone(&mut self, rank: u32, from_seq: u64, reason: &str) -> Vec<(u64, CollError)> {
        if !matches!(&self.broken, Some((f, _, _)) if *f <= from_seq) {
            self.broken = Some((from_seq, rank, reason.to_string()));
        }
        let failing: Vec<u64> = self.pending.range(from_seq..).map(|(s, _)| *s).collect();
        failing
            .into_iter()
            .filter_map(|s| {
                let c = self.pending.remove(&s)?;
                Some((
                    s,
                    CollError::RankGone {
                        rank,
                        reason: reason.into(),
                        kind: c.kind.name(),
                        seq: s,
                    },
                ))
            })
            .collect()
    }

    pub fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }
}

/// Builds the rank-ordered array of an allgather from its (rank, value) contributions.
pub fn order_values(size: u32, values: &[(u32, String)]) -> Result<Vec<String>, String> {
    let mut out: Vec<Option<String>> = vec![None; size as usize];
    for (r, v) in values {
        let slot = out
            .get_mut(*r as usize)
            .ok_or_else(|| format!("contribution from rank {r} >= size {size}"))?;
        if slot.replace(v.clone()).is_some() {
            return Err(format!("two contributions from rank {r}"));
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(r, v)| v.ok_or_else(|| format!("no contribution from rank {r}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvs_tracks_unfenced_puts() {
        let mut k = KvsStore::default();
        k.put("a", "1");
        k.learn("b", "2");
        assert_eq!(k.get("a"), Some("1"));
        assert_eq!(k.get("b"), Some("2"));
        assert_eq!(k.take_unfenced(), vec![("a".to_string(), "1".to_string())]);
        assert!(k.take_unfenced().is_empty());
        k.put("a", "3");
        assert_eq!(k.get("a"), Some("3"));
        assert_eq!(k.len(), 2);
    }

    #[test]
    fn name_service() {
        let mut n = NameService::default();
        n.publish("svc", "port1", None).unwrap();
        assert_eq!(
            n.publish("svc", "p2", None),
            Err(NameError::AlreadyPublished("svc".into()))
        );
        assert_eq!(n.lookup("svc"), Ok("port1"));
        n.unpublish("svc").unwrap();
        assert!(n.lookup("svc").is_err());
        assert!(n.unpublish("svc").is_err());
    }

    #[test]
    fn names_of_a_rank_that_is_gone_are_withdrawn() {
        let mut n = NameService::default();
        n.publish("a", "pa", Some((3, 0))).unwrap();
        n.publish("b", "pb", Some((3, 1))).unwrap();
        n.publish("c", "pc", Some((3, 0))).unwrap();
        n.publish("d", "pd", None).unwrap();
        let mut gone = n.withdraw_owned_by(3, 0);
        gone.sort();
        assert_eq!(gone, ["a", "c"]);
        assert!(n.lookup("a").is_err() && n.lookup("c").is_err());
        assert_eq!((n.lookup("b"), n.lookup("d")), (Ok("pb"), Ok("pd")));
        assert!(n.withdraw_owned_by(4, 1).is_empty());
        n.publish("a", "pa2", Some((5, 0))).unwrap();
    }

    #[test]
    fn collective_completes_when_subtree_arrived() {
        let mut t = CollectiveTable::new(3);
        assert!(t
            .arrive(0, CollKind::Allgather, 1, vec![(2, "c".into())])
            .unwrap()
            .is_none());
        assert!(t.arrive(1, CollKind::Fence, 1, vec![]).unwrap().is_none());
        let done = t
            .arrive(
                0,
                CollKind::Allgather,
                2,
                vec![(0, "a".into()), (1, "b".into())],
            )
            .unwrap()
            .unwrap();
        assert_eq!(order_values(3, &done.values).unwrap(), vec!["a", "b", "c"]);
        assert!(!t.is_idle());
        let e = t.arrive(1, CollKind::Allgather, 1, vec![]).unwrap_err();
        assert!(matches!(e, CollError::Mismatch { seq: 1, .. }));
    }

    #[test]
    fn gone_rank_fails_pending_and_later_collectives_only() {
        let mut t = CollectiveTable::new(2);
        t.arrive(4, CollKind::Fence, 1, vec![]).unwrap();
        t.arrive(5, CollKind::Fence, 1, vec![]).unwrap();
        let failed = t.rank_gone(1, 5, "exited");
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].0, 5);
        assert!(failed[0].1.to_string().contains("rank 1 exited"));
        assert!(t.arrive(4, CollKind::Fence, 1, vec![]).unwrap().is_some());
        assert!(matches!(
            t.arrive(6, CollKind::Fence, 1, vec![]),
            Err(CollError::RankGone { rank: 1, .. })
        ));
    }

    #[test]
    fn order_values_checks_ranks() {
        assert!(order_values(2, &[(0, "a".into())]).is_err());
        assert!(order_values(1, &[(0, "a".into()), (0, "b".into())]).is_err());
        assert!(order_values(1, &[(3, "a".into())]).is_err());
    }
}

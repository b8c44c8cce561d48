//! Context ids. Every communicator-creating call is collective over a parent and made in the
//! same order by all its members, so each member derives the same 64-bit id from the parent's
//! id and a per-parent sequence number, with no message. The low bit is reserved: `id` carries
//! point-to-point traffic, `id | 1` the communicator's collective traffic.
//! A communicator built with no parent (Sessions: a process set and a tag) derives its id the
//! same way from a hash of the set's name and the tag.

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The id of the `seq`-th communicator derived from `parent`.
pub fn derive(parent: u64, seq: u64) -> u64 {
    mix(parent ^ mix(seq.wrapping_add(1))) & !1
}

/// The id of a job's world communicator.
pub fn world(job: u32) -> u64 {
    derive(0x1bd7_0000_0000_0001, job as u64)
}

/// The id of a communicator named by strings (process set name and tag).
pub fn from_names(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.as_bytes().iter().chain(std::iter::once(&0u8)) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    mix(h) & !1
}

/// The context of a private channel of the communicator of context `ctx`, named by `key`:
/// each end computes it alone, and its traffic never matches the communicator's own
/// (partitioned communication: a pair of matching init calls).
pub fn channel(ctx: u64, key: &[u64]) -> u64 {
    let mut h = mix(ctx ^ 0x7061_7274_6974_696f);
    for &k in key {
        h = mix(h ^ mix(k));
    }
    h & !1
}

/// The collective context paired with a point-to-point one.
pub fn collective(ctx: u64) -> u64 {
    ctx | 1
}

/// A 128-bit extended context id (seed 001) of a communicator made from groups with no
/// parent: derived from the groups' sorted members, the tag and the per-(members, tag)
/// sequence number, so every member computes it alone and ids of different groups, tags or
/// sequence numbers differ (up to a 2^-128 chance).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExtContextId(pub u128);

/// Feeds bytes to two independent 64-bit lanes.
struct Lanes(u64, u64);

impl Lanes {
    fn new(domain: &str) -> Lanes {
        let mut l = Lanes(0xcbf2_9ce4_8422_2325, 0x84222325_cbf29ce4);
        l.bytes(domain.as_bytes());
        l
    }

    fn bytes(&mut self, b: &[u8]) {
        self.word(b.len() as u64);
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(0x0100_0000_01b3);
            self.1 = mix(self.1 ^ x as u64);
        }
    }

    fn word(&mut self, w: u64) {
        self.0 = mix(self.0 ^ w);
        self.1 = mix(self.1.rotate_left(17) ^ w ^ 0x5851_f42d_4c95_7f2d);
    }

    fn finish(self) -> u128 {
        ((mix(self.0) as u128) << 64) | mix(self.1 ^ 0x2545_f491_4f6c_dd1d) as u128
    }
}

/// The extended id of the `seq`-th communicator made from `sides` (one group for an
/// intracommunicator, two in canonical order for an intercommunicator; each as process ids,
/// sorted) with `tag`.
pub fn extended(sides: &[&[u64]], tag: &str, seq: u64) -> ExtContextId {
    let mut l = Lanes::new("ibdyn-ext-ctx");
    l.word(sides.len() as u64);
    for side in sides {
        l.word(side.len() as u64);
        for &m in *side {
            l.word(m);
        }
    }
    l.bytes(tag.as_bytes());
    l.word(seq);
    ExtContextId(l.finish())
}

impl ExtContextId {
    /// The 64-bit id every member agrees on (even: the low bit selects the collective
    /// context): the communicator's `context_id` and the seed of the ids of communicators
    /// derived from it. Deterministic, so every member maps the same extended id to the
    /// same id; a collision with a live communicator is detected by the caller. Packets
    /// carry the receiver's local id instead (see `local_ids`).
    pub fn wire(self) -> u64 {
        let (hi, lo) = ((self.0 >> 64) as u64, self.0 as u64);
        mix(hi ^ mix(lo ^ 0x0e7c_0000_0000_0001)) & !1
    }

    /// The wire id of the members' agreement exchange for this communicator's tag and
    /// sequence number (not its members, so members that disagree about them still meet).
    pub fn check_wire(tag: &str, seq: u64) -> u64 {
        let mut l = Lanes::new("ibdyn-ext-ctx-check");
        l.bytes(tag.as_bytes());
        l.word(seq);
        ExtContextId(l.finish()).wire()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_even() {
        let mut seen = std::collections::HashSet::new();
        for job in 0..50 {
            let w = world(job);
            assert!(seen.insert(w));
            for seq in 0..50 {
                let c = derive(w, seq);
                assert_eq!(c & 1, 0);
                assert!(seen.insert(c));
            }
        }
        assert_ne!(
            from_names(&["mpi://WORLD", "a"]),
            from_names(&["mpi://WORLD", "b"])
        );
        assert_ne!(from_names(&["ab", "c"]), from_names(&["a", "bc"]));
    }

    #[test]
    fn channels_are_even_and_apart_from_their_communicator_and_each_other() {
        let w = world(1);
        let mut seen: std::collections::HashSet<u64> = [w, derive(w, 0)].into();
        for from in 0..4u64 {
            for to in 0..4u64 {
                for tag in [0u64, 1, 7] {
                    for k in 0..4u64 {
                        let c = channel(w, &[from, to, tag, k]);
                        assert_eq!(c & 1, 0);
                        assert!(seen.insert(c), "{from} {to} {tag} {k}");
                        assert_eq!(c, channel(w, &[from, to, tag, k]));
                    }
                }
            }
        }
        assert_ne!(channel(w, &[0, 1]), channel(derive(w, 0), &[0, 1]));
    }

    #[test]
    fn extended_ids_separate_groups_tags_and_sequences() {
        let all: Vec<u64> = (0..8).collect();
        let even: Vec<u64> = (0..8).step_by(2).collect();
        let odd: Vec<u64> = (1..8).step_by(2).collect();
        let mut seen = std::collections::HashSet::new();
        let mut wires = std::collections::HashSet::new();
        for tag in ["t", "u", "tt", ""] {
            for seq in 0..20 {
                for g in [&all, &even, &odd] {
                    let id = extended(&[g], tag, seq);
                    assert!(seen.insert(id), "{tag} {seq} {g:?}");
                    assert!(wires.insert(id.wire()));
                    assert_eq!(id.wire() & 1, 0);
                }
                // Two sides are not their union, nor the sides swapped.
                let a = extended(&[&even, &odd], tag, seq);
                assert!(seen.insert(a));
                assert!(seen.insert(extended(&[&odd, &even], tag, seq)));
            }
        }
        // Same inputs, same id (every member derives it alone).
        assert_eq!(extended(&[&even], "t", 3), extended(&[&even], "t", 3));
        // Boundaries of the inputs are part of the id.
        assert_ne!(
            extended(&[&[1, 2], &[3]], "", 0),
            extended(&[&[1], &[2, 3]], "", 0)
        );
        assert_ne!(extended(&[&[1]], "ab", 0), extended(&[&[1]], "a", 0));
        // The agreement exchange has its own ids.
        assert_ne!(
            ExtContextId::check_wire("t", 0),
            ExtContextId::check_wire("t", 1)
        );
        assert!(!wires.contains(&ExtContextId::check_wire("t", 0)));
        assert!(!wires.contains(&world(1)));
    }
}

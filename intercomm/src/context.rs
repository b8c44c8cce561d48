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

/// The collective context paired with a point-to-point one.
pub fn collective(ctx: u64) -> u64 {
    ctx | 1
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
}

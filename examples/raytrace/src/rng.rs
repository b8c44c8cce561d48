//! Small deterministic random numbers. Every camera sample gets its own stream seeded from
//! (scene seed, pixel x, pixel y, sample index), so a pixel's value does not depend on which
//! process or thread rendered it, nor in what order.

/// SplitMix64 finaliser: a good 64-bit mixing function.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of a pixel sample's coordinates.
pub fn sample_seed(scene_seed: u64, x: u32, y: u32, sample: u32) -> u64 {
    let a = mix64(scene_seed ^ 0x9e37_79b9_7f4a_7c15);
    let b = mix64(a ^ ((u64::from(x) << 32) | u64::from(y)));
    mix64(b ^ u64::from(sample).wrapping_mul(0xd6e8_feb8_6659_fd93))
}

/// SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(sample_seed(1, 3, 4, 5));
        let mut b = Rng::new(sample_seed(1, 3, 4, 5));
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(sample_seed(1, 3, 4, 5), sample_seed(1, 4, 3, 5));
    }

    #[test]
    fn floats_in_unit_interval() {
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            let v = r.next_f64();
            assert!((0.0..1.0).contains(&v));
        }
    }
}

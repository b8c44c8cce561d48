//! Schedule builders, one algorithm family per file. Every builder works on team ranks
//! (`me` of `p`) and appends rounds to a schedule; none of them does any I/O.

pub(crate) mod binomial;
pub(crate) mod bruck;
pub(crate) mod dissemination;
pub(crate) mod linear;
pub(crate) mod pairwise;
pub(crate) mod rabenseifner;
pub(crate) mod recursive_doubling;
pub(crate) mod ring;
pub(crate) mod scan;

/// Folding a non-power-of-two team onto `pof2` virtual ranks: of the first `2 * rem` ranks,
/// each even one hands its data to the odd one above it and sits out; virtual rank `v` is
/// then real rank `2v + 1` for `v < rem`, else `v + rem`. Virtual ranks keep rank order, and
/// virtual rank `v` stands for the real ranks `first(v) .. first(v + 1)`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Fold {
    pub pof2: usize,
    pub rem: usize,
}

impl Fold {
    pub fn new(p: usize) -> Fold {
        let pof2 = if p == 0 {
            1
        } else {
            1 << (usize::BITS - 1 - p.leading_zeros())
        };
        Fold {
            pof2,
            rem: p - pof2,
        }
    }

    /// The virtual rank of real rank `me`, or None for a rank that sits out.
    pub fn vrank(&self, me: usize) -> Option<usize> {
        if me < 2 * self.rem {
            (me % 2 == 1).then_some(me / 2)
        } else {
            Some(me - self.rem)
        }
    }

    /// The real rank that acts as virtual rank `v`.
    pub fn real(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v + 1
        } else {
            v + self.rem
        }
    }

    /// The first real rank virtual rank `v` stands for (`first(pof2) == p`).
    pub fn first(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v
        } else {
            v + self.rem
        }
    }

    /// Whether `me` takes part in the fold as the lower (sitting-out) or upper partner.
    pub fn folded(&self, me: usize) -> bool {
        me < 2 * self.rem
    }
}

#[cfg(test)]
mod tests {
    use super::Fold;

    #[test]
    fn fold_covers_all_ranks_in_order() {
        for p in 1..40 {
            let f = Fold::new(p);
            assert!(f.pof2.is_power_of_two() && f.pof2 <= p && 2 * f.pof2 > p);
            assert_eq!(f.first(f.pof2), p);
            for v in 0..f.pof2 {
                assert_eq!(f.vrank(f.real(v)), Some(v));
                assert!(
                    f.first(v) < f.first(v + 1)
                        && f.real(v) < f.first(v + 1)
                        && f.real(v) >= f.first(v)
                );
            }
        }
    }
}

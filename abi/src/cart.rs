//! A Cartesian process topology (MPI_Cart_create): the grid's shape and the arithmetic
//! between ranks and coordinates, row-major as the standard numbers them. No communication.

/// Dimensions and periodicity of a Cartesian communicator.
#[derive(Clone, Debug, PartialEq)]
pub struct Cart {
    dims: Vec<i32>,
    periods: Vec<bool>,
}

/// Why a coordinate or a shape was refused.
#[derive(Debug, PartialEq)]
pub enum CartError {
    /// A non-positive extent, or a product that does not fit.
    Dims(String),
    /// A coordinate outside a non-periodic dimension, or a wrong count of them.
    Coords(String),
}

impl Cart {
    /// A grid of `dims` (each at least 1) with `periods` (one per dimension).
    pub fn new(dims: Vec<i32>, periods: Vec<bool>) -> Result<Cart, CartError> {
        if dims.len() != periods.len() {
            return Err(CartError::Dims(format!(
                "{} dims but {} periods",
                dims.len(),
                periods.len()
            )));
        }
        if let Some(d) = dims.iter().find(|&&d| d < 1) {
            return Err(CartError::Dims(format!(
                "dims holds {d}: every extent must be positive"
            )));
        }
        let mut n: i64 = 1;
        for &d in &dims {
            n = n.saturating_mul(i64::from(d));
        }
        if n > i64::from(i32::MAX) {
            return Err(CartError::Dims(format!("the grid has {n} points")));
        }
        Ok(Cart { dims, periods })
    }

    pub fn dims(&self) -> &[i32] {
        &self.dims
    }

    pub fn periods(&self) -> &[bool] {
        &self.periods
    }

    /// Processes in the grid.
    pub fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// The coordinates of `rank` (0 <= rank < size).
    pub fn coords(&self, rank: i32) -> Vec<i32> {
        let mut rest = rank;
        let mut c = vec![0; self.dims.len()];
        for (i, &d) in self.dims.iter().enumerate().rev() {
            c[i] = rest % d;
            rest /= d;
        }
        c
    }

    /// The rank at `coords`; periodic dimensions wrap, others must hold the coordinate.
    pub fn rank(&self, coords: &[i32]) -> Result<i32, CartError> {
        if coords.len() != self.dims.len() {
            return Err(CartError::Coords(format!(
                "{} coordinates for a grid of {} dimensions",
                coords.len(),
                self.dims.len()
            )));
        }
        let mut r = 0;
        for (i, (&c, &d)) in coords.iter().zip(&self.dims).enumerate() {
            let c = if self.periods[i] {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return Err(CartError::Coords(format!(
                    "coordinate {c} of dimension {i} is outside 0..{d} (not periodic)"
                )));
            };
            r = r * d + c;
        }
        Ok(r)
    }

    /// MPI_Cart_shift from `rank`: (source, destination), None past a non-periodic edge.
    pub fn shift(&self, rank: i32, direction: usize, disp: i32) -> (Option<i32>, Option<i32>) {
        let here = self.coords(rank);
        let at = |delta: i32| {
            let mut c = here.clone();
            c[direction] = c[direction].saturating_add(delta);
            self.rank(&c).ok()
        };
        (at(disp.saturating_neg()), at(disp))
    }

    /// MPI_Cart_sub for `rank`: the colour (its position in the dropped dimensions), the key
    /// (its position in the kept ones) and the sub-grid.
    pub fn sub(&self, rank: i32, keep: &[bool]) -> (i32, i32, Cart) {
        let c = self.coords(rank);
        let (mut colour, mut key) = (0, 0);
        let (mut dims, mut periods) = (Vec::new(), Vec::new());
        for (i, &d) in self.dims.iter().enumerate() {
            if keep[i] {
                key = key * d + c[i];
                dims.push(d);
                periods.push(self.periods[i]);
            } else {
                colour = colour * d + c[i];
            }
        }
        (colour, key, Cart { dims, periods })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Cart {
        Cart::new(vec![2, 3], vec![false, true]).unwrap()
    }

    #[test]
    fn ranks_and_coordinates_are_row_major_and_inverse() {
        let g = grid();
        assert_eq!(g.size(), 6);
        assert_eq!(g.coords(4), [1, 1]);
        for r in 0..6 {
            assert_eq!(g.rank(&g.coords(r)).unwrap(), r);
        }
        assert_eq!(g.rank(&[1, -1]).unwrap(), 5, "the periodic dimension wraps");
        assert!(g.rank(&[2, 0]).is_err(), "the other does not");
        assert!(g.rank(&[0]).is_err());
    }

    #[test]
    fn shifts_stop_at_open_edges_and_wrap_around_periodic_ones() {
        let g = grid();
        assert_eq!(g.shift(0, 0, 1), (None, Some(3)));
        assert_eq!(g.shift(3, 0, 1), (Some(0), None));
        assert_eq!(g.shift(0, 1, 1), (Some(2), Some(1)));
        assert_eq!(g.shift(2, 1, -1), (Some(0), Some(1)));
        assert_eq!(g.shift(1, 1, 0), (Some(1), Some(1)));
    }

    #[test]
    fn a_sub_grid_keeps_the_chosen_dimensions() {
        let g = grid();
        let (colour, key, rows) = g.sub(4, &[false, true]);
        assert_eq!((colour, key), (1, 1));
        assert_eq!(rows, Cart::new(vec![3], vec![true]).unwrap());
        let (colour, key, cols) = g.sub(4, &[true, false]);
        assert_eq!((colour, key), (1, 1));
        assert_eq!(cols.dims(), [2]);
        let (_, key, none) = g.sub(5, &[false, false]);
        assert_eq!((key, none.size()), (0, 1));
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(Cart::new(vec![2, 0], vec![false, false]).is_err());
        assert!(Cart::new(vec![2], vec![false, true]).is_err());
        assert!(Cart::new(vec![65536, 65536], vec![false, false]).is_err());
    }
}

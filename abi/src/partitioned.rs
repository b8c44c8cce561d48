//! The send side of a partitioned request (MPI_Psend_init) between MPI_Start and the last
//! MPI_Pready: which partitions the program has marked ready. The message goes as one send
//! of all partitions once every one is ready (the standard lets the data move at any time
//! after a partition is ready); the receive side is one receive of the whole buffer.

use crate::consts::*;
use crate::error::{err, MpiResult};
use std::os::raw::c_int;

/// Where the whole message is and where it goes, as MPI_Psend_init gave them.
#[derive(Clone, Copy)]
pub struct Target {
    pub buf: usize,
    /// Elements of all partitions together.
    pub count: i64,
    pub ty: Handle,
    pub dest: c_int,
    pub tag: c_int,
    pub comm: Handle,
}

pub struct PartSend {
    pub to: Target,
    ready: Vec<bool>,
    left: usize,
}

impl PartSend {
    pub fn new(to: Target, partitions: usize) -> PartSend {
        PartSend {
            to,
            ready: vec![false; partitions],
            left: partitions,
        }
    }

    /// Marks `p` ready; whether every partition is ready now.
    pub fn mark(&mut self, p: c_int) -> MpiResult<bool> {
        let n = self.ready.len();
        let Some(slot) = usize::try_from(p).ok().and_then(|i| self.ready.get_mut(i)) else {
            return err(
                MPI_ERR_ARG,
                format!(
                    "partition {p} is not one of the request's {n} (0 to {})",
                    n - 1
                ),
            );
        };
        if *slot {
            return err(
                MPI_ERR_ARG,
                format!("partition {p} was marked ready already since MPI_Start"),
            );
        }
        *slot = true;
        self.left -= 1;
        Ok(self.left == 0)
    }

    /// Partitions not marked ready yet.
    pub fn left(&self) -> usize {
        self.left
    }

    pub fn partitions(&self) -> usize {
        self.ready.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            buf: 0,
            count: 0,
            ty: 0,
            dest: 0,
            tag: 0,
            comm: 0,
        }
    }

    #[test]
    fn the_last_partition_marked_completes_the_set() {
        let mut p = PartSend::new(target(), 3);
        assert!(!p.mark(2).unwrap());
        assert!(!p.mark(0).unwrap());
        assert_eq!(p.left(), 1);
        assert!(p.mark(1).unwrap());
    }

    #[test]
    fn a_partition_out_of_range_or_marked_twice_is_an_error() {
        let mut p = PartSend::new(target(), 2);
        assert_eq!(p.mark(2).unwrap_err().class, MPI_ERR_ARG);
        assert_eq!(p.mark(-1).unwrap_err().class, MPI_ERR_ARG);
        p.mark(1).unwrap();
        let e = p.mark(1).unwrap_err();
        assert!(e.message.contains("already"), "{}", e.message);
        assert_eq!(p.left(), 1);
    }
}

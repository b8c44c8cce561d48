//! The send side of a partitioned request (MPI_Psend_init) between MPI_Start and the last
//! MPI_Pready: which partitions the program has marked ready. The message goes as one send
//! of all partitions once every one is ready (the standard lets the data move at any time
//! after a partition is ready); the receive side is one receive of the whole buffer.
//!
//! MPI matches partitioned calls by their init calls, in order, and never with other
//! messages: the n-th MPI_Psend_init from rank a to rank b with tag t on a communicator
//! matches the n-th MPI_Precv_init at b from a with t. Each such pair talks on a private
//! channel of the communicator (`channel`) that both ends name alone from (a, b, t, n).

use crate::consts::*;
use crate::error::{err, MpiResult};
use ibdyn_intercomm::Communicator;
use std::cell::RefCell;
use std::collections::HashMap;
use std::os::raw::c_int;

/// Where the whole message is and where it goes, as MPI_Psend_init gave them.
#[derive(Clone)]
pub struct Target {
    pub buf: usize,
    /// Elements of all partitions together.
    pub count: i64,
    pub ty: Handle,
    pub dest: c_int,
    pub tag: c_int,
    /// The private channel of this pair of init calls.
    pub channel: Communicator,
}

/// A partitioned send's progress towards leaving: `to` is what it needs then.
pub struct PartSend<T> {
    pub to: T,
    ready: Vec<bool>,
    left: usize,
}

ibdyn_owner::process_local! {
    /// Partitioned init calls of this process so far per (context id, send side, peer, tag).
    static INITS: RefCell<HashMap<(u64, bool, c_int, c_int), u64>> = RefCell::new(HashMap::new());
}

/// The private channel of this process's next partitioned init call on `comm` from rank
/// `from` to rank `to` with `tag` (`send`: MPI_Psend_init, this process is `from`).
pub fn channel(
    comm: &Communicator,
    send: bool,
    from: c_int,
    to: c_int,
    tag: c_int,
) -> MpiResult<Communicator> {
    let peer = if send { to } else { from };
    let n = INITS.with(|m| {
        let mut m = m.borrow_mut();
        let n = m.entry((comm.context_id(), send, peer, tag)).or_insert(0);
        *n += 1;
        *n - 1
    });
    let key = [from as u64, to as u64, tag as u64, n];
    Ok(comm.channel(&key)?)
}

impl<T> PartSend<T> {
    pub fn new(to: T, partitions: usize) -> PartSend<T> {
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

    #[test]
    fn the_last_partition_marked_completes_the_set() {
        let mut p = PartSend::new((), 3);
        assert!(!p.mark(2).unwrap());
        assert!(!p.mark(0).unwrap());
        assert_eq!(p.left(), 1);
        assert!(p.mark(1).unwrap());
    }

    #[test]
    fn a_partition_out_of_range_or_marked_twice_is_an_error() {
        let mut p = PartSend::new((), 2);
        assert_eq!(p.mark(2).unwrap_err().class, MPI_ERR_ARG);
        assert_eq!(p.mark(-1).unwrap_err().class, MPI_ERR_ARG);
        p.mark(1).unwrap();
        let e = p.mark(1).unwrap_err();
        assert!(e.message.contains("already"), "{}", e.message);
        assert_eq!(p.left(), 1);
    }
}

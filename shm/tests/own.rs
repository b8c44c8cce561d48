//! A process removes exactly the objects it created at its end, without reading /dev/shm: a
//! process-wide list, so this file holds one test (others running beside it would lose theirs).

mod common;

use std::time::Duration;

use common::{fork_child, my_pid, reap, shm_exists};
use ibdyn_shm::{remove_own_segments, CollBuf, RecvQueue, ShmConfig};

/// Files made by hand for the test, removed however it ends.
struct HandMade(Vec<String>);

impl Drop for HandMade {
    fn drop(&mut self) {
        for n in &self.0 {
            let _ = std::fs::remove_file(format!("/dev/shm/{n}"));
        }
    }
}

#[test]
fn a_process_removes_what_it_created_and_nothing_else() {
    let queue = RecvQueue::create_with_suffix("own", &ShmConfig::DEFAULT).unwrap();
    let coll = CollBuf::create(1, 4096, 0x0e1d, 7).unwrap();
    let mine = [queue.name().to_string(), coll.name().to_string()];
    // Same prefix, not made through the crate: only a read of the directory would find it.
    let by_hand = format!("ibdyn-{}-by-hand", my_pid());
    let foreign = "ibdyn-2000000001-own";
    let _files = HandMade(vec![by_hand.clone(), foreign.to_string()]);
    for n in [by_hand.as_str(), foreign] {
        std::fs::write(format!("/dev/shm/{n}"), b"x").unwrap();
    }

    // A forked child inherits the list, not the objects: it must remove nothing.
    let child = fork_child(|| remove_own_segments() as i32);
    assert_eq!(reap(child, Duration::from_secs(60)), Some(0));
    assert!(
        mine.iter().all(|n| shm_exists(n)),
        "the child removed its parent's objects"
    );

    assert_eq!(remove_own_segments(), 2);
    let gone = mine.iter().all(|n| !shm_exists(n));
    let left = [shm_exists(&by_hand), shm_exists(foreign)];
    assert!(gone, "{mine:?} still in /dev/shm");
    assert_eq!(
        left,
        [true, true],
        "removed an object this process did not create"
    );
    assert_eq!(remove_own_segments(), 0, "the list was not emptied");

    // Dropping the removed objects does not remove their names again (each removal takes
    // the directory's lock, which thousands of ending processes contend for): a file put at
    // those names since is left alone.
    let _later = HandMade(mine.to_vec());
    for n in &mine {
        std::fs::write(format!("/dev/shm/{n}"), b"x").unwrap();
    }
    drop((queue, coll));
    assert!(
        mine.iter().all(|n| shm_exists(n)),
        "a dropped object removed its name a second time"
    );
    drop(_later);

    // The names are free again.
    let again = RecvQueue::create_with_suffix("own", &ShmConfig::DEFAULT).unwrap();
    drop(again);
    assert_eq!(remove_own_segments(), 0);
}

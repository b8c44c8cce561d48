//! Ownership across real threads. One test: the state is the process's, so the steps run in
//! order.

use ibdyn_owner::{
    borrowed, claim, enter, enter_within, holds, others_waiting, pause, process_local,
    release_claim, turns_allowed, unborrowed, Foreign,
};
use std::cell::RefCell;
use std::sync::mpsc::channel;
use std::thread;
use std::time::Duration;

process_local! {
    static COUNT: RefCell<u64> = RefCell::new(0);
}

fn foreign(r: Result<(), Foreign>) -> bool {
    r.is_err()
}

#[test]
fn the_state_has_one_owner_at_a_time_and_entries_hand_it_over() {
    // Nothing is reachable without a claim or an entry; a thread that claims the state and
    // ends gives it up.
    assert!(foreign(COUNT.try_with(|_| ())));
    thread::spawn(|| {
        assert!(claim());
        COUNT.with(|c| *c.borrow_mut() += 10)
    })
    .join()
    .unwrap();
    assert!(enter_within(Duration::from_secs(5)).is_some());

    // A claim holds past entries: another thread is refused, and can not enter or claim.
    assert!(claim());
    {
        let _nested = enter();
    }
    COUNT.with(|c| *c.borrow_mut() -= 9);
    thread::spawn(|| {
        assert!(!claim() && !holds());
        assert!(foreign(COUNT.try_with(|_| ())));
        assert!(enter_within(Duration::from_millis(30)).is_none());
        let hit = std::panic::catch_unwind(|| COUNT.with(|_| ())).expect_err("refused");
        let text = hit.downcast_ref::<String>().expect("a message");
        assert!(text.starts_with(Foreign::MESSAGE), "{text}");
    })
    .join()
    .unwrap();

    // Given up: only entries own it, and a thread outside one does not claim it.
    release_claim();
    assert!(foreign(COUNT.try_with(|_| ())));
    let (entered_tx, entered) = channel();
    let (checked_tx, checked) = channel();
    let t = thread::spawn(move || {
        assert!(foreign(COUNT.try_with(|_| ())));
        let _e = enter();
        // The first thread's write is seen here.
        assert_eq!(COUNT.with(|c| *c.borrow()), 1);
        entered_tx.send(()).unwrap();
        checked.recv().unwrap();
        COUNT.with(|c| *c.borrow_mut() += 1);
    });
    entered.recv().unwrap();
    assert!(foreign(COUNT.try_with(|_| ())));
    assert!(enter_within(Duration::from_millis(30)).is_none());
    checked_tx.send(()).unwrap();
    t.join().unwrap();

    // Re-entrant on one thread; released when the outer entry ends.
    {
        let _outer = enter();
        let _inner = enter();
        assert_eq!(COUNT.with(|c| *c.borrow()), 2);
    }
    assert!(foreign(COUNT.try_with(|_| ())));

    // A pause lends the state to a thread waiting for it and takes it back afterwards.
    {
        let _e = enter();
        assert!(!pause(), "nobody waits");
        let (ran_tx, ran) = channel();
        let t = thread::spawn(move || {
            let _e = enter();
            COUNT.with(|c| *c.borrow_mut() += 1);
            ran_tx.send(()).unwrap();
        });
        while !others_waiting() {
            thread::yield_now();
        }
        assert!(pause());
        assert!(holds());
        ran.recv().unwrap();
        t.join().unwrap();
        assert_eq!(COUNT.with(|c| *c.borrow()), 3);
    }

    // Turns: a nested entry (a library calling itself) may pause only where every entry
    // below it borrows nothing (`unborrowed`); nothing pauses inside a `borrowed` region.
    {
        let _outer = enter();
        assert!(!turns_allowed());
        let waiter = || {
            let t = thread::spawn(|| {
                let _e = enter();
                COUNT.with(|c| *c.borrow_mut() += 1);
            });
            while !others_waiting() {
                thread::yield_now();
            }
            t
        };
        let t = waiter();
        {
            let _nested = enter();
            assert!(!pause(), "the outer entry did not say it borrows nothing");
        }
        unborrowed(|| {
            assert!(turns_allowed());
            borrowed(|| {
                assert!(!turns_allowed());
                assert!(!pause(), "inside a borrow");
            });
            let _nested = enter();
            assert!(!turns_allowed(), "the nested entry has not said so itself");
            unborrowed(|| {
                assert!(turns_allowed());
                assert!(pause());
            });
        });
        t.join().unwrap();
        assert_eq!(COUNT.with(|c| *c.borrow()), 4);
        assert!(!turns_allowed(), "the regions end with their calls");
    }

    // Threads taking turns through entries never overlap: a RefCell borrowed twice at once
    // would panic, and every increment is kept.
    let workers: Vec<_> = (0..4)
        .map(|_| {
            thread::spawn(|| {
                for _ in 0..5000 {
                    let _e = enter();
                    COUNT.with(|c| {
                        let mut c = c.borrow_mut();
                        let v = *c;
                        thread::yield_now();
                        *c = v + 1;
                    });
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let _e = enter();
    assert_eq!(COUNT.with(|c| *c.borrow()), 4 + 4 * 5000);
}

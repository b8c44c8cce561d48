//! The sessions of this process that are live (initialised and not finalized), by init
//! epoch, so that a group remembers its session and calls can refuse a group of a finalized
//! session or groups of two sessions.

use crate::{CommError, Group, Result};
use std::cell::RefCell;
use std::collections::BTreeSet;

ibdyn_owner::process_local! {
    static LIVE: RefCell<BTreeSet<u64>> = RefCell::new(BTreeSet::new());
}

/// The session of epoch `epoch` has started.
pub(crate) fn started(epoch: u64) {
    LIVE.with(|l| l.borrow_mut().insert(epoch));
}

/// The session of epoch `epoch` has been finalized.
pub(crate) fn ended(epoch: u64) {
    // try_with: a session dropped where the state is out of reach changes nothing.
    let _ = LIVE.try_with(|l| l.borrow_mut().remove(&epoch));
}

fn live_list() -> String {
    LIVE.with(|l| {
        let l = l.borrow();
        if l.is_empty() {
            "none".to_string()
        } else {
            l.iter()
                .map(|e| format!("epoch {e}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    })
}

/// Refuses a group whose session has been finalized.
pub(crate) fn check_group(g: &Group) -> Result<()> {
    match g.session() {
        Some(epoch) if !LIVE.with(|l| l.borrow().contains(&epoch)) => {
            Err(CommError::StaleSession {
                epoch,
                live: live_list(),
            })
        }
        _ => Ok(()),
    }
}

/// Refuses groups of two different sessions in one call (each must also be live).
pub(crate) fn check_pair(a: &Group, b: &Group) -> Result<()> {
    if let (Some(first), Some(second)) = (a.session(), b.session()) {
        if first != second {
            return Err(CommError::MixedSessions { first, second });
        }
    }
    check_group(a)?;
    check_group(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gpid;

    fn g(epoch: Option<u64>) -> Group {
        let g = Group::new(vec![Gpid { job: 1, rank: 0 }]);
        match epoch {
            Some(e) => g.of_session(e),
            None => g,
        }
    }

    #[test]
    fn groups_of_finalized_or_mixed_sessions_are_refused() {
        let _owner = ibdyn_owner::enter();
        started(101);
        started(102);
        assert!(check_group(&g(Some(101))).is_ok());
        assert!(check_group(&g(None)).is_ok());
        assert!(check_pair(&g(Some(101)), &g(Some(101))).is_ok());
        assert!(check_pair(&g(Some(101)), &g(None)).is_ok());
        let e = check_pair(&g(Some(101)), &g(Some(102))).unwrap_err();
        assert!(
            matches!(
                e,
                CommError::MixedSessions {
                    first: 101,
                    second: 102
                }
            ),
            "{e}"
        );
        ended(101);
        let e = check_group(&g(Some(101))).unwrap_err().to_string();
        assert!(
            e.contains("epoch 101") && e.contains("live sessions: epoch 102"),
            "{e}"
        );
        ended(102);
        let e = check_pair(&g(Some(102)), &g(None)).unwrap_err().to_string();
        assert!(e.contains("live sessions: none"), "{e}");
    }
}

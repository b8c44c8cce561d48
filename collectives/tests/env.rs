//! `IBDYN_COLL_ALGO` is read when collectives are set up (own test binary: it sets the
//! environment of its process).

mod common;

use common::MockComm;
use ibdyn_collectives::{AlgoConfig, Algorithm, CollError, CollOp, Collectives};
use std::time::Duration;

#[test]
fn algorithm_setting_from_the_environment() {
    std::env::set_var("IBDYN_COLL_ALGO", "allreduce:ring, alltoall:bruck");
    let cfg = AlgoConfig::from_env().unwrap();
    assert_eq!(cfg.forced(CollOp::Allreduce), Some(Algorithm::Ring));
    assert_eq!(cfg.forced(CollOp::Alltoall), Some(Algorithm::Bruck));
    let comm = MockComm::from(MockComm::world(1, Duration::from_secs(1)).pop().unwrap());
    let c = Collectives::new(comm).unwrap();
    assert_eq!(c.config().forced(CollOp::Allreduce), Some(Algorithm::Ring));

    std::env::set_var("IBDYN_COLL_ALGO", "allreduce:bruck");
    let comm = MockComm::from(MockComm::world(1, Duration::from_secs(1)).pop().unwrap());
    let e = Collectives::new(comm).err().expect("bad setting refused");
    assert!(matches!(e, CollError::BadSetting { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains("allreduce:bruck")
            && msg.contains("recursive_doubling, ring, rabenseifner, binomial"),
        "{msg}"
    );
    std::env::remove_var("IBDYN_COLL_ALGO");
}

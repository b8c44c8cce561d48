//! What the one-parent, one-child test programs share: the parent spawns a copy of itself.

use ibdyn::traits::*;
use ibdyn::InterCommunicator;
use std::process::Command;

/// Spawns one copy of this program from rank 0 of the world; `fail` ends the program on error.
#[allow(dead_code)]
pub fn spawn_self(universe: &ibdyn::Universe, fail: fn(&str) -> !) -> InterCommunicator {
    spawn_self_with(universe, &[], fail)
}

/// [`spawn_self`] with arguments for the copy.
pub fn spawn_self_with(
    universe: &ibdyn::Universe,
    args: &[String],
    fail: fn(&str) -> !,
) -> InterCommunicator {
    let me = std::env::current_exe().unwrap_or_else(|e| fail(&format!("own program: {e}")));
    let mut cmd = Command::new(me);
    cmd.args(args);
    universe
        .world()
        .process_at_rank(0)
        .spawn(&cmd, 1)
        .unwrap_or_else(|e| fail(&format!("spawn: {e}")))
}

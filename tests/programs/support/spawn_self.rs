//! What the one-parent, one-child test programs share: the parent spawns a copy of itself.

use ibdyn::traits::*;
use ibdyn::InterCommunicator;
use std::process::Command;

/// Spawns one copy of this program from rank 0 of the world; `fail` ends the program on error.
pub fn spawn_self(universe: &ibdyn::Universe, fail: fn(&str) -> !) -> InterCommunicator {
    let me = std::env::current_exe().unwrap_or_else(|e| fail(&format!("own program: {e}")));
    universe
        .world()
        .process_at_rank(0)
        .spawn(&Command::new(me), 1)
        .unwrap_or_else(|e| fail(&format!("spawn: {e}")))
}

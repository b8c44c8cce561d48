//! A /dev/shm too small for the job (a container's default 64 MiB with many ranks): each node
//! daemon warns before it starts ranks whose queues could outgrow it, a rank that dies of
//! SIGBUS there is explained, and collectives run without the node buffer that does not fit
//! (smaller queues, `IBDYN_SHM_CELLS`, then make the job run). The
//! small /dev/shm is a tmpfs mounted in a private mount namespace (`unshare -m`, root), so
//! the machine's own /dev/shm is not touched; where that cannot be made the test skips loudly.

mod common;

use common::netns::skip;
use common::*;
use std::process::{Command, Output};

/// `ibdyn ARGS` with a /dev/shm of `size` (tmpfs `size=` syntax) of its own, or why not.
fn with_dev_shm(
    s: &Scratch,
    size: &str,
    env: &[(&str, &str)],
    args: &[&str],
) -> Result<Output, String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err("mounting a private /dev/shm needs root".into());
    }
    let script =
        format!("mount -t tmpfs -o size={size} tmpfs /dev/shm || exit 99; exec \"$0\" \"$@\"");
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "sh", "-c", &script])
        .arg(ibdyn_bin())
        .args(args)
        .env("TMPDIR", &s.dir)
        .env_remove("IBDYN_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_bounded(cmd, None, std::time::Duration::from_secs(90));
    if out.status.code() == Some(99) || text(&out.stderr).contains("unshare failed") {
        return Err(format!(
            "no private mount namespace here: {}",
            text(&out.stderr)
        ));
    }
    Ok(out)
}

#[test]
fn a_dev_shm_too_small_is_said_ahead_and_a_sigbus_explained() {
    let name = "a_dev_shm_too_small_is_said_ahead_and_a_sigbus_explained";
    let s = Scratch::new("devshm");
    let coll = example_bin("coll_check");
    let coll = coll.to_str().unwrap();
    let out = match with_dev_shm(&s, "1m", &[], &["run", "-n", "8", coll]) {
        Ok(o) => o,
        Err(why) => return skip(name, &why),
    };
    let err = text(&out.stderr);
    assert!(
        err.contains("receive queues of 8 rank(s) here") && err.contains("IBDYN_SHM_CELLS"),
        "{err}"
    );
    // It ends (no hang), and a death by SIGBUS says why.
    if out.status.code() == Some(135) {
        assert!(
            err.contains("SIGBUS in an MPI process is most often a full /dev/shm"),
            "{err}"
        );
    } else {
        assert!(out.status.success(), "{err}");
    }
    s.assert_clean();
}

/// Queues that fit (`IBDYN_SHM_CELLS=4`) but no room for the node collective buffer (8 ranks
/// need 1.1 MiB, more than the whole 1 MiB): the collectives run without it. The leader that
/// could not make the buffer used to wait for answers its members never sent.
#[test]
fn collectives_run_without_a_node_buffer_that_does_not_fit() {
    let s = Scratch::new("devshm-coll");
    let coll = example_bin("coll_check");
    let coll = coll.to_str().unwrap();
    let env = [("IBDYN_SHM_CELLS", "4")];
    let out = match with_dev_shm(&s, "1m", &env, &["run", "-n", "8", coll]) {
        Ok(o) => o,
        Err(why) => {
            return skip(
                "collectives_run_without_a_node_buffer_that_does_not_fit",
                &why,
            )
        }
    };
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("receive queues of"), "{err}");
    assert!(text(&out.stdout).contains("coll_check: all passed on 8 ranks"));
    s.assert_clean();
}

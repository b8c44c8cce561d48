//! Failed verbs as [`VerbsError::VerbErrno`]: the errno stays the error's source, and the message
//! says what to check (pure, tested without a device).

use crate::error::{Result, VerbFailure, VerbsError};

/// A verb that returned NULL and set `errno`.
pub(crate) fn verb_err(verb: &'static str) -> VerbsError {
    failed(verb, last_errno())
}

/// A verb that returned an int: 0 is success, a positive value is the errno, -1 sets `errno`.
pub(crate) fn verb_rc(verb: &'static str, rc: i32) -> Result<()> {
    match rc {
        0 => Ok(()),
        rc if rc > 0 => Err(failed(verb, rc)),
        _ => Err(failed(verb, last_errno())),
    }
}

pub(crate) fn failed(verb: &'static str, errno: i32) -> VerbsError {
    VerbsError::VerbErrno(VerbFailure::new(verb, errno, fix(verb, errno)))
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// What the user can do about `verb` failing with `errno`.
fn fix(verb: &str, errno: i32) -> &'static str {
    match errno {
        libc::EACCES | libc::EPERM => {
            return "no permission on /dev/infiniband/uverbs*: run as a user of the group that \
                    owns it (often `rdma`) or fix the udev rules";
        }
        libc::ENOMEM if !verb.starts_with("ibv_post") => {
            return "pinned memory ran out: raise the locked-memory limit (`ulimit -l unlimited`, \
                    or memlock in /etc/security/limits.conf, or LimitMEMLOCK for a systemd unit)";
        }
        _ => {}
    }
    match verb {
        "ibv_get_device_list" => {
            "check that the RDMA kernel modules (ib_uverbs and the HCA's driver) are loaded and \
             that rdma-core's provider libraries are installed (`ibv_devices` lists the devices)"
        }
        "ibv_query_device" | "ibv_query_port" | "ibv_query_gid" | "ibv_open_device" => {
            "the device may have been reset or removed: `ibv_devinfo` shows its state; \
             IBDYN_IB_DEVICE and IBDYN_IB_PORT choose another one"
        }
        "ibv_reg_mr" | "ibv_reg_mr(slab)" => {
            "the buffer must be mapped, writable memory of this process; `ulimit -l` bounds how \
             much can be registered"
        }
        "ibv_modify_qp(RTR)" | "ibv_modify_qp(RTS)" => {
            "the peer's address card does not fit this port (LID and subnet on InfiniBand, GID \
             index and IP route on RoCE): check both ends with `ibv_devinfo -v`, or choose the \
             port with IBDYN_IB_DEVICE and IBDYN_IB_PORT"
        }
        "ibv_modify_qp(INIT)" | "ibv_modify_qp(UD)" => {
            "the port must be ACTIVE (`ibv_devinfo`); IBDYN_IB_PORT chooses another port"
        }
        v if v.starts_with("ibv_post") => {
            "the queue pair has left the ready state (peer gone or transport error) or its queue \
             is full: the endpoint must be recreated"
        }
        _ => {
            "the device may be out of resources (`ibv_devinfo -v` shows its limits): fewer \
             processes per node, or ending stale ones, frees them"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    fn errno_of(e: &VerbsError) -> Option<i32> {
        e.source()?.downcast_ref::<std::io::Error>()?.raw_os_error()
    }

    #[test]
    fn positive_return_codes_are_the_errno() {
        assert_eq!(verb_rc("ibv_modify_qp(RTR)", 0), Ok(()));
        let e = verb_rc("ibv_modify_qp(RTR)", libc::EINVAL).unwrap_err();
        assert_eq!(errno_of(&e), Some(libc::EINVAL));
        let msg = e.to_string();
        assert!(msg.starts_with("ibv_modify_qp(RTR) failed: "), "{msg}");
        assert!(msg.contains("IBDYN_IB_PORT"), "{msg}");
    }

    #[test]
    fn minus_one_reads_errno() {
        // SAFETY: __errno_location returns this thread's errno slot.
        unsafe { *libc::__errno_location() = libc::EBUSY };
        let e = verb_rc("ibv_destroy_qp", -1).unwrap_err();
        assert_eq!(errno_of(&e), Some(libc::EBUSY));
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = libc::EAGAIN };
        assert_eq!(errno_of(&verb_err("ibv_create_cq")), Some(libc::EAGAIN));
    }

    #[test]
    fn the_fix_names_the_likely_cause() {
        let memlock = failed("ibv_reg_mr", libc::ENOMEM).to_string();
        assert!(memlock.contains("ulimit -l"), "{memlock}");
        let perm = failed("ibv_alloc_pd", libc::EACCES).to_string();
        assert!(perm.contains("/dev/infiniband"), "{perm}");
        // A full send queue is not a memory limit.
        let post = failed("ibv_post_send", libc::ENOMEM).to_string();
        assert!(post.contains("recreated"), "{post}");
        let list = failed("ibv_get_device_list", libc::EIO).to_string();
        assert!(list.contains("ib_uverbs"), "{list}");
    }
}

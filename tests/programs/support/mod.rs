//! What the conformance-check examples share: a check result and its two helpers.

pub type R = Result<(), String>;

/// Names the operation in an error coming back from ibdyn.
pub fn e(what: &str) -> impl Fn(ibdyn::CommError) -> String + '_ {
    move |err| format!("{what}: {err}")
}

/// An error naming the operation and size when `ok` is false.
pub fn check(ok: bool, what: &str, n: usize) -> R {
    if ok {
        Ok(())
    } else {
        Err(format!("{what} with {n} elements gave a wrong result"))
    }
}

//! Reading the launcher's stdin for rank 0 without being stopped for it. A launcher started in
//! the background of an interactive shell (`ibdyn run ... &`) that reads its terminal gets
//! SIGTTIN and stops ("Stopped (tty input)"), job and all, though rank 0 may never read. As
//! Open MPI's mpirun does, a terminal is read only while the launcher is in its foreground
//! process group; in the background the reader looks again every 100 ms (until `fg`).

use std::io::Read;
use std::time::Duration;

const LOOK_AGAIN: Duration = Duration::from_millis(100);

/// Whether fd 0 is a terminal whose foreground process group is not ours.
fn in_the_background() -> bool {
    // SAFETY: isatty, tcgetpgrp and getpgrp only query the descriptor and this process.
    unsafe {
        if libc::isatty(0) != 1 {
            return false;
        }
        let fg = libc::tcgetpgrp(0);
        fg > 0 && fg != libc::getpgrp()
    }
}

/// `read` of stdin into `buf`, waiting while the launcher is in its terminal's background;
/// an interrupted read is tried again, and so is EIO in the background (SIGTTIN ignored).
pub(crate) fn read(stdin: &mut std::io::Stdin, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        if in_the_background() {
            std::thread::sleep(LOOK_AGAIN);
            continue;
        }
        match stdin.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.raw_os_error() == Some(libc::EIO) && in_the_background() => {}
            other => return other,
        }
    }
}

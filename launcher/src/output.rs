//! The ranks' output as `ibdyn run` (or its DVM client) writes it on its own stdout/stderr.

use std::io::Write;

/// The tag `--tag-output` puts before each line of rank `rank` of `job` (the submitted job's
/// ranks by their rank alone).
pub(crate) fn tag(job: u32, rank: u32, submitted: Option<u32>) -> String {
    if Some(job) == submitted {
        format!("[{rank}] ")
    } else {
        format!("[{job}.{rank}] ")
    }
}

/// Writes what a rank wrote on `fd` (1 or 2), each line after `prefix` if given. An error
/// that says the reader of stdout or stderr has gone (`BrokenPipe`) is for the caller: the
/// job's output has nowhere to go, as for the first command of a shell pipeline whose reader
/// left.
pub(crate) fn write_out(fd: u32, prefix: Option<&str>, data: &[u8]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(data.len() + 16);
    match prefix {
        Some(p) => {
            for line in data.split_inclusive(|&b| b == b'\n') {
                buf.extend_from_slice(p.as_bytes());
                buf.extend_from_slice(line);
                if !line.ends_with(b"\n") {
                    buf.push(b'\n');
                }
            }
        }
        None => buf.extend_from_slice(data),
    }
    if fd == 2 {
        let mut e = std::io::stderr().lock();
        return e.write_all(&buf).and_then(|_| e.flush());
    }
    let mut o = std::io::stdout().lock();
    o.write_all(&buf).and_then(|_| o.flush())
}

/// Whether a failed write of the ranks' output means its reader has gone (`prog | head`).
pub(crate) fn reader_gone(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// The exit status of a job ended because its output's reader went: as a shell reports a
/// command killed by SIGPIPE.
pub(crate) const READER_GONE_STATUS: i32 = 128 + libc::SIGPIPE;

/// Output that could not be written for another reason (a full disk): said once, when it
/// first happens, and a job that otherwise succeeded then ends with status 1, as a shell
/// command whose output failed does.
#[derive(Default)]
pub(crate) struct LostOutput(bool);

impl LostOutput {
    pub(crate) fn record(&mut self, e: &std::io::Error) {
        if !self.0 {
            self.0 = true;
            say!("ibdyn run: cannot write the job's output ({e}): what follows of it is lost");
        }
    }

    /// The exit status for a job whose own status is `status`.
    pub(crate) fn status(&self, status: i32) -> i32 {
        if status == 0 && self.0 {
            1
        } else {
            status
        }
    }
}

//! Starting one rank: `clone(CLONE_VM | CLONE_VFORK)` and `execve`, as `posix_spawn` does,
//! plus what `posix_spawn` cannot do: the rank gets SIGKILL when its daemon dies
//! (`PR_SET_PDEATHSIG`). A plain `fork` would copy the daemon's page tables and then fault on
//! every page either side writes until the exec; on the spawn path that cost is most of the
//! daemon's share.
//!
//! The daemon is suspended only until the child has either replaced its memory (the exec
//! passed the point of no return) or exited. A failing child leaves its errno in the shared
//! plan before it exits, so the outcome is known as soon as `clone` returns: the daemon goes
//! on to the next rank while the kernel finishes loading this one.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

/// What to start.
pub(crate) struct Launch<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// The whole environment of the new process.
    pub env: &'a [(OsString, OsString)],
    pub cwd: Option<&'a Path>,
    /// Give the process a pipe as stdin (else /dev/null).
    pub stdin_pipe: bool,
    /// A descriptor (3 or above) the process keeps open across the exec, under its number.
    pub inherit: Option<RawFd>,
    /// Bind the process to these CPUs (`--bind-to`); None: the daemon's own affinity.
    pub cpus: Option<&'a [usize]>,
}

/// A started process and the parent's ends of its pipes.
pub(crate) struct Started {
    pub pid: i32,
    pub stdin: Option<OwnedFd>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Everything the child touches between clone and exec, prepared by the parent (the child
/// shares the parent's memory and must not allocate).
struct ChildPlan {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    stdin: RawFd,
    stdout: RawFd,
    stderr: RawFd,
    daemon: libc::pid_t,
    /// Kept across the exec (-1: none).
    inherit: RawFd,
    /// Cloned sharing the daemon's descriptor table: take a private copy of the descriptors
    /// below this number first (`kept_fds`; 0: cloned with a copy of the whole table).
    unshare_below: RawFd,
    /// The errno of the step that failed, written by the child before it exits (0: none).
    err: AtomicI32,
    /// Signals to return to their default disposition (`changed_signals`).
    reset: &'static [libc::c_int],
    /// The CPUs to bind to (null: none).
    cpus: *const libc::cpu_set_t,
}

const CHILD_STACK: usize = 64 * 1024;

/// The signals whose disposition in this process is not the default. An ignored signal
/// survives an exec (Rust's runtime ignores SIGPIPE; a background job of a script starts with
/// SIGINT and SIGQUIT ignored, and `ibdyn run` forwards Ctrl-C as SIGINT), and a handler must
/// not run in the child on the daemon's memory; the exec resets the rest. The daemon sets no
/// disposition once running (signals are taken with sigwait), so the table is read once:
/// the child then makes 2 or 3 calls instead of 64 before its exec, while the daemon waits.
fn changed_signals() -> &'static [libc::c_int] {
    static CHANGED: std::sync::OnceLock<Vec<libc::c_int>> = std::sync::OnceLock::new();
    CHANGED.get_or_init(|| {
        (1..65)
            .filter(|&sig| {
                // SAFETY: a query only (no new action) into a zeroed plain C struct.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                        && old.sa_sigaction != libc::SIG_DFL
                }
            })
            .collect()
    })
}

fn cstring(bytes: &[u8], what: &str) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{what} contains a NUL byte"),
        )
    })
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
}

/// A pidfd of process `pid`: it becomes readable when the process ends, and signals sent
/// through it never reach another process that got the pid since.
pub(crate) fn pidfd_open(pid: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
    let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as RawFd) };
    Ok(super::kept_fds::keep_high(fd))
}

/// `program` as execvp would find it: as given when it names a path, else the first
/// executable file of that name in `PATH` (of the new environment).
pub(crate) fn resolve(program: &str, env: &[(OsString, OsString)]) -> std::io::Result<PathBuf> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    let mut denied = false;
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if let Ok(meta) = std::fs::metadata(&candidate) {
            use std::os::unix::fs::PermissionsExt;
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
                return Ok(candidate);
            }
            denied = true;
        }
    }
    Err(std::io::Error::from_raw_os_error(if denied {
        libc::EACCES
    } else {
        libc::ENOENT
    }))
}

/// Starts `l` in its own process group; returns once it has been exec'd, or the reason it
/// could not be (the errno of the failed step).
pub(crate) fn start(l: &Launch) -> std::io::Result<Started> {
    let path = cstring(resolve(l.program, l.env)?.as_os_str().as_bytes(), "program")?;
    let argv_c: Vec<CString> = std::iter::once(l.program)
        .chain(l.args.iter().map(String::as_str))
        .map(|a| cstring(a.as_bytes(), "argument"))
        .collect::<std::io::Result<_>>()?;
    let envp_c: Vec<CString> = l
        .env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstring(&kv, "environment")
        })
        .collect::<std::io::Result<_>>()?;
    let argv: Vec<*const libc::c_char> = argv_c
        .iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const libc::c_char> = envp_c
        .iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let cwd = l
        .cwd
        .map(|d| cstring(d.as_os_str().as_bytes(), "working directory"))
        .transpose()?;
    let cpus = l.cpus.map(super::binding::cpu_set);

    let (in_r, in_w) = if l.stdin_pipe {
        let (r, w) = pipe()?;
        (r, Some(w))
    } else {
        (OwnedFd::from(std::fs::File::open("/dev/null")?), None)
    };
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let child_fds = [in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()];
    let short_copy = super::kept_fds::short_copy()
        && child_fds
            .into_iter()
            .chain(l.inherit)
            .all(|fd| fd < super::kept_fds::KEPT_FROM);
    let plan = ChildPlan {
        path: path.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: cwd.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        stdin: in_r.as_raw_fd(),
        stdout: out_w.as_raw_fd(),
        stderr: err_w.as_raw_fd(),
        daemon: std::process::id() as libc::pid_t,
        inherit: l.inherit.unwrap_or(-1),
        unshare_below: if short_copy {
            super::kept_fds::KEPT_FROM
        } else {
            0
        },
        err: AtomicI32::new(0),
        reset: changed_signals(),
        cpus: cpus
            .as_ref()
            .map_or(std::ptr::null(), |c| c as *const libc::cpu_set_t),
    };
    // A stack needs no zeroing: capacity only.
    let mut stack: Vec<u8> = Vec::with_capacity(CHILD_STACK);
    // The stack grows down from its 16-byte aligned top.
    let top = ((stack.as_mut_ptr() as usize + CHILD_STACK) & !15) as *mut libc::c_void;
    // SAFETY: every signal is blocked around the clone so that no handler runs in the child
    // on the shared memory; the old mask is restored right after. The child runs only
    // `child_main` (async-signal-safe calls on `plan`, which outlives it: CLONE_VFORK keeps
    // this thread suspended until the child has exec'd or exited). With CLONE_FILES the
    // child's first call gives it a table of its own, before it changes any descriptor.
    let files = if short_copy { libc::CLONE_FILES } else { 0 };
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            child_main,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | files | libc::SIGCHLD,
            &plan as *const ChildPlan as *mut libc::c_void,
        );
        let err = std::io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return Err(err);
        }
        pid
    };
    drop((in_r, out_w, err_w, stack));
    // The child has exec'd or exited: a failure was stored before its exit released us.
    let errno = plan.err.load(Ordering::Acquire);
    if errno != 0 {
        let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None);
        return Err(std::io::Error::from_raw_os_error(errno));
    }
    Ok(Started {
        pid,
        stdin: in_w.map(super::kept_fds::keep_high),
        stdout: super::kept_fds::keep_high(out_r),
        stderr: super::kept_fds::keep_high(err_r),
    })
}

/// Leaves `errno` in the plan for the suspended daemon and ends the child.
///
/// # Safety
/// Only in the child between clone and exec: it ends the process with `_exit`.
unsafe fn fail(p: &ChildPlan) -> ! {
    // An errno of 0 would read as success: report EINVAL for a failure that set none.
    let e = match *libc::__errno_location() {
        0 => libc::EINVAL,
        e => e,
    };
    p.err.store(e, Ordering::Release);
    libc::_exit(127)
}

/// The child between clone and exec: async-signal-safe calls only, no allocation.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points at the parent's `ChildPlan`, alive while the parent is suspended.
    unsafe {
        let p = &*(arg as *const ChildPlan);
        if p.unshare_below > 0
            && libc::syscall(
                libc::SYS_close_range,
                p.unshare_below as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_UNSHARE,
            ) != 0
        {
            fail(p);
        }
        // A new program starts with every signal at its default (`changed_signals`). The
        // handler table is the child's own copy (no CLONE_SIGHAND).
        for &sig in p.reset {
            libc::signal(sig, libc::SIG_DFL);
        }
        if libc::setpgid(0, 0) != 0 {
            fail(p);
        }
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != p.daemon {
            libc::_exit(127);
        }
        for (from, to) in [(p.stdin, 0), (p.stdout, 1), (p.stderr, 2)] {
            if libc::dup2(from, to) < 0 {
                fail(p);
            }
        }
        // The table is the child's own copy (no CLONE_FILES, or unshared above): only the
        // child's end loses close-on-exec. It is 3 or above, so the dup2s above left it alone.
        if p.inherit >= 3 && libc::fcntl(p.inherit, libc::F_SETFD, 0) != 0 {
            fail(p);
        }
        if !p.cwd.is_null() && libc::chdir(p.cwd) != 0 {
            fail(p);
        }
        if !p.cpus.is_null()
            && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), p.cpus) != 0
        {
            fail(p);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(p.path, p.argv, p.envp);
        fail(p)
    }
}

/// The environment of a rank: `base` (the daemon's own when None), with `set` applied in
/// order (a `None` value removes the variable).
pub(crate) fn environment(
    base: Option<Vec<(OsString, OsString)>>,
    set: &[(&OsStr, Option<&OsStr>)],
) -> Vec<(OsString, OsString)> {
    let mut env = base.unwrap_or_else(|| std::env::vars_os().collect());
    for (k, v) in set {
        env.retain(|(key, _)| key != k);
        if let Some(v) = v {
            env.push((k.to_os_string(), v.to_os_string()));
        }
    }
    env
}

impl Started {
    /// The stdin pipe as a file the daemon writes to.
    pub(crate) fn take_stdin(&mut self) -> Option<std::fs::File> {
        self.stdin.take().map(std::fs::File::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn run(l: &Launch) -> (i32, String, String) {
        let mut s = start(l).expect("started");
        let (mut out, mut err) = (String::new(), String::new());
        std::fs::File::from(s.stdout)
            .read_to_string(&mut out)
            .unwrap();
        std::fs::File::from(s.stderr)
            .read_to_string(&mut err)
            .unwrap();
        drop(s.stdin.take());
        let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(s.pid), None).unwrap();
        let code = match status {
            nix::sys::wait::WaitStatus::Exited(_, c) => c,
            other => panic!("{other:?}"),
        };
        (code, out, err)
    }

    #[test]
    fn runs_a_program_from_path_with_its_environment_directory_and_pipes() {
        let dir = std::env::temp_dir();
        let args = vec![
            "-c".to_string(),
            "echo \"$IBDYN_T\"; pwd; echo oops >&2; cut -d' ' -f5 /proc/$$/stat; exit 3"
                .to_string(),
        ];
        let (code, out, err) = run(&Launch {
            program: "sh",
            args: &args,
            env: &environment(None, &[(OsStr::new("IBDYN_T"), Some(OsStr::new("x y")))]),
            cwd: Some(&dir),
            stdin_pipe: false,
            inherit: None,
            cpus: None,
        });
        assert_eq!(code, 3);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "x y");
        assert_eq!(
            Path::new(lines[1]).canonicalize().unwrap(),
            dir.canonicalize().unwrap()
        );
        assert_eq!(err, "oops\n");
        assert_ne!(
            lines[2].trim(),
            nix::unistd::getpgrp().to_string(),
            "a process group of its own"
        );
    }

    #[test]
    fn a_signal_the_daemon_ignores_is_at_its_default_in_the_started_program() {
        // Rust's runtime ignores SIGPIPE in this test process, as in the daemon.
        assert!(changed_signals().contains(&libc::SIGPIPE));
        let args = vec!["SigIgn".to_string(), "/proc/self/status".to_string()];
        let (code, out, _) = run(&Launch {
            program: "grep",
            args: &args,
            env: &environment(None, &[]),
            cwd: None,
            stdin_pipe: false,
            inherit: None,
            cpus: None,
        });
        assert_eq!(code, 0);
        let ignored = u64::from_str_radix(out.trim().trim_start_matches("SigIgn:").trim(), 16)
            .expect("a hexadecimal mask");
        // Signals 32 and 33 are glibc's own (no program sees them; `sigaction` refuses them).
        let glibc_internal = 0b11 << 31;
        assert_eq!(ignored & !glibc_internal, 0, "ignored: {ignored:#x}");
    }

    #[test]
    fn a_missing_program_or_directory_is_an_error_with_the_os_reason() {
        let none = Launch {
            program: "ibdyn-no-such-program",
            args: &[],
            env: &environment(None, &[]),
            cwd: None,
            stdin_pipe: false,
            inherit: None,
            cpus: None,
        };
        let e = start(&none).err().expect("missing program");
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        let bad_dir = Launch {
            program: "/bin/true",
            args: &[],
            env: &environment(None, &[]),
            cwd: Some(Path::new("/ibdyn/no/such/dir")),
            stdin_pipe: false,
            inherit: None,
            cpus: None,
        };
        let e = start(&bad_dir).err().expect("missing directory");
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn an_inherited_descriptor_survives_the_exec() {
        use std::os::fd::FromRawFd;
        let (r, w) = pipe().unwrap();
        // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor (10 or above) that we own.
        let w10 =
            unsafe { OwnedFd::from_raw_fd(libc::fcntl(w.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10)) };
        let n = w10.as_raw_fd();
        // (dash redirects single-digit descriptors only: reopen it through /proc.)
        let (code, fds) = open_fds_after(&format!("echo through > /proc/$$/fd/{n}"), n);
        drop((w, w10));
        let mut got = String::new();
        std::fs::File::from(r).read_to_string(&mut got).unwrap();
        assert_eq!((code, got.as_str()), (0, "through\n"));
        assert!(fds.contains(&n), "{n} not open in the child: {fds:?}");
    }

    /// Runs `script` in `sh` inheriting `inherit`; its exit code and then open descriptors.
    fn open_fds_after(script: &str, inherit: RawFd) -> (i32, Vec<i32>) {
        let args = vec![
            "-c".to_string(),
            format!("{script}; ls /proc/$$/fd | sort -n | tr '\\n' ' '"),
        ];
        let (code, out, _) = run(&Launch {
            program: "sh",
            args: &args,
            env: &environment(None, &[]),
            cwd: None,
            stdin_pipe: false,
            inherit: Some(inherit),
            cpus: None,
        });
        let fds = out
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        (code, fds)
    }

    /// With thousands of ranks alive, each spawn copied the daemon's thousands of kept
    /// descriptors and closed them at its exec. A descriptor in the kept range, even one
    /// without close-on-exec, must not reach a new process, while the one it inherits does.
    #[test]
    fn a_new_process_copies_nothing_of_the_kept_range() {
        use super::super::kept_fds::{short_copy, KEPT_FROM};
        use std::os::fd::FromRawFd;
        if !short_copy() {
            eprintln!(
                "SKIPPED: no CLOSE_RANGE_UNSHARE (Linux 5.9) or a descriptor limit below {}",
                2 * KEPT_FROM
            );
            return;
        }
        let null = std::fs::File::open("/dev/null").unwrap();
        // SAFETY: F_DUPFD returns a new descriptor (in the kept range, no close-on-exec) that
        // we own.
        let kept = unsafe {
            OwnedFd::from_raw_fd(libc::fcntl(null.as_raw_fd(), libc::F_DUPFD, KEPT_FROM + 7))
        };
        let (k, inherited) = (kept.as_raw_fd(), null.as_raw_fd());
        assert!(k >= KEPT_FROM && inherited < KEPT_FROM);
        let (code, fds) = open_fds_after("true", inherited);
        drop(kept);
        assert_eq!(code, 0);
        assert!(
            fds.contains(&inherited),
            "{inherited} not open in the child: {fds:?}"
        );
        assert!(
            !fds.contains(&k),
            "kept descriptor {k} reached the child: {fds:?}"
        );
    }

    #[test]
    fn stdin_is_a_pipe_when_asked() {
        let args = vec!["-c".to_string(), "read line; echo got $line".to_string()];
        let mut s = start(&Launch {
            program: "sh",
            args: &args,
            env: &environment(None, &[]),
            cwd: None,
            stdin_pipe: true,
            inherit: None,
            cpus: None,
        })
        .unwrap();
        let mut w = s.take_stdin().expect("a stdin pipe");
        std::io::Write::write_all(&mut w, b"hello\n").unwrap();
        drop(w);
        let mut out = String::new();
        std::fs::File::from(s.stdout)
            .read_to_string(&mut out)
            .unwrap();
        nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(s.pid), None).unwrap();
        assert_eq!(out, "got hello\n");
    }
}

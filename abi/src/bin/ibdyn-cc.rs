//! `ibdyn-cc`: compiles and links a C MPI program against ibdyn's standard-ABI library, like
//! `mpicc`. Runs the C compiler (`IBDYN_CC`, else `cc`) with the arguments given, plus `-I`
//! for ibdyn's `mpi.h` and, when linking, `-L`, `-lmpi_abi` and an rpath to the library.
//!
//! `ibdyn-cc -show ARGS` prints the command instead of running it.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: ibdyn-cc [-show] [compiler arguments...]
  e.g. ibdyn-cc -O2 -o hello hello.c && ibdyn run -n 4 ./hello
environment: IBDYN_CC (compiler, default cc), IBDYN_ABI_INCLUDE (directory of mpi.h),
             IBDYN_ABI_LIBDIR (directory of libmpi_abi.so)";

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let show = args.first().is_some_and(|a| a == "-show");
    if show {
        args.remove(0);
    }
    match command(args) {
        Ok(cmd) if show => {
            println!("{}", render(&cmd));
            ExitCode::SUCCESS
        }
        Ok(mut cmd) => {
            let e = cmd.exec();
            eprintln!(
                "ibdyn-cc: cannot run the C compiler {:?}: {e} (set IBDYN_CC to a C compiler)",
                cmd.get_program()
            );
            ExitCode::from(127)
        }
        Err(msg) => {
            eprintln!("ibdyn-cc: {msg}");
            ExitCode::from(2)
        }
    }
}

/// The compiler command for `args`.
fn command(args: Vec<OsString>) -> Result<Command, String> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .ok_or("cannot find the directory of ibdyn-cc itself")?;
    let include = include_dir(&exe_dir)?;
    let links = !args
        .iter()
        .any(|a| a == "-c" || a == "-S" || a == "-E" || a == "-M" || a == "-MM");
    let cc = std::env::var_os("IBDYN_CC").unwrap_or_else(|| "cc".into());
    let mut cmd = Command::new(cc);
    cmd.arg("-I").arg(&include).args(&args);
    if links {
        let lib = lib_dir(&exe_dir)?;
        ensure_soname_link(&lib)?;
        let mut rpath = OsString::from("-Wl,-rpath,");
        rpath.push(&lib);
        cmd.arg("-L").arg(&lib).arg(rpath).arg("-lmpi_abi");
    }
    Ok(cmd)
}

/// Where `mpi.h` is: `IBDYN_ABI_INCLUDE`, an installed `../include`, or the source tree.
fn include_dir(exe_dir: &Path) -> Result<PathBuf, String> {
    let candidates = [
        std::env::var_os("IBDYN_ABI_INCLUDE").map(PathBuf::from),
        Some(exe_dir.join("../include")),
        Some(PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/include"
        ))),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("mpi.h").is_file())
        .ok_or_else(|| {
            "cannot find ibdyn's mpi.h: set IBDYN_ABI_INCLUDE to the directory holding it".into()
        })
}

/// Where `libmpi_abi.so` is: `IBDYN_ABI_LIBDIR`, next to ibdyn-cc (a cargo build), or an
/// installed `../lib`.
fn lib_dir(exe_dir: &Path) -> Result<PathBuf, String> {
    let candidates = [
        std::env::var_os("IBDYN_ABI_LIBDIR").map(PathBuf::from),
        Some(exe_dir.to_path_buf()),
        Some(exe_dir.join("../lib")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("libmpi_abi.so").is_file() || d.join("libmpi_abi.so.1").is_file())
        .map(|d| d.canonicalize().unwrap_or(d))
        .ok_or_else(|| {
            format!(
                "cannot find libmpi_abi.so next to ibdyn-cc ({}) or in ../lib: build it with \
                 `cargo build -p ibdyn-abi`, or set IBDYN_ABI_LIBDIR",
                exe_dir.display()
            )
        })
}

/// The loader looks for the SONAME, `libmpi_abi.so.1`; cargo writes `libmpi_abi.so`.
fn ensure_soname_link(lib: &Path) -> Result<(), String> {
    let versioned = lib.join("libmpi_abi.so.1");
    if versioned.exists() {
        return Ok(());
    }
    match std::os::unix::fs::symlink("libmpi_abi.so", &versioned) {
        Ok(()) => Ok(()),
        // Another ibdyn-cc made it meanwhile.
        Err(_) if versioned.exists() => Ok(()),
        Err(e) => Err(format!(
            "cannot create {} (a link to libmpi_abi.so, the name programs load): {e}",
            versioned.display()
        )),
    }
}

fn render(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

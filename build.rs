//! Programs that use ibdyn link GCC's unwinder statically instead of `libgcc_s.so.1`.
//!
//! Every spawned process pays for each shared library it loads: the loader maps and
//! relocates it, and libgcc_s's constructor probes the CPU (`cpuid`, trapped by hypervisors).
//! Rust links `-lgcc_s` for its unwinder; this script puts a directory first on the link
//! search path of every program that depends on `ibdyn` in which `libgcc_s.a` is GCC's own
//! static unwinder (`libgcc_eh.a`), so the program needs only libc (measured in
//! docs/benchmarks.md: about 45 us less per process start here). Panics unwind as before.
//!
//! Only for native Linux/glibc builds where `cc` has `libgcc_eh.a`; set
//! `IBDYN_DYNAMIC_LIBGCC=1` to keep the usual dynamic link.
use std::path::{Path, PathBuf};
use std::process::Command;

fn static_unwinder() -> Option<PathBuf> {
    let out = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()))
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    // Without the file, cc prints the bare name back.
    path.is_absolute().then_some(path).filter(|p| p.is_file())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=IBDYN_DYNAMIC_LIBGCC");
    println!("cargo:rerun-if-env-changed=CC");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    let glibc = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let static_crt = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if !native || !glibc || static_crt || var("IBDYN_DYNAMIC_LIBGCC") == "1" {
        return;
    }
    let Some(eh) = static_unwinder() else {
        return;
    };
    let dir = Path::new(&var("OUT_DIR")).join("static-libgcc");
    let lib = dir.join("libgcc_s.a");
    let _ = std::fs::remove_file(&lib);
    if std::fs::create_dir_all(&dir).is_ok() && std::fs::copy(&eh, &lib).is_ok() {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
}

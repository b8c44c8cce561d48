//! Every function of the standard ABI is exported by libmpi_abi.so, as MPI_x and PMPI_x:
//! `functions.txt` (the list build.rs makes the stubs from) equals the functions MPICH 5's
//! mpi_abi.h declares, and the library's dynamic symbol table holds each name twice.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn listed() -> BTreeSet<String> {
    std::fs::read_to_string(manifest().join("functions.txt"))
        .expect("read functions.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// The functions (not the PMPI_ copies) a header declares: `RET NAME(` at a line's start.
fn declared(header: &str) -> BTreeSet<String> {
    header
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let ret = words.next()?;
            let rest = words.next()?;
            let name = rest.split('(').next()?;
            let is_ret = ret == "int" || ret == "double" || ret.starts_with("MPI_");
            (is_ret
                && rest.contains('(')
                && (name.starts_with("MPI_") || name.starts_with("MPIX_")))
            .then(|| name.to_string())
        })
        .collect()
}

fn library() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_ibdyn-cc"));
    let dir = exe.parent().expect("target/<profile>");
    let deps = dir.join("deps/libmpi_abi.so");
    if deps.is_file() {
        deps
    } else {
        dir.join("libmpi_abi.so")
    }
}

#[test]
fn the_list_is_the_functions_of_mpich_5s_mpi_abi_h() {
    let header = std::env::var_os("IBDYN_MPICH_ABI_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest().join("../target/abi-venv/include"))
        .join("mpi_abi.h");
    let Ok(text) = std::fs::read_to_string(&header) else {
        eprintln!(
            "\n*** SKIPPED: {} not found; run `bash scripts/abi-deps.sh` ***\n",
            header.display()
        );
        return;
    };
    let theirs = declared(&text);
    let ours = listed();
    let missing: Vec<_> = theirs.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&theirs).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "functions.txt is out of date: missing {missing:?}, not in mpi_abi.h {extra:?}"
    );
    assert!(ours.len() > 600, "only {} functions", ours.len());
}

#[test]
fn every_function_is_exported_twice() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(library())
        .output()
        .expect("run nm (binutils)");
    assert!(out.status.success(), "nm failed: {out:?}");
    let syms: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(String::from))
        .collect();
    let missing: Vec<String> = listed()
        .into_iter()
        .flat_map(|f| [format!("P{f}"), f])
        .filter(|s| !syms.contains(s))
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
}

/// The functions build.rs made stubs for (`unsupported!(NAME, PNAME);` lines).
fn stubbed() -> BTreeSet<String> {
    include_str!(concat!(env!("OUT_DIR"), "/stubs.rs"))
        .lines()
        .filter_map(|l| l.strip_prefix("unsupported!(")?.split(',').next())
        .map(String::from)
        .collect()
}

/// Every identifier followed by `(`, spaces allowed between (as the preprocessor writes them).
fn names_before_parens(text: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(ident) {
        let word_len = rest[start..]
            .find(|c| !ident(c))
            .unwrap_or(rest.len() - start);
        let after = rest[start + word_len..].trim_start_matches([' ', '\t', '\n']);
        if after.starts_with('(') {
            names.push(rest[start..start + word_len].to_string());
        }
        rest = &rest[start + word_len..];
    }
    names
}

/// A program that calls a function ibdyn implements compiles against ibdyn's mpi.h, and one
/// that calls a stub does not: the header declares exactly the implemented functions (its
/// macros expanded by the C preprocessor).
#[test]
fn ibdyn_s_header_declares_the_functions_the_library_implements() {
    let out = Command::new("cc")
        .args(["-E", "-P", "-x", "c"])
        .arg(manifest().join("include/mpi.h"))
        .output()
        .expect("run cc -E (a C compiler is needed for the ABI's tests)");
    assert!(out.status.success(), "cc -E mpi.h failed: {out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let all = listed();
    let declared: BTreeSet<String> = names_before_parens(&text)
        .into_iter()
        .filter(|w| all.contains(w))
        .collect();
    let stubs = stubbed();
    let implemented: BTreeSet<String> = all.difference(&stubs).cloned().collect();
    let undeclared: Vec<_> = implemented.difference(&declared).collect();
    let declared_stubs: Vec<_> = declared.intersection(&stubs).collect();
    assert!(
        undeclared.is_empty(),
        "implemented but not declared in include/mpi.h (a C program cannot call them): {undeclared:?}"
    );
    assert!(
        declared_stubs.is_empty(),
        "declared in include/mpi.h but only stubs: {declared_stubs:?}"
    );
    assert!(
        implemented.len() > 400,
        "only {} implemented",
        implemented.len()
    );
}

#[test]
fn the_scanner_reads_prototypes() {
    let names = declared(
        "int MPI_Send(const void *buf);\ndouble MPI_Wtime(void);\nMPI_Aint MPI_Aint_add(MPI_Aint a, MPI_Aint b);\nint PMPI_Send(void);\ntypedef int (MPI_X)(void);\n",
    );
    let want: BTreeSet<String> = ["MPI_Aint_add", "MPI_Send", "MPI_Wtime"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(names, want);
}

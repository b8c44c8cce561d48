//! Every constant and struct layout of ibdyn's mpi.h equals the MPI 5.0 standard ABI as
//! MPICH 5 ships it (`mpi_abi.h` of the `mpich` wheel, installed into target/abi-venv by
//! scripts/abi-deps.sh): one C program printing each constant of ibdyn's header and the
//! sizes and offsets of the ABI's types is compiled against each header; the outputs must
//! be identical.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The names of the object-like macros and enumerators of `header`.
fn constant_names(header: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in header.lines() {
        let line = line.trim();
        let name = if let Some(rest) = line.strip_prefix("#define ") {
            rest.split_whitespace().next().unwrap_or("")
        } else if line.starts_with("MPI_") && line.contains('=') {
            line.split('=').next().unwrap_or("").trim()
        } else {
            continue;
        };
        if name.starts_with("MPI_") && !name.contains('(') {
            names.push(name.to_string());
        }
    }
    names
}

fn probe_source(names: &[String]) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n#include HEADER\n\
         int main(void) {\n",
    );
    for n in names {
        c.push_str(&format!(
            "  printf(\"%s %lld\\n\", \"{n}\", (long long)(intptr_t)({n}));\n"
        ));
    }
    for ty in [
        "MPI_Status",
        "MPI_Aint",
        "MPI_Offset",
        "MPI_Count",
        "MPI_Comm",
        "MPI_Datatype",
        "MPI_Op",
        "MPI_Request",
        "MPI_Errhandler",
        "MPI_Info",
        "MPI_Group",
        "MPI_Win",
        "MPI_File",
        "MPI_Session",
        "MPI_Message",
    ] {
        c.push_str(&format!(
            "  printf(\"sizeof({ty}) %zu\\n\", sizeof({ty}));\n"
        ));
    }
    for f in ["MPI_SOURCE", "MPI_TAG", "MPI_ERROR", "MPI_internal"] {
        c.push_str(&format!(
            "  printf(\"offsetof(MPI_Status, {f}) %zu\\n\", offsetof(MPI_Status, {f}));\n"
        ));
    }
    c.push_str("  printf(\"signed(MPI_Aint) %d\\n\", (MPI_Aint)-1 < 0);\n  return 0;\n}\n");
    c
}

/// Compiles `src` against `header` (an include path) and returns what the program prints.
fn run_probe(dir: &Path, tag: &str, src: &Path, include_dir: &Path, header: &str) -> String {
    let exe = dir.join(format!("probe-{tag}"));
    let out = Command::new("cc")
        .arg(format!("-DHEADER=<{header}>"))
        .arg("-I")
        .arg(include_dir)
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "compiling the probe against {}/{header} failed (a constant missing from that header?):\n{}",
        include_dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().expect("run the probe");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn mpich_include() -> Option<PathBuf> {
    let dir = match std::env::var_os("IBDYN_MPICH_ABI_INCLUDE") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/abi-venv/include"),
    };
    dir.join("mpi_abi.h").is_file().then_some(dir)
}

#[test]
fn header_matches_the_standard_abi_of_mpich_5() {
    let ours_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let Some(mpich_dir) = mpich_include() else {
        eprintln!(
            "\n*** SKIPPED header_matches_the_standard_abi_of_mpich_5: MPICH 5's mpi_abi.h not \
             found in target/abi-venv/include. Run `bash scripts/abi-deps.sh` (a venv with \
             `pip install mpich==5.0.2`) or set IBDYN_MPICH_ABI_INCLUDE. ***\n"
        );
        return;
    };
    let header = std::fs::read_to_string(ours_dir.join("mpi.h")).expect("read mpi.h");
    let names = constant_names(&header);
    assert!(
        names.len() > 250,
        "only {} constants found in mpi.h",
        names.len()
    );
    let dir = std::env::temp_dir().join(format!("ibdyn-abi-consts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let src = dir.join("probe.c");
    std::fs::write(&src, probe_source(&names)).expect("write probe.c");
    let ours = run_probe(&dir, "ibdyn", &src, &ours_dir, "mpi.h");
    let theirs = run_probe(&dir, "mpich", &src, &mpich_dir, "mpi_abi.h");
    let _ = std::fs::remove_dir_all(&dir);
    let differing: Vec<String> = ours
        .lines()
        .zip(theirs.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("  ibdyn: {a:<45} MPICH 5: {b}"))
        .collect();
    assert!(
        differing.is_empty() && ours.lines().count() == theirs.lines().count(),
        "ibdyn's mpi.h differs from the standard ABI:\n{}",
        differing.join("\n")
    );
    println!("{} constants and layouts identical", ours.lines().count());
}

#[test]
fn the_scanner_finds_defines_and_enumerators() {
    let names = constant_names(
        "#define MPI_INT ((MPI_Datatype)0x209)\n#define MPI_F(x) x\n  MPI_SUCCESS = 0,\nint MPI_Send(void);\n",
    );
    assert_eq!(names, ["MPI_INT", "MPI_SUCCESS"]);
}

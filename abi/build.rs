//! The shared library's SONAME is the standard ABI's library name, so a program linked
//! against it (by ibdyn-cc or MPICH's mpicc_abi) asks the loader for `libmpi_abi.so.1`.
//!
//! Every function of the standard ABI (`functions.txt`) that no file of `src/api/` exports
//! (a file exports `X` when it names `PX`, as every `export!` does) gets a stub that reports
//! MPI_ERR_UNSUPPORTED_OPERATION: `$OUT_DIR/stubs.rs`, one `unsupported!` line each.
use std::collections::BTreeSet;
use std::path::Path;

fn implemented(dir: &Path, found: &mut BTreeSet<String>) {
    let entries = std::fs::read_dir(dir).expect("read src/api");
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            implemented(&p, found);
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("read a source file");
        let bytes = text.as_bytes();
        for (i, _) in text.match_indices("PMPI") {
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
                continue;
            }
            let name: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.insert(name);
        }
    }
}

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi_abi.so.1");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=functions.txt");
    println!("cargo:rerun-if-changed=src/api");
    let mut done = BTreeSet::new();
    implemented(Path::new("src/api"), &mut done);
    let list = std::fs::read_to_string("functions.txt").expect("read functions.txt");
    let mut out = String::new();
    for name in list.lines().map(str::trim) {
        if name.is_empty() || name.starts_with('#') || done.contains(name) {
            continue;
        }
        out.push_str(&format!("unsupported!({name}, P{name});\n"));
    }
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out_dir.join("stubs.rs"), out).expect("write stubs.rs");
    std::fs::write(out_dir.join("type_names.rs"), type_names()).expect("write type_names.rs");
}

/// `const TYPE_NAMES: &[(Handle, &str)]`: each predefined datatype of include/mpi.h (a line
/// `#define MPI_X ((MPI_Datatype)0xNNN)`) with its name.
fn type_names() -> String {
    println!("cargo:rerun-if-changed=include/mpi.h");
    let header = std::fs::read_to_string("include/mpi.h").expect("read include/mpi.h");
    let mut out = String::from("const TYPE_NAMES: &[(Handle, &str)] = &[\n");
    for line in header.lines() {
        let mut w = line.split_whitespace();
        let (Some("#define"), Some(name), Some(value)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        if let Some(hex) = value
            .strip_prefix("((MPI_Datatype)0x")
            .and_then(|v| v.strip_suffix(')'))
        {
            out.push_str(&format!("    (0x{hex}, \"{name}\"),\n"));
        }
    }
    out.push_str("];\n");
    out
}

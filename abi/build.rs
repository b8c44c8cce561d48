//! The shared library's SONAME is the standard ABI's library name, so a program linked
//! against it (by ibdyn-cc or MPICH's mpicc_abi) asks the loader for `libmpi_abi.so.1`.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi_abi.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}

//! The `ibdyn` command (the tests build the same file as an example of the root package).

fn main() {
    std::process::exit(ibdyn_launcher::cli::main());
}

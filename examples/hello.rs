//! Initialises PMI, says hello (unless `--quiet`), finalises. `ibdyn-bench launch` runs it quiet.

fn main() {
    let quiet = std::env::args().any(|a| a == "--quiet");
    let mut pmi = match ibdyn::pmi::PmiClient::init() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hello: PMI init failed: {e}");
            std::process::exit(1);
        }
    };
    if !quiet {
        println!(
            "hello from rank {} of {} on node {} ({})",
            pmi.rank(),
            pmi.size(),
            pmi.node_id(),
            pmi.node_uid()
        );
    }
    if let Err(e) = pmi.finalize() {
        eprintln!("hello: PMI finalize failed: {e}");
        std::process::exit(1);
    }
}

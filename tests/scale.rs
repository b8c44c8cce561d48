//! A job of many ranks on emulated nodes starts, talks and ends (the scale the benchmarks
//! measure at up to 256): `ring` initialises, passes a token around all ranks (every hop
//! between two nodes), reduces, and finalises.

mod common;

use common::*;

#[test]
fn a_job_of_128_ranks_on_4_nodes_runs_to_its_end() {
    const N: usize = 128;
    let s = Scratch::new("scale");
    let out = s.run(
        &[
            "run",
            "-n",
            &N.to_string(),
            "--nodes",
            "4",
            "--map-by",
            "node",
            example_bin("ring").to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let sum = format!("sum of ranks {}", N * (N - 1) / 2);
    let mut ranks: Vec<usize> = stdout
        .lines()
        .filter(|l| l.contains(&format!(" of {N} on node ")) && l.contains(&sum))
        .filter_map(|l| l.strip_prefix("rank ")?.split(' ').next()?.parse().ok())
        .collect();
    ranks.sort_unstable();
    assert_eq!(ranks, (0..N).collect::<Vec<_>>(), "{stdout}");
}

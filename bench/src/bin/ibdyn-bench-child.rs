//! The program `ibdyn-bench`'s dynamic-process benchmarks spawn: initialise, do what the
//! benchmark named in the first argument needs of a child, disconnect, finalise.

use ibdyn::traits::*;
use ibdyn::SystemOperation;

fn e(err: ibdyn::CommError) -> String {
    err.to_string()
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    if let Err(m) = child_main(&which) {
        eprintln!("ibdyn-bench-child {which}: {m}");
        std::process::exit(1);
    }
}

fn child_main(which: &str) -> Result<(), String> {
    let u = ibdyn::initialize().map_err(e)?;
    let parent = u.parent().ok_or("the child was not spawned")?;
    match which {
        "spawn-latency" => {}
        "spawn-rate" => {
            parent.recv(&mut [], 0, 9).map_err(e)?;
        }
        "merge" => loop {
            let mut b = [0u8; 0];
            let st = parent.probe(0, ibdyn::ANY_TAG).map_err(e)?;
            parent.recv(&mut b, 0, st.tag).map_err(e)?;
            if st.tag == 9 {
                break;
            }
            let merged = parent.merge(true).map_err(e)?;
            let mut max = [0.0f64];
            merged
                .all_reduce_into(&[0.0], &mut max, SystemOperation::max())
                .map_err(e)?;
            merged.free();
        },
        "intercomm-latency" => {
            // An echo, receiving as the intra peer does (no probe): tag 9 ends it.
            let (mut r, s) = (vec![0u8; 1 << 20], vec![1u8; 1 << 20]);
            loop {
                let st = parent.recv(&mut r, 0, ibdyn::ANY_TAG).map_err(e)?;
                if st.tag == 9 {
                    break;
                }
                parent.send(&s[..st.count], 0, 1).map_err(e)?;
            }
        }
        other => return Err(format!("unknown benchmark {other:?}")),
    }
    parent.disconnect().map_err(e)?;
    u.finalize().map_err(e)
}

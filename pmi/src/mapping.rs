//! `PMI_process_mapping`: `(vector,(start_node,nodes,ranks_per_node),...)`. The blocks are
//! applied in order and the whole vector repeats until every rank has a node.

use crate::error::{PmiError, Result};

/// Key under which a PMI-1 launcher puts the mapping.
pub const PROCESS_MAPPING_KEY: &str = "PMI_process_mapping";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessMapping {
    pub blocks: Vec<(u32, u32, u32)>,
}

impl ProcessMapping {
    /// Block placement: node `d` holds `counts[d]` consecutive ranks.
    pub fn from_counts(counts: &[u32]) -> ProcessMapping {
        let mut blocks: Vec<(u32, u32, u32)> = Vec::new();
        for (node, &c) in counts.iter().enumerate() {
            match blocks.last_mut() {
                Some((_, nodes, ppn)) if *ppn == c => *nodes += 1,
                _ => blocks.push((node as u32, 1, c)),
            }
        }
        blocks.retain(|&(_, _, ppn)| ppn > 0);
        ProcessMapping { blocks }
    }

    /// Round-robin placement over `nnodes` nodes.
    pub fn round_robin(nnodes: u32) -> ProcessMapping {
        ProcessMapping {
            blocks: vec![(0, nnodes, 1)],
        }
    }

    pub fn parse(text: &str) -> Result<ProcessMapping> {
        let bad = |why: &str| PmiError::invalid("process mapping", text, why);
        let inner = text
            .trim()
            .strip_prefix("(vector,")
            .and_then(|s| s.strip_suffix(')'))
            .ok_or_else(|| bad("not of the form (vector,...)"))?;
        let mut blocks = Vec::new();
        for part in inner
            .split("),")
            .map(|p| p.trim().trim_start_matches('(').trim_end_matches(')'))
        {
            if part.is_empty() {
                continue;
            }
            let nums: Vec<u32> = part
                .split(',')
                .map(|n| {
                    n.trim()
                        .parse::<u32>()
                        .map_err(|_| bad("a block field is not a number"))
                })
                .collect::<Result<_>>()?;
            let [s, n, p] = nums[..] else {
                return Err(bad("a block does not have 3 fields"));
            };
            blocks.push((s, n, p));
        }
        if blocks.iter().all(|&(_, n, p)| n == 0 || p == 0) {
            return Err(bad("places no rank"));
        }
        Ok(ProcessMapping { blocks })
    }

    pub fn format(&self) -> String {
        let parts: Vec<String> = self
            .blocks
            .iter()
            .map(|(s, n, p)| format!("({s},{n},{p})"))
            .collect();
        format!("(vector,{})", parts.join(","))
    }

    /// Node of every rank of a job of `size` processes.
    pub fn nodes(&self, size: u32) -> Vec<u32> {
        let mut out = Vec::with_capacity(size as usize);
        if self.blocks.iter().all(|&(_, n, p)| n == 0 || p == 0) {
            return vec![0; size as usize];
        }
        while out.len() < size as usize {
            for &(start, nodes, ppn) in &self.blocks {
                for node in start..start + nodes {
                    for _ in 0..ppn {
                        if out.len() < size as usize {
                            out.push(node);
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_round_robin() {
        let m = ProcessMapping::from_counts(&[3, 2, 2]);
        assert_eq!(m.format(), "(vector,(0,1,3),(1,2,2))");
        assert_eq!(m.nodes(7), vec![0, 0, 0, 1, 1, 2, 2]);
        let m = ProcessMapping::round_robin(3);
        assert_eq!(m.nodes(7), vec![0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(ProcessMapping::parse(&m.format()).unwrap(), m);
        assert_eq!(ProcessMapping::from_counts(&[2, 0]).nodes(2), vec![0, 0]);
    }

    #[test]
    fn parses_hydra_form_and_rejects_junk() {
        let m = ProcessMapping::parse("(vector,(0,1,4))").unwrap();
        assert_eq!(m.nodes(4), vec![0; 4]);
        for bad in [
            "",
            "(vector,)",
            "(vector,(0,1))",
            "(list,(0,1,1))",
            "(vector,(0,1,x))",
            "(vector,(0,0,0))",
        ] {
            assert!(ProcessMapping::parse(bad).is_err(), "{bad:?}");
        }
    }
}

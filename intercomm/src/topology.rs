//! Which node each member of a communicator's local group runs on, from the members'
//! address cards (equal `node_uid` = same node). Collectives use it for two-level forms.

use crate::comm::Communicator;
use crate::error::Result;
use std::cell::RefCell;
use std::rc::Rc;

/// Cached on the communicator once computed (a failed lookup is not cached).
#[derive(Default)]
struct NodeIds(RefCell<Option<Rc<[u32]>>>);

impl Communicator {
    /// For each rank of the local group, a small node number: ranks with equal numbers share a
    /// node; numbers go 0, 1, 2, ... in order of each node's lowest rank. Not collective (each
    /// process reads the address cards it knows or fetches them from the process manager).
    pub fn node_ids(&self) -> Result<Rc<[u32]>> {
        let cache = self.attribute(NodeIds::default);
        if let Some(ids) = cache.0.borrow().as_ref() {
            return Ok(ids.clone());
        }
        let rt = self.runtime();
        let me = rt.me();
        let mut uids: Vec<String> = Vec::new();
        let mut ids = Vec::with_capacity(self.group().size());
        // Members of this process's own job: the process manager's mapping says where they
        // run, without fetching (and waiting for) their address cards.
        let same_job = self.group().members().iter().all(|g| g.job == me.job);
        for &g in self.group().members() {
            let uid = if same_job {
                rt.with_pmi(|p| p.node_of(g.rank)).to_string()
            } else {
                rt.card_of(g)?.node_uid
            };
            let id = match uids.iter().position(|u| *u == uid) {
                Some(i) => i,
                None => {
                    uids.push(uid);
                    uids.len() - 1
                }
            };
            ids.push(id as u32);
        }
        let ids: Rc<[u32]> = ids.into();
        *cache.0.borrow_mut() = Some(ids.clone());
        tracing::debug!(
            nodes = uids.len(),
            size = ids.len(),
            "communicator node map"
        );
        Ok(ids)
    }
}

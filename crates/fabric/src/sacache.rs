//! Path records in a virtualised InfiniBand cloud ("Towards the InfiniBand SR-IOV vSwitch
//! Architecture"): the LIDtracker that hands out LIDs (hosts count up from 1, VMs' floating LIDs
//! down from 49151), a PathRecord cache with invalidation, and a model of the SA query storm a
//! migration or a switch failure sets off, with and without the cache.
//!
//! Cache design (the paper has none). A path record holds SLID, DLID, SL, MTU and rate, not the
//! route: re-routing after a switch failure or a vSwitch migration (the VM keeps its LID and GID)
//! leaves every record valid. The SM keeps an epoch per destination LID, bumped only when a
//! record towards it would change: the LID moved to another port (a VM migrated without vSwitch
//! LID migration), the port left the subnet, or the path's SL changed (LASH, DFSSSP). Clients
//! cache records with the epoch they were answered under and subscribe to the SM's notices
//! (InformInfo on GID in/out of service, plus the epoch change): a notice drops the entries of
//! that LID, so a client queries the SA again for exactly the records that changed, once.

use std::collections::HashMap;

use serde::Serialize;

use crate::bail;
use crate::error::Result;
use crate::model::MAX_UNICAST_LID;

/// Hands out LIDs: physical hosts and switches from 1 upwards, VMs from 49151 downwards, so a VM's
/// LID can float with it without colliding with the fabric's own.
#[derive(Debug, Clone)]
pub struct LidTracker {
    next_host: u16,
    next_vm: u16,
    free_host: Vec<u16>,
    free_vm: Vec<u16>,
}

impl Default for LidTracker {
    fn default() -> Self {
        LidTracker {
            next_host: 1,
            next_vm: MAX_UNICAST_LID,
            free_host: Vec::new(),
            free_vm: Vec::new(),
        }
    }
}

impl LidTracker {
    fn exhausted(&self) -> bool {
        self.next_host > self.next_vm
    }

    pub fn host(&mut self) -> Result<u16> {
        if let Some(l) = self.free_host.pop() {
            return Ok(l);
        }
        if self.exhausted() {
            bail!("LID space exhausted: hosts and VMs use all {MAX_UNICAST_LID} unicast LIDs");
        }
        self.next_host += 1;
        Ok(self.next_host - 1)
    }

    pub fn vm(&mut self) -> Result<u16> {
        if let Some(l) = self.free_vm.pop() {
            return Ok(l);
        }
        if self.exhausted() {
            bail!("LID space exhausted: hosts and VMs use all {MAX_UNICAST_LID} unicast LIDs");
        }
        self.next_vm -= 1;
        Ok(self.next_vm + 1)
    }

    /// Returns a LID (a VM that ended, a host removed).
    pub fn free(&mut self, lid: u16) -> Result<()> {
        if lid == 0 || lid > MAX_UNICAST_LID {
            bail!("LID {lid} is not a unicast LID");
        }
        if lid < self.next_host {
            if self.free_host.contains(&lid) {
                bail!("LID {lid} freed twice");
            }
            self.free_host.push(lid);
        } else if lid > self.next_vm {
            if self.free_vm.contains(&lid) {
                bail!("LID {lid} freed twice");
            }
            self.free_vm.push(lid);
        } else {
            bail!("LID {lid} was never handed out");
        }
        Ok(())
    }

    /// LIDs in use.
    pub fn used(&self) -> usize {
        (self.next_host as usize - 1 - self.free_host.len())
            + (MAX_UNICAST_LID - self.next_vm) as usize
            - self.free_vm.len()
    }
}

/// One client's cached path records, keyed by destination LID, with the SM's epoch per LID.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PathCache {
    #[serde(skip)]
    entries: HashMap<u16, u32>,
    pub hits: u64,
    pub misses: u64,
    pub invalidated: u64,
}

impl PathCache {
    /// A lookup: true on a hit (no SA query); a miss stores the answer under `epoch`.
    pub fn lookup(&mut self, dlid: u16, epoch: u32) -> bool {
        match self.entries.get(&dlid) {
            Some(&e) if e == epoch => {
                self.hits += 1;
                true
            }
            _ => {
                self.misses += 1;
                self.entries.insert(dlid, epoch);
                false
            }
        }
    }

    /// The SM's notice for `dlid`: its records changed (or the port left). Returns whether this
    /// client held one.
    pub fn invalidate(&mut self, dlid: u16) -> bool {
        let had = self.entries.remove(&dlid).is_some();
        self.invalidated += u64::from(had);
        had
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What happened in the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A VM moved and kept its LID and GID (vSwitch with LID migration).
    MigrationKeepsLid,
    /// A VM moved and got a new LID (shared port, or no LID migration).
    MigrationNewLid,
    /// A switch went down; its hosts' LIDs are gone, every other record is unchanged.
    SwitchFailure,
}

/// The storm scenario: `peers` connections are affected, each makes `queries_per_peer` path
/// queries to re-establish (RDS reconnects; the paper's 2,000 peers x 10 = 20,000 queries); the SA
/// answers `sa_rate` queries per second in order; a query not answered within `timeout_s` is sent
/// again, up to `retries` times.
#[derive(Debug, Clone, Serialize)]
pub struct Storm {
    pub peers: u64,
    pub queries_per_peer: u64,
    pub sa_rate: f64,
    pub timeout_s: f64,
    pub retries: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StormResult {
    /// Queries the SA received (resends included).
    pub queries: u64,
    /// Queries beyond one per record that changed.
    pub excess_queries: u64,
    /// Seconds until the last query was answered.
    pub seconds: f64,
    /// Queries that gave up after all resends.
    pub failed: u64,
    pub notices: u64,
}

impl Storm {
    /// A FIFO SA serving `sa_rate` per second from t = 0, all `n` first attempts arriving at once.
    /// A query whose answer would come after its timeout is abandoned by its client (the SA still
    /// spends its time on it) and sent again at the timeout.
    fn drain(&self, n: u64) -> (u64, f64, u64) {
        let service = 1.0 / self.sa_rate;
        // Attempts waiting, as (time sent, attempt number), in order of sending.
        let mut pending: std::collections::VecDeque<(f64, u32)> =
            (0..n).map(|_| (0.0, 0)).collect();
        let (mut clock, mut sent, mut failed, mut last) = (0.0f64, n, 0u64, 0.0f64);
        while let Some((at, attempt)) = pending.pop_front() {
            clock = clock.max(at) + service;
            if clock - at <= self.timeout_s {
                last = last.max(clock);
            } else if attempt < self.retries {
                pending.push_back((at + self.timeout_s, attempt + 1));
                sent += 1;
            } else {
                failed += 1;
                last = last.max(at + self.timeout_s);
            }
        }
        (sent, last, failed)
    }

    /// The storm after `event`, without a cache (every affected connection asks again) or with
    /// the epoch cache (only records that changed are asked for, once each, after a notice).
    pub fn run(&self, event: Event, cache: bool) -> StormResult {
        let changed = match event {
            Event::MigrationKeepsLid => 0,
            Event::MigrationNewLid => self.peers,
            // Records of the hosts behind the switch are gone, not changed: nothing to re-query.
            Event::SwitchFailure => 0,
        };
        let first = if cache {
            changed
        } else {
            self.peers * self.queries_per_peer
        };
        let (queries, seconds, failed) = self.drain(first);
        StormResult {
            queries,
            excess_queries: queries.saturating_sub(changed),
            seconds,
            failed,
            notices: if cache { changed } else { 0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lidtracker_counts_from_both_ends_and_reuses() {
        let mut t = LidTracker::default();
        assert_eq!((t.host().unwrap(), t.host().unwrap()), (1, 2));
        assert_eq!((t.vm().unwrap(), t.vm().unwrap()), (49151, 49150));
        t.free(49151).unwrap();
        assert_eq!(t.vm().unwrap(), 49151);
        t.free(1).unwrap();
        assert!(t.free(1).unwrap_err().0.contains("twice"));
        assert!(t.free(30000).unwrap_err().0.contains("never"));
        assert_eq!(t.used(), 3);
        assert_eq!(t.host().unwrap(), 1);
        // Fill up: the two ranges meet and the next one is refused.
        let mut n = t.used();
        while t.vm().is_ok() {
            n += 1;
        }
        assert_eq!(n, 49151);
        assert!(t.host().unwrap_err().0.contains("exhausted"));
    }

    #[test]
    fn cache_hits_until_a_notice() {
        let mut c = PathCache::default();
        assert!(!c.lookup(7, 0));
        assert!(c.lookup(7, 0));
        assert!(c.invalidate(7));
        assert!(!c.invalidate(7));
        assert!(!c.lookup(7, 1));
        assert_eq!((c.hits, c.misses, c.invalidated, c.len()), (1, 2, 1, 1));
        // A newer epoch without a notice is a miss too.
        assert!(!c.lookup(7, 2));
    }

    #[test]
    fn the_papers_burst_saturates_the_sa_and_the_cache_removes_it() {
        // 2,000 peers x 10 queries into an SA of 6,000 queries/s.
        let s = Storm {
            peers: 2000,
            queries_per_peer: 10,
            sa_rate: 6000.0,
            timeout_s: 1.0,
            retries: 3,
        };
        let no = s.run(Event::MigrationNewLid, false);
        // 6,000 answered per timeout: the rest are sent again, and again.
        assert!(no.queries > 20_000 && no.excess_queries > 18_000, "{no:?}");
        assert!(no.seconds > 3.0, "{no:?}");
        let with = s.run(Event::MigrationNewLid, true);
        assert_eq!(
            (with.queries, with.excess_queries, with.failed),
            (2000, 0, 0)
        );
        assert!((with.seconds - 2000.0 / 6000.0).abs() < 1e-6);
        assert_eq!(s.run(Event::MigrationKeepsLid, true).queries, 0);
        assert_eq!(s.run(Event::SwitchFailure, true).queries, 0);
        // A burst the SA absorbs within the timeout costs no resends.
        let small = Storm {
            peers: 100,
            ..s.clone()
        }
        .run(Event::SwitchFailure, false);
        assert_eq!((small.queries, small.failed), (1000, 0));
    }
}

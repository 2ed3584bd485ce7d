//! Routes to return to: what a destination's routes were before a change broke them, kept until
//! they route the fabric again (a failed link, switch or node came back), so that re-routing then
//! restores them instead of keeping the detour. Kept per destination (a column of the tables):
//! a column that still routes the fabric as it is now follows the newest tables; one that does
//! not stays as it was. A restore therefore costs about the LFT blocks the failure cost.

use std::collections::HashMap;

use crate::lft::{Lfts, NO_PATH};
use crate::model::Fabric;
use crate::repair::{aligned, intact_lids};
use crate::topo::Topo;

#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// Per switch GUID, per LID: the entry to return to.
    tables: Lfts,
}

impl Memory {
    pub fn is_empty(&self) -> bool {
        self.tables.switches.is_empty()
    }

    /// The tables to start re-routing `f` from: `last`, except that each destination whose
    /// remembered column routes `f` as it is takes that column.
    pub fn start_from(&self, f: &Fabric, t: &Topo, last: &Lfts) -> Lfts {
        let mut base = aligned(f, last);
        if self.is_empty() {
            return base;
        }
        let mem = aligned(f, &self.tables);
        let differ = differing_lids(&mem, &base);
        for (lid, intact) in intact_lids(f, t, &mem, |l| {
            differ.get(l as usize).copied().unwrap_or(false)
        }) {
            if intact {
                for (b, m) in base.switches.iter_mut().zip(&mem.switches) {
                    b.ports[lid as usize] = m.ports[lid as usize];
                }
            }
        }
        base
    }

    /// After `new` was handed to `f`: columns remembered from before a change that broke them stay
    /// while they still do not route `f`; every other column becomes `new`'s.
    pub fn update(&mut self, f: &Fabric, t: &Topo, new: &Lfts) {
        if self.is_empty() {
            self.tables = new.clone();
            return;
        }
        let mem = aligned(f, &self.tables);
        let differ = differing_lids(&mem, &aligned(f, new));
        let intact = intact_lids(f, t, &mem, |l| {
            differ.get(l as usize).copied().unwrap_or(false)
        });
        let idx: HashMap<u64, usize> = self.tables.by_guid();
        let width = self.tables.width().max(new.width());
        for s in &new.switches {
            let Some(&i) = idx.get(&s.guid) else {
                // A switch the memory has not seen: its table is remembered as it is now.
                let mut row = s.clone();
                row.ports.resize(width, NO_PATH);
                self.tables.switches.push(row);
                continue;
            };
            let row = &mut self.tables.switches[i].ports;
            if row.len() < width {
                row.resize(width, NO_PATH);
            }
            for &(lid, ok) in &intact {
                if ok {
                    row[lid as usize] = s.port(lid);
                }
            }
        }
    }
}

/// Per LID: whether `a` and `b` (aligned to the same fabric) differ in any switch's entry. Only
/// those columns need a look: where they are equal, remembering or restoring changes nothing.
fn differing_lids(a: &Lfts, b: &Lfts) -> Vec<bool> {
    let width = a.width().max(b.width());
    let mut out = vec![false; width];
    for (x, y) in a.switches.iter().zip(&b.switches) {
        if x.ports == y.ports {
            continue;
        }
        for (lid, o) in out.iter_mut().enumerate() {
            *o |= x.port(lid as u16) != y.port(lid as u16);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fail::{self, changed_blocks, Failures};
    use crate::gen::Pgft;
    use crate::{check, slimupdate};

    /// Routes `steps` (fabrics one after the other) the way the OpenSM plugin does: SlimUpdate from
    /// the last tables, restored where the memory allows. Returns the tables after each step.
    fn run(steps: &[&Fabric]) -> Vec<Lfts> {
        let mut mem = Memory::default();
        let mut out: Vec<Lfts> = Vec::new();
        for f in steps {
            let t = Topo::new(f).unwrap();
            let start = out.last().map(|last| mem.start_from(f, &t, last));
            let (new, _) = slimupdate::route(f, &t, start.as_ref()).unwrap();
            let c = check::check(f, &t, &new).unwrap();
            assert!(c.deadlock_free && c.unreachable == 0, "{c:?}");
            mem.update(f, &t, &new);
            out.push(new);
        }
        out
    }

    /// Entries that differ (the tables of switches in both).
    fn entries(a: &Lfts, b: &Lfts) -> usize {
        crate::lft::diff(a, b).unwrap().entries
    }

    fn failed(f: &Fabric, fl: Failures) -> Fabric {
        fail::apply(f, &fl).unwrap().0
    }

    #[test]
    fn a_link_that_comes_back_gets_its_routes_back() {
        for (f, link) in [
            (Pgft::kary(4, 2).unwrap().build().unwrap(), ("s1-0", 6)),
            (Pgft::kary(4, 3).unwrap().build().unwrap(), ("s2-0", 6)),
            (Pgft::kary(4, 3).unwrap().build().unwrap(), ("s1-0", 5)),
        ] {
            let g = failed(
                &f,
                Failures {
                    links: vec![(link.0.into(), link.1)],
                    ..Default::default()
                },
            );
            let tables = run(&[&f, &g, &f]);
            assert_eq!(entries(&tables[0], &tables[2]), 0, "{link:?}");
            let failure = changed_blocks(&tables[0], &tables[1]).0;
            assert!(failure > 0);
            assert_eq!(changed_blocks(&tables[1], &tables[2]).0, failure);
        }
    }

    #[test]
    fn a_switch_and_a_node_that_come_back_get_their_routes_back() {
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let sw = failed(
            &f,
            Failures {
                switches: vec!["s2-1".into()],
                ..Default::default()
            },
        );
        let node = failed(
            &f,
            Failures {
                nodes: vec!["h-7".into()],
                ..Default::default()
            },
        );
        let tables = run(&[&f, &sw, &f, &node, &f]);
        assert_eq!(entries(&tables[0], &tables[2]), 0);
        assert_eq!(entries(&tables[0], &tables[4]), 0);
        // The node's own entries stay while it is away: nothing to send either way.
        assert_eq!(changed_blocks(&tables[2], &tables[3]).0, 0);
        // The switch that came back is sent its whole table (2 blocks of 64 LIDs), the others
        // what the failure changed.
        assert_eq!(
            changed_blocks(&tables[1], &tables[2]).0,
            changed_blocks(&tables[0], &tables[1]).0 + 2
        );
    }

    #[test]
    fn a_link_then_a_root_fail_and_come_back_in_turn() {
        // As OpenSM sees a 4-ary-2-tree when ibsim takes link s1-0[8] and then switch s2-1 down
        // and back, one after the other.
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let link = failed(
            &f,
            Failures {
                links: vec![("s1-0".into(), 8)],
                ..Default::default()
            },
        );
        let sw = failed(
            &f,
            Failures {
                switches: vec!["s2-1".into()],
                ..Default::default()
            },
        );
        let only = run(&[&f, &sw, &f]);
        assert_eq!(entries(&only[0], &only[2]), 0, "switch alone");
        let tables = run(&[&f, &link, &f, &sw, &f]);
        assert_eq!(entries(&tables[0], &tables[2]), 0);
        assert_eq!(entries(&tables[0], &tables[4]), 0);
    }

    #[test]
    fn two_failures_mended_one_at_a_time() {
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let one = |l: (&str, u8)| Failures {
            links: vec![(l.0.into(), l.1)],
            ..Default::default()
        };
        let a = failed(&f, one(("s1-0", 5)));
        let both = failed(&a, one(("s2-2", 7)));
        // Every step is checked (deadlock free, all reachable); the second failure's mend keeps
        // the detours of the first where they still work, the first's mend restores everything.
        let tables = run(&[&f, &a, &both, &a, &f]);
        assert_eq!(entries(&tables[0], &tables[4]), 0);
    }
}

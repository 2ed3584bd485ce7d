//! Controls (ingress, egress): tables and conditionals linked into a graph, compiled once.

use crate::action::{self, Action, Exec};
use crate::expr::{Env, Expr};
use crate::externs::Externs;
use crate::layout::Layout;
use crate::profile::{ActionProfile, Member};
use crate::state::{take, PacketState};
use crate::table::Table;
use std::collections::HashMap;

mod load;
pub use load::encode_params;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeRef {
    Table(u32),
    Cond(u32),
}

#[derive(Debug, Clone)]
enum NextMode {
    /// Next node per position in the table's action list.
    ByAction(Vec<Option<NodeRef>>),
    HitMiss {
        hit: Option<NodeRef>,
        miss: Option<NodeRef>,
    },
}

#[derive(Debug, Clone)]
struct TableNode {
    table: u32,
    next: NextMode,
    base_default_next: Option<NodeRef>,
}

#[derive(Debug, Clone)]
struct Cond {
    expr: Expr,
    t: Option<NodeRef>,
    f: Option<NodeRef>,
}

#[derive(Debug, Clone)]
pub struct Control {
    pub name: String,
    init: Option<NodeRef>,
    nodes: Vec<TableNode>,
    conds: Vec<Cond>,
}

/// Shared load-time context for controls.
pub struct Ctx<'a> {
    pub layout: &'a Layout,
    pub actions: &'a [Action],
    pub action_by_id: &'a HashMap<u64, u32>,
    pub externs: &'a Externs,
}

impl Control {
    /// Runs the control on the packet state, without the log. The walk is compiled twice:
    /// without the log's tests (every packet while the log is off) and with them (`run_traced`).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        tables: &mut [Table],
        profiles: &[ActionProfile],
        actions: &[Action],
        st: &mut PacketState,
        x: &mut Exec,
        key: &mut Vec<u8>,
        tmp: &mut Vec<u8>,
    ) {
        self.run_nodes::<false>(tables, profiles, actions, st, x, key, tmp);
    }

    /// `run` with bmv2's log lines (the program calls it while the log is on).
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    pub fn run_traced(
        &self,
        tables: &mut [Table],
        profiles: &[ActionProfile],
        actions: &[Action],
        st: &mut PacketState,
        x: &mut Exec,
        key: &mut Vec<u8>,
        tmp: &mut Vec<u8>,
    ) {
        if let Some(t) = x.trace.as_deref_mut() {
            t.pipeline(st.trace_id, &self.name, true);
        }
        self.run_nodes::<true>(tables, profiles, actions, st, x, key, tmp);
        if let Some(t) = x.trace.as_deref_mut() {
            t.pipeline(st.trace_id, &self.name, false);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn run_nodes<const TRACE: bool>(
        &self,
        tables: &mut [Table],
        profiles: &[ActionProfile],
        actions: &[Action],
        st: &mut PacketState,
        x: &mut Exec,
        key: &mut Vec<u8>,
        tmp: &mut Vec<u8>,
    ) {
        let mut node = self.init;
        while let Some(n) = node {
            if st.exited {
                return;
            }
            node = match n {
                NodeRef::Cond(i) => {
                    let c = &self.conds[i as usize];
                    let env = Env {
                        w: &st.w,
                        valid: &st.valid,
                        stack_next: &st.stack_next,
                        params: &[],
                        look: &[],
                    };
                    let v = c.expr.eval(&env) != 0;
                    if let Some(t) = x.trace.as_deref_mut().filter(|_| TRACE) {
                        t.condition(st.trace_id, &self.name, i as usize, v);
                    }
                    if v {
                        c.t
                    } else {
                        c.f
                    }
                }
                NodeRef::Table(i) => {
                    let tn = &self.nodes[i as usize];
                    let t = &mut tables[tn.table as usize];
                    t.build_key(st, key);
                    let mut found = t.lookup(key, tmp);
                    let mut picked = None;
                    if let Some(p) = t.profile {
                        (found, picked) = indirect(t, &profiles[p as usize], found, st, x);
                    }
                    let len = take(st, x.std.packet_length).unwrap_or(0);
                    let (with_counters, meter) = (t.with_counters, t.direct_meter);
                    let ages = t.support_timeout;
                    if let Some(e) = found.and_then(|h| t.entry_mut(h)) {
                        if with_counters {
                            e.counter.hit(len);
                        }
                        if ages {
                            e.last_hit = x.now;
                        }
                        if let Some(m) = meter {
                            let ma = &x.ext.meters[m as usize];
                            let units = if ma.packets { 1 } else { len };
                            let colour = e.meter.execute(units, x.now);
                            if let Some(f) = ma.result_target {
                                st.set(f, colour);
                            }
                        }
                    }
                    let t = &tables[tn.table as usize];
                    // in an indirect table `found` is None unless a member was picked
                    let (a, data): (Option<u32>, &[u64]) =
                        match (picked, found.and_then(|h| t.entry(h))) {
                            (Some(m), _) => (Some(m.action), &m.data),
                            (None, Some(e)) => (Some(e.action), &e.data),
                            (None, None) => (t.default_action, &t.default_data),
                        };
                    if let Some(tr) = x.trace.as_deref_mut().filter(|_| TRACE) {
                        let an = a.map_or("", |a| actions[a as usize].name.as_str());
                        let key: Vec<(&str, &[u8])> = t
                            .keys
                            .iter()
                            .map(|k| {
                                (
                                    k.name.as_str(),
                                    &key[k.off as usize..(k.off + k.len) as usize],
                                )
                            })
                            .collect();
                        tr.table(st.trace_id, &t.name, &key, found, an, data);
                    }
                    if let Some(a) = a {
                        action::run(&actions[a as usize].ops, data, &[], st, x);
                    }
                    match &tn.next {
                        NextMode::HitMiss { hit, miss } => {
                            if found.is_some() {
                                *hit
                            } else {
                                *miss
                            }
                        }
                        NextMode::ByAction(v) => a
                            .and_then(|a| t.actions.iter().position(|x| *x == a))
                            .map_or(tn.base_default_next, |p| v[p]),
                    }
                }
            };
        }
    }
}

/// An indirect table's lookup result as (entry, member to run): the member the entry names or
/// its group's selector picks, else the default member or group with no entry (an empty group
/// is a miss, as bmv2 finds no action either). Kept out of line: direct tables never call it.
#[inline(never)]
fn indirect<'p>(
    t: &Table,
    prof: &'p ActionProfile,
    found: Option<u32>,
    st: &PacketState,
    x: &mut Exec,
) -> (Option<u32>, Option<&'p Member>) {
    let target = found.and_then(|h| t.entry(h)).and_then(|e| e.target);
    if let Some(m) = target.and_then(|r| prof.resolve(r, st, x.scratch)) {
        return (found, Some(m));
    }
    if found.is_some() {
        x.stats.empty_group_misses += 1;
    }
    let default = t
        .default_target
        .and_then(|r| prof.resolve(r, st, x.scratch));
    (None, default)
}

#[cfg(test)]
mod tests;

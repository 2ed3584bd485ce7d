//! Loading a control from bmv2 JSON: its tables (keys, const entries, default actions, action
//! profiles) and conditionals linked into a graph, checked to be acyclic.

use super::{Cond, Control, Ctx, NextMode, NodeRef, TableNode};
use crate::action::Action;
use crate::expr::{self, Scope};
use crate::json::{self, err, label, R};
use crate::layout::FieldLoc;
use crate::profile::ActionProfile;
use crate::table::{KeyField, KeySrc, MatchKey, MatchKind, Table};
use serde_json::Value;
use std::collections::HashMap;

fn hexes(v: &Value, ctx: &str) -> R<Vec<Vec<u8>>> {
    let a = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
    a.iter()
        .map(|x| Ok(json::parse_hex(json::as_str(x, ctx)?, ctx)?.1))
        .collect()
}

/// Converts action data bytes into the action's parameter words.
pub fn encode_params(a: &Action, params: &[Vec<u8>]) -> Result<Vec<u64>, String> {
    if params.len() != a.params.len() {
        return Err(format!(
            "action {} takes {} parameters, got {}",
            a.name,
            a.params.len(),
            params.len()
        ));
    }
    let mut data = vec![0u64; a.data_words as usize];
    for (p, b) in a.params.iter().zip(params) {
        let n = crate::bits::words_for(p.width) as usize;
        let w = p.word as usize;
        if !crate::bits::bytes_to_words(b, p.width, &mut data[w..w + n]) {
            return Err(format!(
                "action {} parameter {}: value does not fit in {} bits",
                a.name, p.name, p.width
            ));
        }
    }
    Ok(data)
}

fn key_entry(m: &Value, kind: MatchKind, ctx: &str) -> R<MatchKey> {
    let h = |k: &str| -> R<Vec<u8>> {
        let (neg, b) = json::parse_hex(json::str_(m, k, ctx)?, ctx)?;
        if neg {
            return err(ctx, "negative match value");
        }
        Ok(b)
    };
    Ok(match kind {
        MatchKind::Exact => MatchKey::Exact(h("key")?),
        MatchKind::Lpm => {
            let p = json::u64_(m, "prefix_length", ctx)?;
            MatchKey::Lpm(h("key")?, u32::try_from(p).unwrap_or(u32::MAX))
        }
        MatchKind::Ternary => MatchKey::Ternary(h("key")?, h("mask")?),
        MatchKind::Range => MatchKey::Range(h("start")?, h("end")?),
        MatchKind::Optional => match json::opt(m, "mask") {
            Some(_) if h("mask")?.iter().all(|b| *b == 0) => MatchKey::Optional(None),
            _ => MatchKey::Optional(Some(h("key")?)),
        },
    })
}

/// The action profile of an `indirect` or `indirect_ws` table (index in `profiles`), None
/// for a `simple` table.
fn table_profile(
    t: &Value,
    ctx: &str,
    profiles: &[ActionProfile],
    by_name: &HashMap<String, u32>,
) -> R<Option<u32>> {
    let ty = json::opt_str(t, "type", ctx)?.unwrap_or("simple");
    if ty == "simple" {
        return Ok(None);
    }
    if ty != "indirect" && ty != "indirect_ws" {
        return err(ctx, format!("table type \"{ty}\" not supported"));
    }
    let ap = json::str_(t, "action_profile", ctx)?;
    let Some(i) = by_name.get(ap) else {
        return err(ctx, format!("unknown action profile \"{ap}\""));
    };
    if (ty == "indirect_ws") != profiles[*i as usize].selector.is_some() {
        return err(
            ctx,
            format!("table type \"{ty}\" does not fit action profile \"{ap}\""),
        );
    }
    if !json::arr_or_empty(t, "entries", ctx)?.is_empty() {
        return err(ctx, "const entries in an indirect table not supported");
    }
    Ok(Some(*i))
}

/// Loads one table (its static part, default entry and const entries).
fn load_table(t: &Value, ctx: &str, c: &Ctx) -> R<Table> {
    let name = json::str_(t, "name", ctx)?.to_string();
    let mut keys = Vec::new();
    let mut off = 0;
    for k in json::arr_or_empty(t, "key", ctx)? {
        let kind = match json::str_(k, "match_type", ctx)? {
            "exact" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            "range" => MatchKind::Range,
            "optional" => MatchKind::Optional,
            m => return err(ctx, format!("match type \"{m}\" not supported")),
        };
        let (src, width) = match c.layout.resolve(json::get(k, "target", ctx)?, ctx)? {
            FieldLoc::Field(f) => (
                KeySrc::Field {
                    word: f.word,
                    width: f.width,
                },
                f.width,
            ),
            FieldLoc::Valid(h) => (KeySrc::Valid(h), 1),
        };
        let kname = json::opt_str(k, "name", ctx)?.unwrap_or("").to_string();
        let len = width.div_ceil(8);
        let mask = match json::opt_str(k, "mask", ctx)? {
            None => None,
            Some(m) => {
                let (neg, bytes) = json::parse_hex(m, ctx)?;
                let mut words = vec![0u64; crate::bits::words_for(width) as usize];
                if neg || !crate::bits::bytes_to_words(&bytes, width, &mut words) {
                    return err(
                        ctx,
                        format!("key mask {m} does not fit the {width}-bit field"),
                    );
                }
                let mut out = Vec::with_capacity(len as usize);
                crate::bits::words_to_bytes(&words, width, &mut out);
                Some(out.into_boxed_slice())
            }
        };
        keys.push(KeyField {
            name: kname,
            kind,
            src,
            width,
            off,
            len,
            mask,
        });
        off += len;
    }
    if keys.iter().filter(|k| k.kind == MatchKind::Lpm).count() > 1 {
        return err(ctx, "more than one lpm key field");
    }
    let ids = json::arr(t, "action_ids", ctx)?;
    let mut actions = Vec::new();
    for id in ids {
        let id = json::as_u64(id, ctx)?;
        match c.action_by_id.get(&id) {
            Some(a) => actions.push(*a),
            None => return err(ctx, format!("unknown action id {id}")),
        }
    }
    let max_size = json::opt(t, "max_size")
        .and_then(Value::as_u64)
        .unwrap_or(1024);
    let with_counters = json::bool_or(t, "with_counters", false, ctx)?;
    let direct_meter = match json::opt_str(t, "direct_meters", ctx)? {
        None => None,
        Some(m) => match c.externs.meter_by_name.get(m) {
            Some(i) => Some(*i),
            None => return err(ctx, format!("unknown direct meter \"{m}\"")),
        },
    };
    let id = json::opt(t, "id").and_then(Value::as_u64).unwrap_or(0);
    let mut table = Table::new(
        name,
        id,
        keys,
        actions,
        max_size,
        with_counters,
        direct_meter,
    );
    let allowed = table.actions.clone();
    let act = |id: u64| -> R<u32> {
        match c.action_by_id.get(&id) {
            Some(a) if allowed.contains(a) => Ok(*a),
            _ => err(
                ctx,
                format!("action id {id} is not an action of this table"),
            ),
        }
    };
    if let Some(d) = json::opt(t, "default_entry") {
        let a = act(json::u64_(d, "action_id", ctx)?)?;
        let data = hexes(json::get(d, "action_data", ctx)?, ctx)?;
        table.default_data =
            encode_params(&c.actions[a as usize], &data).or_else(|m| err(ctx, m))?;
        table.default_action = Some(a);
        table.default_const = json::bool_or(d, "action_const", false, ctx)?;
    }
    let entries = json::arr_or_empty(t, "entries", ctx)?;
    for (i, e) in entries.iter().enumerate() {
        let ectx = format!("{ctx} entries[{i}]");
        let mk = json::arr(e, "match_key", &ectx)?;
        if mk.len() != table.keys.len() {
            return err(&ectx, "match_key length differs from the table key");
        }
        let keys = mk
            .iter()
            .zip(&table.keys)
            .map(|(m, kf)| key_entry(m, kf.kind, &ectx))
            .collect::<R<Vec<_>>>()?;
        let ae = json::get(e, "action_entry", &ectx)?;
        let a = act(json::u64_(ae, "action_id", &ectx)?)?;
        let data = hexes(json::get(ae, "action_data", &ectx)?, &ectx)?;
        let data = encode_params(&c.actions[a as usize], &data).or_else(|m| err(&ectx, m))?;
        // bmv2 const entry priorities: lower value wins; ours: higher wins
        let prio = json::opt(e, "priority")
            .and_then(Value::as_i64)
            .unwrap_or(i as i64);
        let prio = i32::MAX - i32::try_from(prio.clamp(0, i64::from(i32::MAX))).unwrap_or(0);
        if table.len() as u64 >= table.max_size {
            table.max_size = table.len() as u64 + 1;
        }
        table
            .insert(&keys, a, data, prio)
            .or_else(|e| err(&ectx, e.to_string()))?;
    }
    table.is_const = !entries.is_empty();
    Ok(table)
}

fn node_of(v: Option<&Value>, names: &HashMap<String, NodeRef>, ctx: &str) -> R<Option<NodeRef>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => match names.get(s) {
            Some(n) => Ok(Some(*n)),
            None => err(ctx, format!("unknown next node \"{s}\"")),
        },
        Some(_) => err(ctx, "next node must be a string or null"),
    }
}

impl Control {
    /// Loads a pipeline; its tables and action profiles are appended to `tables` and
    /// `profiles`.
    pub fn load(
        p: &Value,
        pctx: &str,
        c: &Ctx,
        tables: &mut Vec<Table>,
        profiles: &mut Vec<ActionProfile>,
    ) -> R<Control> {
        let name = json::str_(p, "name", pctx)?.to_string();
        let mut profile_by_name = HashMap::new();
        for (i, ap) in json::arr_or_empty(p, "action_profiles", pctx)?
            .iter()
            .enumerate()
        {
            let actx = format!("{pctx} {}", label("action_profiles", i, ap));
            let prof = ActionProfile::load(ap, c.layout, &actx)?;
            if profile_by_name
                .insert(prof.name.clone(), profiles.len() as u32)
                .is_some()
            {
                return err(&actx, "duplicate action profile name");
            }
            profiles.push(prof);
        }
        let tjs = json::arr(p, "tables", pctx)?;
        let cjs = json::arr_or_empty(p, "conditionals", pctx)?;
        let mut names = HashMap::new();
        for (i, t) in tjs.iter().enumerate() {
            names.insert(
                json::str_(t, "name", pctx)?.to_string(),
                NodeRef::Table(i as u32),
            );
        }
        for (i, x) in cjs.iter().enumerate() {
            names.insert(
                json::str_(x, "name", pctx)?.to_string(),
                NodeRef::Cond(i as u32),
            );
        }
        let mut nodes = Vec::new();
        for (i, t) in tjs.iter().enumerate() {
            let ctx = format!("{pctx} {}", label("tables", i, t));
            let mut table = load_table(t, &ctx, c)?;
            table.support_timeout = json::bool_or(t, "support_timeout", false, &ctx)?;
            table.profile = table_profile(t, &ctx, profiles, &profile_by_name)?;
            if let Some(ap) = table.profile {
                let acts = &mut profiles[ap as usize].actions;
                for a in &table.actions {
                    if !acts.contains(a) {
                        acts.push(*a);
                    }
                }
            }
            let nt = json::get(t, "next_tables", &ctx)?;
            let Some(map) = nt.as_object() else {
                return err(&ctx, "next_tables must be an object");
            };
            let next = if map.contains_key("__HIT__") || map.contains_key("__MISS__") {
                NextMode::HitMiss {
                    hit: node_of(map.get("__HIT__"), &names, &ctx)?,
                    miss: node_of(map.get("__MISS__"), &names, &ctx)?,
                }
            } else {
                let anames = json::arr(t, "actions", &ctx)?;
                if anames.len() != table.actions.len() {
                    return err(&ctx, "\"actions\" and \"action_ids\" differ in length");
                }
                let mut v = Vec::new();
                for a in anames {
                    let an = json::as_str(a, &ctx)?;
                    v.push(node_of(map.get(an), &names, &ctx)?);
                }
                NextMode::ByAction(v)
            };
            let base_default_next = node_of(t.get("base_default_next"), &names, &ctx)?;
            nodes.push(TableNode {
                table: tables.len() as u32,
                next,
                base_default_next,
            });
            tables.push(table);
        }
        let scope = Scope {
            layout: c.layout,
            params: &[],
            lookahead: false,
        };
        let mut conds = Vec::new();
        for (i, x) in cjs.iter().enumerate() {
            let ctx = format!("{pctx} {}", label("conditionals", i, x));
            conds.push(Cond {
                expr: expr::compile(json::get(x, "expression", &ctx)?, &scope, &ctx)?,
                t: node_of(x.get("true_next"), &names, &ctx)?,
                f: node_of(x.get("false_next"), &names, &ctx)?,
            });
        }
        let init = node_of(p.get("init_table"), &names, pctx)?;
        let ctl = Control {
            name,
            init,
            nodes,
            conds,
        };
        ctl.check_acyclic(pctx)?;
        Ok(ctl)
    }

    fn successors(&self, n: NodeRef) -> Vec<NodeRef> {
        match n {
            NodeRef::Cond(i) => {
                let c = &self.conds[i as usize];
                [c.t, c.f].into_iter().flatten().collect()
            }
            NodeRef::Table(i) => {
                let t = &self.nodes[i as usize];
                let mut v: Vec<NodeRef> = match &t.next {
                    NextMode::ByAction(x) => x.iter().flatten().copied().collect(),
                    NextMode::HitMiss { hit, miss } => {
                        [*hit, *miss].into_iter().flatten().collect()
                    }
                };
                v.extend(t.base_default_next);
                v
            }
        }
    }

    /// Refuses loops in the control graph, so every packet visits each node at most once.
    fn check_acyclic(&self, ctx: &str) -> R<()> {
        let idx = |n: NodeRef| match n {
            NodeRef::Table(i) => i as usize,
            NodeRef::Cond(i) => self.nodes.len() + i as usize,
        };
        let mut colour = vec![0u8; self.nodes.len() + self.conds.len()];
        let mut stack: Vec<(NodeRef, bool)> = self.init.into_iter().map(|n| (n, false)).collect();
        while let Some((n, done)) = stack.pop() {
            let k = idx(n);
            if done {
                colour[k] = 2;
                continue;
            }
            match colour[k] {
                1 => return err(ctx, "control graph has a loop"),
                2 => continue,
                _ => {}
            }
            colour[k] = 1;
            stack.push((n, true));
            for s in self.successors(n) {
                match colour[idx(s)] {
                    1 => return err(ctx, "control graph has a loop"),
                    2 => {}
                    _ => stack.push((s, false)),
                }
            }
        }
        Ok(())
    }
}

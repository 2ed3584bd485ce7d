//! Multicast commands on the command port, in simple_switch_CLI's grammar (`mc_mgrp_create`,
//! `mc_node_create RID PORT...`, ...), plus whole-group commands for P4Runtime's
//! MulticastGroupEntry (`mc_group_insert MGID PORT:RID...`, `mc_group_modify`,
//! `mc_group_delete`) and `mc_dump_json` for programs.

use std::fmt::Write;

use super::{Answer, AnswerR};
use crate::dataplane::Dataplane;

type R = Result<String, String>;

/// Run a multicast command (`cmd` starts with `mc_`); None if `cmd` is not one.
pub fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<AnswerR> {
    let pre = &mut dp.pre;
    Some(match cmd {
        "mc_mgrp_create" => one(args, "mc_mgrp_create MGID").and_then(|m| {
            let h = pre.mgrp_create(m)?;
            let text = format!("multicast group {m} was created with handle {h}");
            Ok(Answer::created(h, text))
        }),
        "mc_node_create" => match args.split_first() {
            Some((rid, ports)) => num(rid).and_then(|rid| {
                let h = pre.node_create(rid, &port_list(ports)?)?;
                let text = format!("node was created with handle {h}");
                Ok(Answer::created(h, text))
            }),
            None => Err("mc_node_create RID PORT...".into()),
        },
        _ => return edit(dp, cmd, args).map(|r| r.map(Answer::from)),
    })
}

/// The multicast commands that create nothing.
fn edit(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    let pre = &mut dp.pre;
    Some(match cmd {
        "mc_mgrp_destroy" => one(args, "mc_mgrp_destroy MGID")
            .and_then(|m| Ok(pre.mgrp_destroy(m)?))
            .map(|()| String::new()),
        "mc_node_update" => match args.split_first() {
            Some((h, ports)) => num(h)
                .and_then(|h| Ok(pre.node_update(h, &port_list(ports)?)?))
                .map(|()| String::new()),
            None => Err("mc_node_update NODE_HANDLE PORT...".into()),
        },
        "mc_node_associate" => two(args, "mc_node_associate MGID NODE_HANDLE")
            .and_then(|(m, h)| Ok(pre.node_associate(m, h)?))
            .map(|()| String::new()),
        "mc_node_dissociate" => two(args, "mc_node_dissociate MGID NODE_HANDLE")
            .and_then(|(m, h)| Ok(pre.node_dissociate(m, h)?))
            .map(|()| String::new()),
        "mc_node_destroy" => one(args, "mc_node_destroy NODE_HANDLE")
            .and_then(|h| Ok(pre.node_destroy(h)?))
            .map(|()| String::new()),
        "mc_group_insert" | "mc_group_modify" => match args.split_first() {
            Some((m, reps)) => num(m).and_then(|m| {
                let reps = replica_list(reps)?;
                pre.group_set(m, &reps, cmd == "mc_group_insert")?;
                Ok(String::new())
            }),
            None => Err(format!("{cmd} MGID PORT:RID...")),
        },
        "mc_group_delete" => one(args, "mc_group_delete MGID")
            .and_then(|m| Ok(pre.group_delete(m)?))
            .map(|()| String::new()),
        "mc_dump" => Ok(dump(dp)),
        "mc_dump_json" => Ok(dump_json(dp)),
        "mc_set_lag_membership" => {
            Err("mc_set_lag_membership: LAGs are not supported (name the ports in the node)".into())
        }
        _ => return None,
    })
}

/// What the multicast commands are, for `help`.
pub const HELP: &str = "mc_mgrp_create MGID | mc_mgrp_destroy MGID | mc_node_create RID PORT... | \
mc_node_update NODE_HANDLE PORT... | mc_node_associate MGID NODE_HANDLE | mc_node_dissociate MGID NODE_HANDLE | \
mc_node_destroy NODE_HANDLE | mc_group_insert MGID PORT:RID... | mc_group_modify MGID PORT:RID... | \
mc_group_delete MGID | mc_dump | mc_dump_json";

fn num(s: &str) -> Result<u32, String> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.map_err(|_| format!("'{s}' is not a number"))
}

fn one(args: &[&str], usage: &str) -> Result<u32, String> {
    match args {
        [a] => num(a),
        _ => Err(usage.to_string()),
    }
}

fn two(args: &[&str], usage: &str) -> Result<(u32, u32), String> {
    match args {
        [a, b] => Ok((num(a)?, num(b)?)),
        _ => Err(usage.to_string()),
    }
}

/// Ports of a node; simple_switch_CLI's `| LAG...` part is refused (no LAGs here).
fn port_list(words: &[&str]) -> Result<Vec<u32>, String> {
    if words.contains(&"|") {
        let lags = words.iter().skip_while(|w| **w != "|").skip(1);
        if lags.count() > 0 {
            return Err("LAGs are not supported (name the ports in the node)".into());
        }
    }
    words
        .iter()
        .filter(|w| **w != "|")
        .map(|w| num(w))
        .collect()
}

fn replica_list(words: &[&str]) -> Result<Vec<(u32, u32)>, String> {
    words
        .iter()
        .map(|w| {
            let (p, r) = w
                .split_once(':')
                .ok_or_else(|| format!("replica '{w}' is not PORT:RID"))?;
            Ok((num(p)?, num(r)?))
        })
        .collect()
}

/// Groups and their nodes, laid out as simple_switch_CLI's `mc_dump` shows them.
fn dump(dp: &Dataplane) -> String {
    let mut out = String::from("==========\nMC ENTRIES\n");
    for (mgid, nodes) in dp.pre.groups() {
        let _ = writeln!(out, "**********\nmgrp({mgid})");
        for h in nodes {
            if let Some(n) = dp.pre.node(*h) {
                let _ = writeln!(
                    out,
                    "  -> (L1h={h}, rid={}) -> (ports={:?}, lags=[])",
                    n.rid, n.ports
                );
            }
        }
    }
    out.push_str("==========\nLAGS\n==========");
    out
}

/// Groups and nodes as one JSON object: {"groups": [{"mgid", "nodes"}], "nodes": [{"handle",
/// "rid", "ports", "group"}]}.
fn dump_json(dp: &Dataplane) -> String {
    let groups: Vec<_> = dp
        .pre
        .groups()
        .map(|(m, nodes)| serde_json::json!({"mgid": m, "nodes": nodes}))
        .collect();
    let nodes: Vec<_> = dp
        .pre
        .nodes()
        .map(|(h, n)| {
            serde_json::json!({"handle": h, "rid": n.rid, "ports": n.ports, "group": n.group})
        })
        .collect();
    serde_json::json!({"groups": groups, "nodes": nodes}).to_string()
}

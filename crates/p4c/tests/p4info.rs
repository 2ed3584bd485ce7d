//! The P4Info lanes p4c writes for each program in p4/ says what the hand-written P4Info said
//! (kept in tests/data/handwritten): the same tables with the same match fields, sizes, action
//! references and direct resources, the same actions and parameters, counters, meters,
//! registers and controller packet metadata. Ids differ on purpose: the compiler assigns
//! p4c's (kind byte + hash of the name), the hand-written files counted from 1. The actions a
//! program calls directly (not through a table), which p4c lists too, were appended to the
//! hand-written files at the end, with the compiler's ids.

mod common;
use common::*;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone)]
enum V {
    S(String),
    N(Vec<(String, V)>),
}

fn parse(text: &str) -> Vec<(String, V)> {
    let mut stack: Vec<(String, Vec<(String, V)>)> = vec![(String::new(), Vec::new())];
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(k) = line.strip_suffix(" {") {
            stack.push((k.to_string(), Vec::new()));
        } else if line == "}" {
            let (k, n) = stack.pop().unwrap();
            stack.last_mut().unwrap().1.push((k, V::N(n)));
        } else if let Some((k, v)) = line.split_once(": ") {
            stack
                .last_mut()
                .unwrap()
                .1
                .push((k.to_string(), V::S(v.to_string())));
        }
    }
    stack.pop().unwrap().1
}

fn get<'a>(n: &'a [(String, V)], k: &str) -> Vec<&'a V> {
    n.iter().filter(|(x, _)| x == k).map(|(_, v)| v).collect()
}

fn s(v: &V) -> String {
    match v {
        V::S(s) => s.clone(),
        V::N(n) => n
            .iter()
            .map(|(k, v)| format!("{k}={}", s(v)))
            .collect::<Vec<_>>()
            .join(","),
    }
}

fn node(v: &V) -> &[(String, V)] {
    match v {
        V::N(n) => n,
        V::S(_) => &[],
    }
}

/// Every entity as a line with ids replaced by names.
fn canonical(text: &str) -> BTreeSet<String> {
    let top = parse(text);
    let mut names: HashMap<String, String> = HashMap::new();
    for (_, v) in &top {
        for p in get(node(v), "preamble") {
            let id = s(get(node(p), "id")[0]);
            names.insert(id, s(get(node(p), "name")[0]));
        }
    }
    let name = |id: &str| names.get(id).cloned().unwrap_or_else(|| format!("?{id}"));
    let mut out = BTreeSet::new();
    for (kind, v) in &top {
        // two hand-written files left out the empty type_info and NoAction's @noWarn("unused")
        // that p4c writes (and tm_basic's has): not compared
        if kind == "type_info" {
            continue;
        }
        let n = node(v);
        let mut parts = vec![kind.clone()];
        // the hand-written files predate P4Runtime 1.4's initial_default_action (tested in
        // p4info_defaults.rs)
        for (k, x) in n.iter().filter(|(k, _)| k != "initial_default_action") {
            let text = match (k.as_str(), x) {
                ("preamble", p) => {
                    let p = node(p);
                    let anns: Vec<String> = get(p, "annotations").iter().map(|a| s(a)).collect();
                    let anns: Vec<String> = anns
                        .into_iter()
                        .filter(|a| a != "\"@noWarn(\\\"unused\\\")\"")
                        .collect();
                    format!(
                        "{} {} {}",
                        s(get(p, "name")[0]),
                        s(get(p, "alias")[0]),
                        anns.join(" ")
                    )
                }
                ("action_refs", r) => {
                    let r = node(r);
                    let scope = get(r, "scope").first().map(|x| s(x)).unwrap_or_default();
                    format!("action {} {scope}", name(&s(get(r, "id")[0])))
                }
                (
                    "const_default_action_id" | "direct_resource_ids" | "direct_table_id",
                    V::S(id),
                ) => format!("{k} {}", name(id)),
                (_, x) => format!("{k} {}", s(x)),
            };
            parts.push(text);
        }
        // order of action refs does not matter to P4Runtime
        let (head, mut rest): (Vec<String>, Vec<String>) =
            parts.into_iter().partition(|p| !p.starts_with("action "));
        rest.sort();
        out.insert(format!("{} | {}", head.join(" | "), rest.join(" | ")));
    }
    out
}

fn check(name: &str) {
    let ours = compile(name).p4info;
    let path = format!(
        "{}/tests/data/handwritten/{name}.p4info.txtpb",
        env!("CARGO_MANIFEST_DIR")
    );
    let theirs = std::fs::read_to_string(path).unwrap();
    let (a, b) = (canonical(&ours), canonical(&theirs));
    assert!(a.len() > 3, "{name}: {a:?}");
    assert_eq!(a, b, "{name}: P4Info differs");
}

#[test]
fn tm_basic_p4info() {
    check("tm_basic");
}

#[test]
fn l3_basic_p4info() {
    check("l3_basic");
}

#[test]
fn nas_p4info() {
    check("nas");
}

#[test]
fn nas_inband_p4info() {
    check("nas_inband");
}

#[test]
fn p4rt_test_p4info() {
    check("p4rt_test");
}

/// p4c's ids: kind byte, then the low 24 bits of the name's one-at-a-time hash.
#[test]
fn ids_are_p4cs() {
    let info = compile("tm_basic").p4info;
    let top = parse(&info);
    for (kind, v) in &top {
        for p in get(node(v), "preamble") {
            let id: u32 = s(get(node(p), "id")[0]).parse().unwrap();
            let nm = s(get(node(p), "name")[0]).trim_matches('"').to_string();
            let prefix = match kind.as_str() {
                "tables" => 0x02,
                "actions" => 0x01,
                _ => continue,
            };
            assert_eq!(
                id,
                (prefix << 24) | (lanes_p4c::ids::jenkins(&nm) & 0xff_ffff),
                "{nm}"
            );
        }
    }
    assert!(info.contains("id: 37375156\n    name: \"MyIngress.ipv4_lpm\""));
    assert!(info.contains("id: 21257015\n    name: \"NoAction\""));
}

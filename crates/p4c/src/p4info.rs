//! P4Info in protobuf text format (p4.config.v1.P4Info), as p4c writes it for v1model: tables,
//! actions, counters, meters, registers and controller packet metadata, ids from `ids`.

use crate::ast::annotation;
use crate::diag::{fail, Loc, Res};
use crate::env::Env;
use crate::ids::{self, Ids};
use crate::lower::Lowerer;
use std::collections::HashMap;
use std::fmt::Write;

mod parts;
use parts::*;

pub fn write(l: &Lowerer, env: &Env) -> Res<String> {
    let mut ids = Ids::default();
    // user tables and the actions they offer (p4c leaves synthesized ones out)
    let tables: Vec<_> = l
        .p4_tables
        .iter()
        .filter(|t| annotation(&t.annotations, "hidden").is_none())
        .collect();
    let mut action_names: Vec<String> = Vec::new();
    for t in &tables {
        for (a, _) in &t.actions {
            if !action_names.contains(a) {
                action_names.push(a.clone());
            }
        }
    }
    // actions only called directly are listed too, as p4c does (their directionless parameters)
    let called: HashMap<&str, &crate::ast::ActionDecl> = l
        .called_actions
        .iter()
        .map(|(n, d)| (n.as_str(), d))
        .collect();
    for (a, _) in &l.called_actions {
        if !action_names.contains(a) {
            action_names.push(a.clone());
        }
    }
    let empty = Vec::new();
    let action_anns = |a: &str| {
        l.action_annotations
            .get(a)
            .or_else(|| called.get(a).map(|d| &d.annotations))
            .unwrap_or(&empty)
    };
    let mut externs: Vec<Extern> = Vec::new();
    for c in &l.counters {
        let direct = c["is_direct"] == true;
        externs.push(Extern {
            name: c["name"].as_str().unwrap_or("").into(),
            kind: if direct {
                "direct_counters"
            } else {
                "counters"
            },
            json: c.clone(),
        });
    }
    for m in &l.meters {
        let direct = m["is_direct"] == true;
        externs.push(Extern {
            name: m["name"].as_str().unwrap_or("").into(),
            kind: if direct { "direct_meters" } else { "meters" },
            json: m.clone(),
        });
    }
    for r in &l.registers {
        externs.push(Extern {
            name: r["name"].as_str().unwrap_or("").into(),
            kind: "registers",
            json: r.clone(),
        });
    }
    let ctrl_headers: Vec<(String, String)> = env
        .header_order
        .iter()
        .filter_map(|h| {
            let a = annotation(env.header_annotations.get(h)?, "controller_header")?;
            Some((h.clone(), a.body.trim_matches('"').to_string()))
        })
        .collect();

    // @id annotations first, then hashes, kind by kind
    let mut table_ids = HashMap::new();
    let mut action_ids = HashMap::new();
    for t in &tables {
        if let Some(v) = fixed_id(&t.annotations)? {
            table_ids.insert(t.name.clone(), ids.fixed(ids::TABLE, v));
        }
    }
    for a in &action_names {
        if let Some(v) = fixed_id(action_anns(a))? {
            action_ids.insert(a.clone(), ids.fixed(ids::ACTION, v));
        }
    }
    for t in &tables {
        if !table_ids.contains_key(&t.name) {
            table_ids.insert(t.name.clone(), ids.assign(ids::TABLE, &t.name));
        }
    }
    for a in &action_names {
        if !action_ids.contains_key(a) {
            action_ids.insert(a.clone(), ids.assign(ids::ACTION, a));
        }
    }
    let kind_prefix = |k: &str| match k {
        "counters" => ids::COUNTER,
        "direct_counters" => ids::DIRECT_COUNTER,
        "meters" => ids::METER,
        "direct_meters" => ids::DIRECT_METER,
        _ => ids::REGISTER,
    };
    let mut extern_ids = HashMap::new();
    for x in &externs {
        if let Some(v) = fixed_id(l.extern_annotations.get(&x.name).unwrap_or(&empty))? {
            extern_ids.insert(x.name.clone(), ids.fixed(kind_prefix(x.kind), v));
        }
    }
    for x in &externs {
        if !extern_ids.contains_key(&x.name) {
            extern_ids.insert(x.name.clone(), ids.assign(kind_prefix(x.kind), &x.name));
        }
    }
    let mut ctrl_ids = HashMap::new();
    for (h, n) in &ctrl_headers {
        if let Some(v) = fixed_id(env.header_annotations.get(h).unwrap_or(&empty))? {
            ctrl_ids.insert(n.clone(), ids.fixed(ids::CONTROLLER_HEADER, v));
        }
    }
    for (_, n) in &ctrl_headers {
        if !ctrl_ids.contains_key(n) {
            ctrl_ids.insert(n.clone(), ids.assign(ids::CONTROLLER_HEADER, n));
        }
    }

    let mut profile_ids = HashMap::new();
    for p in &l.profiles {
        if let Some(v) = fixed_id(&p.annotations)? {
            profile_ids.insert(p.name.clone(), ids.fixed(ids::ACTION_PROFILE, v));
        }
    }
    for p in &l.profiles {
        if !profile_ids.contains_key(&p.name) {
            profile_ids.insert(p.name.clone(), ids.assign(ids::ACTION_PROFILE, &p.name));
        }
    }
    let vset_ids: Vec<(u32, &serde_json::Value)> = l
        .value_sets
        .iter()
        .map(|v| {
            (
                ids.assign(ids::VALUE_SET, v["name"].as_str().unwrap_or("")),
                v,
            )
        })
        .collect();
    let digest_ids: HashMap<String, u32> = l
        .digests
        .iter()
        .map(|d| (d.name.clone(), ids.assign(ids::DIGEST, &d.name)))
        .collect();

    let mut all_names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    all_names.extend(action_names.iter().cloned());
    all_names.extend(externs.iter().map(|x| x.name.clone()));
    all_names.extend(l.profiles.iter().map(|p| p.name.clone()));
    all_names.extend(
        l.value_sets
            .iter()
            .filter_map(|v| v["name"].as_str().map(str::to_string)),
    );

    let arch = if crate::arch::is_psa(env) {
        "psa"
    } else {
        "v1model"
    };
    let mut out = format!("pkg_info {{\n  arch: \"{arch}\"\n}}\n");
    let mut used_types: Vec<String> = Vec::new();
    let mut sorted_tables = tables.clone();
    sorted_tables.sort_by_key(|t| table_ids[&t.name]);
    for t in sorted_tables {
        out.push_str("tables {\n");
        preamble(
            &mut out,
            table_ids[&t.name],
            &t.name,
            &all_names,
            &shown(&t.annotations),
        );
        for (i, (k, w, mk, tn)) in t.keys.iter().enumerate() {
            let _ = write!(out, "  match_fields {{\n    id: {}\n    name: {}\n    bitwidth: {}\n    match_type: {}\n", i + 1, quote(k), sdn_width(env, tn, *w), mk.to_uppercase());
            type_name(&mut out, tn, &mut used_types);
            out.push_str("  }\n");
        }
        for (a, anns) in &t.actions {
            let _ = write!(out, "  action_refs {{\n    id: {}\n", action_ids[a]);
            // text format prints fields by number: annotations (2) before scope (3)
            for s in anns.iter().map(|a| format!("@{}", a.name)) {
                let _ = writeln!(out, "    annotations: {}", quote(&s));
            }
            if annotation(anns, "defaultonly").is_some() {
                out.push_str("    scope: DEFAULT_ONLY\n");
            } else if annotation(anns, "tableonly").is_some() {
                out.push_str("    scope: TABLE_ONLY\n");
            }
            out.push_str("  }\n");
        }
        if let Some(d) = &t.const_default {
            let _ = writeln!(out, "  const_default_action_id: {}", action_ids[d]);
        }
        if let Some((a, data)) = &t.initial_default {
            let _ = write!(
                out,
                "  initial_default_action {{\n    action_id: {}\n",
                action_ids[a]
            );
            for (i, hex) in data.iter().enumerate() {
                let width = param_width(l, a, i);
                let _ = write!(
                    out,
                    "    arguments {{\n      param_id: {}\n      value: {}\n    }}\n",
                    i + 1,
                    octets(hex.as_str().unwrap_or("0x0"), width)
                );
            }
            out.push_str("  }\n");
        }
        if let Some(p) = &t.implementation {
            let _ = writeln!(out, "  implementation_id: {}", profile_ids[p]);
        }
        for d in t.direct_counter.iter().chain(&t.direct_meter) {
            let _ = writeln!(out, "  direct_resource_ids: {}", extern_ids[d]);
        }
        let _ = writeln!(out, "  size: {}", t.size);
        if t.is_const {
            // only `const entries` compile, so the initial entries are the const ones
            out.push_str("  is_const_table: true\n  has_initial_entries: true\n");
        }
        out.push_str("}\n");
    }
    let mut sorted_actions = action_names.clone();
    sorted_actions.sort_by_key(|a| action_ids[a]);
    for a in &sorted_actions {
        out.push_str("actions {\n");
        preamble(
            &mut out,
            action_ids[a],
            a,
            &all_names,
            &shown(action_anns(a)),
        );
        let params = l
            .action_id(a)
            .and_then(|i| l.actions.get(i as usize))
            .map(|j| j["runtime_data"].clone())
            .or_else(|| called.get(a.as_str()).map(|d| called_params(env, d)));
        for (i, p) in params
            .iter()
            .flat_map(|p| p.as_array().cloned().unwrap_or_default())
            .enumerate()
        {
            let tn = l
                .action_param_types
                .get(a)
                .and_then(|v| v.get(i))
                .cloned()
                .flatten();
            let w = p["bitwidth"].as_u64().unwrap_or(0) as u32;
            let _ = write!(
                out,
                "  params {{\n    id: {}\n    name: {}\n    bitwidth: {}\n",
                i + 1,
                quote(p["name"].as_str().unwrap_or("")),
                sdn_width(env, &tn, w)
            );
            type_name(&mut out, &tn, &mut used_types);
            out.push_str("  }\n");
        }
        out.push_str("}\n");
    }
    let mut profiles: Vec<_> = l.profiles.iter().filter(|p| !p.tables.is_empty()).collect();
    profiles.sort_by_key(|p| profile_ids[&p.name]);
    for p in profiles {
        out.push_str("action_profiles {\n");
        preamble(&mut out, profile_ids[&p.name], &p.name, &all_names, &[]);
        for t in &p.tables {
            if let Some(id) = table_ids.get(t) {
                let _ = writeln!(out, "  table_ids: {id}");
            }
        }
        if p.with_selector {
            out.push_str("  with_selector: true\n");
        }
        let _ = writeln!(out, "  size: {}", p.size);
        out.push_str("}\n");
    }
    for kind in ["counters", "direct_counters", "meters", "direct_meters"] {
        let mut xs: Vec<&Extern> = externs.iter().filter(|x| x.kind == kind).collect();
        xs.sort_by_key(|x| extern_ids[&x.name]);
        for x in xs {
            let _ = writeln!(out, "{kind} {{");
            preamble(&mut out, extern_ids[&x.name], &x.name, &all_names, &[]);
            let unit = if kind.contains("counter") {
                match x.json["unit"].as_str() {
                    Some("packets") => "PACKETS",
                    Some("bytes") => "BYTES",
                    _ => "BOTH",
                }
            } else if x.json["type"] == "packets" {
                "PACKETS"
            } else {
                "BYTES"
            };
            let _ = writeln!(out, "  spec {{\n    unit: {unit}\n  }}");
            if kind.starts_with("direct") {
                let bound = x.json["binding"].as_str().unwrap_or("");
                match table_ids.get(bound) {
                    Some(t) => {
                        let _ = writeln!(out, "  direct_table_id: {t}");
                    }
                    None => {
                        return fail(
                            Loc::default(),
                            format!("{} is not attached to any table", x.name),
                        )
                    }
                }
            } else {
                let _ = writeln!(out, "  size: {}", x.json["size"]);
            }
            out.push_str("}\n");
        }
    }
    let mut sorted_ctrl = ctrl_headers.clone();
    sorted_ctrl.sort_by_key(|(_, n)| ctrl_ids[n]);
    for (h, n) in &sorted_ctrl {
        out.push_str("controller_packet_metadata {\n");
        let anns = vec![format!("@controller_header({})", quote(n))];
        let _ = writeln!(
            out,
            "  preamble {{\n    id: {}\n    name: {}\n    alias: {}",
            ctrl_ids[n],
            quote(n),
            quote(n)
        );
        for a in &anns {
            let _ = writeln!(out, "    annotations: {}", quote(a));
        }
        out.push_str("  }\n");
        for (i, f) in env.header_fields(h).iter().enumerate() {
            let _ = writeln!(
                out,
                "  metadata {{\n    id: {}\n    name: {}\n    bitwidth: {}\n  }}",
                i + 1,
                quote(&f.name),
                f.ty.width().unwrap_or(0)
            );
        }
        out.push_str("}\n");
    }
    let mut vsets = vset_ids.clone();
    vsets.sort_by_key(|(id, _)| *id);
    for (id, v) in vsets {
        out.push_str("value_sets {\n");
        preamble(
            &mut out,
            id,
            v["name"].as_str().unwrap_or(""),
            &all_names,
            &[],
        );
        let _ = writeln!(
            out,
            "  match {{\n    id: 1\n    bitwidth: {}\n    match_type: EXACT\n  }}\n  size: {}",
            v["compressed_bitwidth"], v["max_size"]
        );
        out.push_str("}\n");
    }
    let mut regs: Vec<&Extern> = externs.iter().filter(|x| x.kind == "registers").collect();
    regs.sort_by_key(|x| extern_ids[&x.name]);
    for x in regs {
        out.push_str("registers {\n");
        preamble(&mut out, extern_ids[&x.name], &x.name, &all_names, &[]);
        let _ = writeln!(out, "  type_spec {{\n    bitstring {{\n      bit {{\n        bitwidth: {}\n      }}\n    }}\n  }}\n  size: {}", x.json["bitwidth"], x.json["size"]);
        if let Some(n) = x.json["index_type"].as_str() {
            let _ = writeln!(out, "  index_type_name {{\n    name: {}\n  }}", quote(n));
            used_types.push(n.to_string());
        }
        out.push_str("}\n");
    }
    let mut digests: Vec<_> = l.digests.iter().collect();
    digests.sort_by_key(|d| digest_ids[&d.name]);
    for d in &digests {
        out.push_str("digests {\n");
        preamble(&mut out, digest_ids[&d.name], &d.name, &all_names, &[]);
        let _ = writeln!(
            out,
            "  type_spec {{\n    struct {{\n      name: {}\n    }}\n  }}",
            quote(&d.name)
        );
        out.push_str("}\n");
    }
    out.push_str("type_info {\n");
    let mut structs: Vec<_> = l.digests.iter().collect();
    structs.sort_by(|a, b| a.name.cmp(&b.name));
    for d in structs {
        let _ = write!(
            out,
            "  structs {{\n    key: {}\n    value {{\n",
            quote(&d.name)
        );
        for (m, t) in &d.members {
            let spec = match t {
                crate::env::Ty::Bool => "          bool {\n          }\n".to_string(),
                t => format!("          bitstring {{\n            bit {{\n              bitwidth: {}\n            }}\n          }}\n", t.width().unwrap_or(0)),
            };
            let _ = write!(out, "      members {{\n        name: {}\n        type_spec {{\n{spec}        }}\n      }}\n", quote(m));
        }
        out.push_str("    }\n  }\n");
    }
    let mut enums: Vec<&String> = tables.iter().flat_map(|t| &t.ser_enums).collect();
    enums.sort();
    enums.dedup();
    for n in enums {
        if let Some(e) = env.enums.get(n.as_str()) {
            out.push_str(&serializable_enum(n, e));
        }
    }
    used_types.sort();
    used_types.dedup();
    for n in &used_types {
        let Some(nt) = env.new_types.get(n) else {
            continue;
        };
        let _ = write!(out, "  new_types {{\n    key: {}\n    value {{\n", quote(n));
        match &nt.translation {
            Some((uri, bits)) => {
                let _ = write!(out, "      translated_type {{\n        uri: {}\n        sdn_bitwidth: {bits}\n      }}\n", quote(uri));
            }
            None => {
                let _ = write!(out, "      original_type {{\n        bitstring {{\n          bit {{\n            bitwidth: {}\n          }}\n        }}\n      }}\n", nt.width);
            }
        }
        out.push_str("    }\n  }\n");
    }
    out.push_str("}\n");
    Ok(out)
}

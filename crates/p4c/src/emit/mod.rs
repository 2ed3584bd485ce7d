//! Puts the program together: finds `V1Switch(...) main`, lowers its six blocks and writes the
//! bmv2 JSON document (header types, headers, stacks, errors, parser, deparser, externs,
//! actions, pipelines, checksums).

mod psa;
mod union;

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::env::Ty;
use crate::lower::{Binding, Lowerer};
use serde_json::{json, Value};

/// The six blocks of `V1Switch(...) main`.
pub struct Blocks {
    pub parser: String,
    pub verify: String,
    pub ingress: String,
    pub egress: String,
    pub compute: String,
    pub deparser: String,
}

fn main_blocks(l: &Lowerer) -> Res<Blocks> {
    let Some(main) = l
        .env
        .instances
        .iter()
        .find(|i| matches!(&i.ty, Type::Named(n, _, _) if n == "V1Switch"))
    else {
        let loc = l.env.instances.first().map_or(Loc::default(), |i| i.loc);
        return fail(loc, "no 'V1Switch(...) main;': lanes p4c compiles v1model programs (include <v1model.p4> and instantiate V1Switch)");
    };
    if main.args.len() != 6 {
        return fail(main.loc, format!("V1Switch takes 6 blocks (parser, verify checksum, ingress, egress, compute checksum, deparser), {} given", main.args.len()));
    }
    let mut names = Vec::new();
    for a in &main.args {
        match a {
            Expr::Call { func, args, .. } if args.is_empty() => match &**func {
                Expr::Name(n, nloc) => {
                    if !l.env.parsers.contains_key(n) && !l.env.controls.contains_key(n) {
                        return fail(
                            *nloc,
                            format!("'{n}' is not a parser or control declared in this program"),
                        );
                    }
                    names.push(n.clone())
                }
                _ => {
                    return fail(
                        a.loc(),
                        "expected a parser or control instantiation, e.g. MyIngress()",
                    )
                }
            },
            _ => {
                return fail(
                    a.loc(),
                    "expected a parser or control instantiation, e.g. MyIngress()",
                )
            }
        }
    }
    Ok(Blocks {
        parser: names[0].clone(),
        verify: names[1].clone(),
        ingress: names[2].clone(),
        egress: names[3].clone(),
        compute: names[4].clone(),
        deparser: names[5].clone(),
    })
}

pub fn padded(mut fields: Vec<Value>, bits: u32, pad_name: &str) -> Vec<Value> {
    if !bits.is_multiple_of(8) {
        fields.push(json!([pad_name, 8 - bits % 8, false]));
    }
    fields
}

pub fn program(l: &mut Lowerer) -> Res<String> {
    if crate::arch::is_psa(l.env) {
        return psa::program(l);
    }
    let b = main_blocks(l)?;
    let env = l.env;
    let Some(parser) = env.parsers.get(&b.parser) else {
        return fail(Loc::default(), format!("'{}' must be a parser", b.parser));
    };
    let struct_of = |i: usize| -> Res<String> {
        match parser.params.get(i).map(|p| env.resolve(&p.ty)) {
            Some(Ok(crate::env::Ty::Struct(s))) => Ok(s),
            _ => fail(parser.loc, format!("parser {}: parameter {} must be a struct (v1model: packet_in, out H, inout M, inout standard_metadata_t)", parser.name, i + 1)),
        }
    };
    if parser.params.len() != 4 {
        return fail(parser.loc, format!("parser {} takes 4 parameters in v1model (packet_in, out H, inout M, inout standard_metadata_t), has {}", parser.name, parser.params.len()));
    }
    let (h, m) = (struct_of(1)?, struct_of(2)?);
    if !env.structs.contains_key("standard_metadata_t") {
        return fail(
            parser.loc,
            "standard_metadata_t is not declared: #include <v1model.p4>",
        );
    }
    l.layout(&h, &m, parser.loc)?;
    l.annotated_field_lists(&m)?;
    // top-level extern instances
    let mut gsc = l.global_scope();
    for inst in &env.instances {
        if matches!(&inst.ty, Type::Named(n, _, _) if n == "V1Switch") {
            continue;
        }
        l.instance(&mut gsc, inst, None)?;
        if let Some(bd) = gsc.get(&inst.name).cloned() {
            l.globals.push((inst.name.clone(), bd));
        }
    }
    let ctl = |n: &str| -> Res<&ControlDecl> {
        match env.controls.get(n) {
            Some(c) => Ok(c),
            None => fail(Loc::default(), format!("'{n}' must be a control")),
        }
    };
    let parser_json = l.lower_parser(parser, &h, &m)?;
    l.lower_checksums(ctl(&b.verify)?, &h, &m, true)?;
    let ingress = l.lower_pipeline(ctl(&b.ingress)?, "ingress", 0, &h, &m)?;
    let egress = l.lower_pipeline(ctl(&b.egress)?, "egress", 1, &h, &m)?;
    l.lower_checksums(ctl(&b.compute)?, &h, &m, false)?;
    let deparser = l.lower_deparser(ctl(&b.deparser)?, &h, &m)?;

    let std = &env.structs["standard_metadata_t"];
    let bits: u32 = std.iter().map(|f| f.ty.width().unwrap_or(0)).sum();
    let sf = std
        .iter()
        .map(|f| json!([f.name, f.ty.width().unwrap_or(0), false]))
        .collect();
    let std_type =
        json!({"name": "standard_metadata", "id": 1, "fields": padded(sf, bits, "_padding")});
    let aliases = json!([
        [
            "queueing_metadata.enq_timestamp",
            ["standard_metadata", "enq_timestamp"]
        ],
        [
            "queueing_metadata.enq_qdepth",
            ["standard_metadata", "enq_qdepth"]
        ],
        [
            "queueing_metadata.deq_timedelta",
            ["standard_metadata", "deq_timedelta"]
        ],
        [
            "queueing_metadata.deq_qdepth",
            ["standard_metadata", "deq_qdepth"]
        ],
        [
            "intrinsic_metadata.ingress_global_timestamp",
            ["standard_metadata", "ingress_global_timestamp"]
        ],
        [
            "intrinsic_metadata.egress_global_timestamp",
            ["standard_metadata", "egress_global_timestamp"]
        ],
        [
            "intrinsic_metadata.mcast_grp",
            ["standard_metadata", "mcast_grp"]
        ],
        [
            "intrinsic_metadata.egress_rid",
            ["standard_metadata", "egress_rid"]
        ],
        [
            "intrinsic_metadata.priority",
            ["standard_metadata", "priority"]
        ]
    ]);
    let _ = Binding::Std;
    let parts = Parts {
        std_type,
        parsers: vec![parser_json],
        deparsers: vec![deparser],
        pipelines: vec![ingress, egress],
        aliases,
    };
    Ok(document(l, parts))
}

/// What differs between the architectures' documents.
pub struct Parts {
    /// The header type of the `standard_metadata` instance.
    pub std_type: Value,
    pub parsers: Vec<Value>,
    pub deparsers: Vec<Value>,
    pub pipelines: Vec<Value>,
    pub aliases: Value,
}

/// The bmv2 JSON document of a lowered program.
pub fn document(l: &Lowerer, p: Parts) -> String {
    let env = l.env;
    // header types: scalars, standard_metadata, then the headers used, in declaration order
    let mut header_types = Vec::new();
    let bits: u32 = l.scalars.iter().map(|s| s.1).sum();
    let sf = l
        .scalars
        .iter()
        .map(|(n, w, signed)| json!([n, w, signed]))
        .collect();
    header_types
        .push(json!({"name": "scalars_0", "id": 0, "fields": padded(sf, bits, "_padding_0")}));
    header_types.push(p.std_type);
    for ht in &env.header_order {
        if !l.header_insts.iter().any(|i| &i.htype == ht) {
            continue;
        }
        let id = header_types.len();
        header_types.push(header_type(ht, id, &env.headers[ht]));
    }
    // local varbit variables: one metadata type per maximum width, in order of use
    let mut varbit_types: Vec<&str> = Vec::new();
    for hi in l.header_insts.iter().filter(|h| h.metadata) {
        if !varbit_types.contains(&hi.htype.as_str()) {
            varbit_types.push(&hi.htype);
        }
    }
    for ht in varbit_types {
        let w: u32 = ht.trim_start_matches("$varbit").parse().unwrap_or(0);
        header_types.push(
            json!({"name": ht, "id": header_types.len(), "fields": [["field", "*"]], "max_length": w.div_ceil(8)}),
        );
    }
    let mut headers = vec![
        json!({"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": true, "pi_omit": true}),
        json!({"name": "standard_metadata", "id": 1, "header_type": "standard_metadata", "metadata": true, "pi_omit": true}),
    ];
    for (i, hi) in l.header_insts.iter().enumerate() {
        headers.push(json!({"name": hi.name, "id": i + 2, "header_type": hi.htype, "metadata": hi.metadata, "pi_omit": true}));
    }
    let stacks: Vec<Value> = l
        .stacks
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let ids: Vec<usize> = (0..s.size)
                .filter_map(|k| l.header_insts.iter().position(|h| h.name == format!("{}[{k}]", s.name)).map(|p| p + 2))
                .collect();
            json!({"name": s.name, "id": i, "header_type": s.htype, "size": s.size, "header_ids": ids})
        })
        .collect();
    let errors: Vec<Value> = env
        .errors
        .iter()
        .enumerate()
        .map(|(i, e)| json!([e, i]))
        .collect();
    let counters: Vec<Value> = l.counters.iter().map(strip_unit).collect();
    let registers: Vec<Value> = l.registers.iter().map(strip_unit).collect();
    let doc = json!({
        "header_types": header_types,
        "headers": headers,
        "header_stacks": stacks,
        "header_union_types": union::union_types(env, l),
        "header_unions": union::unions(l),
        "header_union_stacks": crate::lower::union_stack::union_stacks_json(l),
        "field_lists": l.field_lists,
        "errors": errors,
        "enums": [],
        "parsers": p.parsers,
        "parse_vsets": l.value_sets,
        "deparsers": p.deparsers,
        "meter_arrays": l.meters,
        "counter_arrays": counters,
        "register_arrays": registers,
        "calculations": l.calculations,
        "learn_lists": l.learn_lists,
        "actions": l.actions,
        "pipelines": p.pipelines,
        "checksums": l.checksums,
        "force_arith": [],
        "extern_instances": [],
        "field_aliases": p.aliases,
        "program": l.file_name,
        "__meta__": {"version": [2, 23], "compiler": "lanes p4c"},
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// A header type's JSON: its fields as `[name, width, signed]`; a varbit field as
/// `[name, "*"]` with the type's `max_length` (bytes of the whole header at the varbit's
/// maximum), as p4c writes it for bmv2.
fn header_type(name: &str, id: usize, fields: &[crate::env::FieldTy]) -> Value {
    let mut bits = 0;
    let mut varbit = false;
    let fs: Vec<Value> = fields
        .iter()
        .map(|f| match f.ty {
            Ty::Varbit(w) => {
                bits += w;
                varbit = true;
                json!([f.name, "*"])
            }
            _ => {
                let w = f.ty.width().unwrap_or(0);
                bits += w;
                json!([f.name, w, matches!(f.ty, Ty::Int(_))])
            }
        })
        .collect();
    let mut t = json!({"name": name, "id": id, "fields": fs});
    if varbit {
        t["max_length"] = json!(bits.div_ceil(8));
    }
    t
}

/// A counter's unit and a register's index type are ours (for P4Info), not bmv2 JSON keys.
fn strip_unit(c: &Value) -> Value {
    let mut c = c.clone();
    if let Some(o) = c.as_object_mut() {
        o.remove("unit");
        o.remove("index_type");
    }
    c
}

//! The PSA program: finds `PSA_Switch(IngressPipeline(ip, ig, id), PacketReplicationEngine(),
//! EgressPipeline(ep, eg, ed), BufferingQueueingEngine()) main`, lowers its six blocks into the
//! parsers `ingress_parser` / `egress_parser`, the pipelines `ingress` / `egress` and the
//! deparsers `ingress_deparser` / `egress_deparser` of one document, as p4c-bm2-psa names them.
//! The PSA metadata structs are fields of `scalars` named after the struct
//! (`psa_ingress_output_metadata.drop`); the switch reads and writes them there. Ingress and
//! egress share one layout, so they must use the same headers and metadata types (psa_switch
//! shares the packet's fields between them too), or egress must declare none (an empty struct).

use crate::arch::{psa_prefix, PSA_STRUCTS};
use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::emit::{document, padded, Parts};
use crate::env::{Env, Ty};
use crate::lower::Lowerer;
use serde_json::{json, Value};

/// The bookkeeping fields of the switch (never named by a PSA program): the port a packet
/// arrived on and leaves by, its copy kind and replication id, as in v1model's standard
/// metadata; ports are PSA's 32 bits.
const SWITCH_FIELDS: [(&str, u32); 10] = [
    ("ingress_port", 32),
    ("egress_spec", 32),
    ("egress_port", 32),
    ("instance_type", 32),
    ("packet_length", 32),
    ("mcast_grp", 32),
    ("egress_rid", 16),
    ("parser_error", 32),
    ("ingress_global_timestamp", 48),
    ("egress_global_timestamp", 48),
];

struct Pipe {
    parser: String,
    control: String,
    deparser: String,
}

fn block_name(l: &Lowerer, a: &Expr) -> Res<String> {
    if let Expr::Call { func, args, .. } = a {
        if let (Expr::Name(n, nloc), true) = (&**func, args.is_empty()) {
            if !l.env.parsers.contains_key(n) && !l.env.controls.contains_key(n) {
                return fail(
                    *nloc,
                    format!("'{n}' is not a parser or control declared in this program"),
                );
            }
            return Ok(n.clone());
        }
    }
    fail(
        a.loc(),
        "expected a parser or control instantiation, e.g. MyIngress()",
    )
}

/// The three blocks of an `IngressPipeline(...)` / `EgressPipeline(...)`, given inline or as the
/// name of a top-level instance.
fn pipe(l: &Lowerer, a: &Expr, kind: &str) -> Res<Pipe> {
    let args = match a {
        Expr::Call { func, args, .. } if matches!(&**func, Expr::Name(n, _) if n == kind) => {
            args.clone()
        }
        Expr::Name(n, loc) => match l.env.instances.iter().find(|i| &i.name == n) {
            Some(i) if matches!(&i.ty, Type::Named(t, _, _) if t == kind) => i.args.clone(),
            _ => return fail(*loc, format!("'{n}' is not an instance of {kind}")),
        },
        _ => {
            return fail(
                a.loc(),
                format!("expected {kind}(parser, control, deparser)"),
            )
        }
    };
    if args.len() != 3 {
        return fail(
            a.loc(),
            format!(
                "{kind} takes 3 blocks (parser, control, deparser), {} given",
                args.len()
            ),
        );
    }
    Ok(Pipe {
        parser: block_name(l, &args[0])?,
        control: block_name(l, &args[1])?,
        deparser: block_name(l, &args[2])?,
    })
}

fn main_pipes(l: &Lowerer) -> Res<(Pipe, Pipe, Loc)> {
    let Some(main) = l
        .env
        .instances
        .iter()
        .find(|i| matches!(&i.ty, Type::Named(n, _, _) if n == "PSA_Switch"))
    else {
        return fail(Loc::default(), "no 'PSA_Switch(...) main;'");
    };
    if main.args.len() != 4 {
        return fail(main.loc, format!("PSA_Switch takes 4 arguments (IngressPipeline, PacketReplicationEngine, EgressPipeline, BufferingQueueingEngine), {} given", main.args.len()));
    }
    let ig = pipe(l, &main.args[0], "IngressPipeline")?;
    let eg = pipe(l, &main.args[2], "EgressPipeline")?;
    Ok((ig, eg, main.loc))
}

/// The headers and metadata struct types of a PSA parser (its 2nd and 3rd parameters).
fn parser_types(env: &Env, p: &ParserDecl) -> Res<(String, String)> {
    let struct_of = |i: usize| -> Res<String> {
        match p.params.get(i).map(|x| env.resolve(&x.ty)) {
            Some(Ok(Ty::Struct(s))) => Ok(s),
            _ => fail(p.loc, format!("parser {}: parameter {} must be a struct (PSA: packet_in, out H, inout M, in the parser's input metadata, ...)", p.name, i + 1)),
        }
    };
    Ok((struct_of(1)?, struct_of(2)?))
}

pub fn program(l: &mut Lowerer) -> Res<String> {
    let (ig, eg, main_loc) = main_pipes(l)?;
    let env = l.env;
    let parser = |n: &str| -> Res<&ParserDecl> {
        env.parsers
            .get(n)
            .map_or_else(|| fail(main_loc, format!("'{n}' must be a parser")), Ok)
    };
    let control = |n: &str| -> Res<&ControlDecl> {
        env.controls
            .get(n)
            .map_or_else(|| fail(main_loc, format!("'{n}' must be a control")), Ok)
    };
    let (ip, ep) = (parser(&ig.parser)?, parser(&eg.parser)?);
    let (h, m) = parser_types(env, ip)?;
    let (eh, em) = parser_types(env, ep)?;
    // an egress that declares no headers or no metadata (an empty struct) shares nothing
    let empty = |s: &str| env.structs.get(s).is_some_and(Vec::is_empty);
    if (eh != h && !empty(&eh)) || (em != m && !empty(&em)) {
        return fail(ep.loc, format!("PSA egress parser {} uses headers {eh} and metadata {em}, ingress uses {h} and {m}: lanes runs PSA programs whose ingress and egress share their headers and metadata types", ep.name));
    }
    l.layout(&h, &m, ip.loc)?;
    for s in PSA_STRUCTS {
        if let Some(prefix) = psa_prefix(s) {
            l.struct_layout(s, &prefix, true, main_loc)?;
        }
    }
    let mut gsc = l.global_scope();
    for inst in &env.instances {
        if matches!(&inst.ty, Type::Named(n, _, _) if ["PSA_Switch", "IngressPipeline", "EgressPipeline"].contains(&n.as_str()))
        {
            continue;
        }
        l.instance(&mut gsc, inst, None)?;
        if let Some(bd) = gsc.get(&inst.name).cloned() {
            l.globals.push((inst.name.clone(), bd));
        }
    }
    let mut ingress_parser = l.lower_parser(ip, &h, &m)?;
    let ingress = l.lower_pipeline(control(&ig.control)?, "ingress", 0, &h, &m)?;
    let mut ingress_deparser = l.lower_deparser(control(&ig.deparser)?, &h, &m)?;
    let mut egress_parser = l.lower_parser(ep, &h, &m)?;
    let egress = l.lower_pipeline(control(&eg.control)?, "egress", 1, &h, &m)?;
    let mut egress_deparser = l.lower_deparser(control(&eg.deparser)?, &h, &m)?;
    rename(&mut ingress_parser, "ingress_parser", 0);
    rename(&mut egress_parser, "egress_parser", 1);
    rename(&mut ingress_deparser, "ingress_deparser", 0);
    rename(&mut egress_deparser, "egress_deparser", 1);
    let bits: u32 = SWITCH_FIELDS.iter().map(|f| f.1).sum();
    let sf = SWITCH_FIELDS
        .iter()
        .map(|(n, w)| json!([n, w, false]))
        .collect();
    let parts = Parts {
        std_type: json!({"name": "standard_metadata", "id": 1, "fields": padded(sf, bits, "_padding")}),
        parsers: vec![ingress_parser, egress_parser],
        deparsers: vec![ingress_deparser, egress_deparser],
        pipelines: vec![ingress, egress],
        aliases: json!([]),
    };
    Ok(document(l, parts))
}

fn rename(v: &mut Value, name: &str, id: u32) {
    v["name"] = json!(name);
    v["id"] = json!(id);
}

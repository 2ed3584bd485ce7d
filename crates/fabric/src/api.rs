//! File-level operations behind `lanes fabric ...`: paths and JSON in, JSON out, one-line errors.
//! The Python bindings call only these.

use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};

use crate::bail;
use crate::error::{err, Result};
use crate::gen::Pgft;
use crate::lft::{self, blocks_for, Lfts};
use crate::model::Fabric;
use crate::topo::Topo;
use crate::{balance, check, engines, migrate, netlist, nodeorder, vswitch};

pub fn read_text(path: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| err(format!("cannot read {path}: {e}")))
}

pub fn write_text(path: &str, text: &str) -> Result<()> {
    if let Some(dir) = Path::new(path).parent() {
        if !dir.as_os_str().is_empty() && !dir.exists() {
            std::fs::create_dir_all(dir)
                .map_err(|e| err(format!("cannot create {}: {e}", dir.display())))?;
        }
    }
    std::fs::write(path, text).map_err(|e| err(format!("cannot write {path}: {e}")))
}

pub fn write_bytes(path: &str, data: &[u8]) -> Result<()> {
    write_text(path, "")?;
    std::fs::write(path, data).map_err(|e| err(format!("cannot write {path}: {e}")))
}

/// Streams an opensm-lfts.dump to `path`; a path ending in `.lftb` gets lanes's binary state
/// file instead (read back by `load_lfts`, not by OpenSM).
pub fn write_dump_file(path: &str, f: &Fabric, lfts: &Lfts) -> Result<()> {
    if path.ends_with(".lftb") {
        return write_bytes(path, &crate::lftbin::write(f, lfts));
    }
    write_text(path, "")?;
    let file = std::fs::File::create(path).map_err(|e| err(format!("cannot write {path}: {e}")))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    lft::write_dump_to(&mut w, f, lfts).map_err(|e| err(format!("cannot write {path}: {e}")))
}

pub fn load_fabric(path: &str) -> Result<Fabric> {
    netlist::read(&read_text(path)?).map_err(|e| err(format!("{path}: {e}")))
}

/// Tables from an opensm-lfts.dump or from lanes's binary state file (`.lftb`, by content).
pub fn load_lfts(path: &str) -> Result<lft::Dump> {
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read {path}: {e}")))?;
    if crate::lftbin::is_state(&bytes) {
        return crate::lftbin::read(&bytes).map_err(|e| err(format!("{path}: {e}")));
    }
    let text = String::from_utf8(bytes).map_err(|_| err(format!("{path}: not a text dump")))?;
    lft::read_dump(&text).map_err(|e| err(format!("{path}: {e}")))
}

/// Fabric with LIDs taken from an OpenSM dump when given (so tables compare entry by entry).
pub fn load_with_lids(net: &str, lids_from: Option<&str>) -> Result<Fabric> {
    let mut f = load_fabric(net)?;
    if let Some(d) = lids_from {
        let dump = load_lfts(d)?;
        f.set_lids_from_guids(&dump.lids)
            .map_err(|e| err(format!("{d}: {e}")))?;
        f.check_lids()?;
    }
    Ok(f)
}

fn u32_list(v: &Value, key: &str) -> Result<Vec<u32>> {
    match v.get(key) {
        None => bail!("missing {key:?}"),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| err(format!("{key}: not a number list")))
            })
            .collect(),
        Some(_) => bail!("{key}: expected a list of numbers"),
    }
}

/// Builds a topology from a JSON spec: {"kind": "xgft"|"pgft"|"kary"|"named", ...}.
pub fn spec_to_pgft(spec: &str) -> Result<Pgft> {
    let v: Value = serde_json::from_str(spec).map_err(|e| err(format!("bad spec: {e}")))?;
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut t = match kind {
        "xgft" => Pgft::xgft(u32_list(&v, "m")?, u32_list(&v, "w")?)?,
        "pgft" => Pgft::new(u32_list(&v, "m")?, u32_list(&v, "w")?, u32_list(&v, "p")?)?,
        "kary" => {
            let k = v
                .get("k")
                .and_then(Value::as_u64)
                .ok_or_else(|| err("kary needs k"))?;
            let n = v
                .get("n")
                .and_then(Value::as_u64)
                .ok_or_else(|| err("kary needs n"))?;
            Pgft::kary(k.min(255) as u32, n.min(255) as u32)?
        }
        "named" => Pgft::named(v.get("name").and_then(Value::as_str).unwrap_or(""))?,
        _ => bail!("unknown topology kind {kind:?} (xgft, pgft, kary, named)"),
    };
    if let Some(h) = v.get("h").and_then(Value::as_u64) {
        if h as usize != t.h() {
            bail!("h = {h} but {} levels given", t.h());
        }
    }
    if let Some(r) = v.get("radix").and_then(Value::as_u64) {
        t.radix = Some(r.min(255) as u32);
    }
    Ok(t)
}

pub fn summary(t: &Pgft) -> Result<Value> {
    let lids = t.num_nodes() + t.num_switches();
    crate::model::check_lid_count(lids)?;
    let blocks = blocks_for(lids as usize) as u64;
    let (diff_trees, disjoint) = t.spanning_trees();
    Ok(json!({
        "topology": t.describe(),
        "nodes": t.num_nodes(),
        "switches": t.num_switches(),
        "switches_per_level": (1..=t.h()).map(|i| t.count_at(i)).collect::<Vec<_>>(),
        "lids": lids,
        "lft_blocks_per_switch": blocks,
        "full_reconfiguration_smps": blocks * t.num_switches(),
        "lid_swap_copy_max_smps": 2 * t.num_switches(),
        "spanning_trees_different": diff_trees,
        "spanning_trees_disjoint": disjoint,
    }))
}

/// vSwitch options of a spec: {"vfs": N, "vms": [VMs per hypervisor, cycled]}.
fn vswitch_spec(v: &Value) -> Result<Option<(u32, Vec<u32>)>> {
    let Some(vfs) = v.get("vfs").and_then(Value::as_u64) else {
        if v.get("vms").is_some() {
            bail!("vms (VMs per hypervisor) needs vfs");
        }
        return Ok(None);
    };
    let counts = if v.get("vms").is_some() {
        u32_list(v, "vms")?
    } else {
        Vec::new()
    };
    Ok(Some((vfs.min(1000) as u32, counts)))
}

pub fn gen(spec: &str, out: Option<&str>) -> Result<String> {
    let t = spec_to_pgft(spec)?;
    let v: Value = serde_json::from_str(spec).map_err(|e| err(format!("bad spec: {e}")))?;
    let vs = vswitch_spec(&v)?;
    let mut s = summary(&t)?;
    if out.is_none() && vs.is_none() {
        return Ok(s.to_string());
    }
    let mut f = t.build()?;
    if let Some((vfs, counts)) = vs {
        let scheme =
            vswitch::HvLid::parse(v.get("hv_lid").and_then(Value::as_str).unwrap_or("own"))?;
        f = vswitch::expand_with(&f, vfs, &counts, scheme)?;
        crate::model::check_lid_count(f.num_lids() as u64)?;
        let topo = Topo::new(&f)?;
        let hvs = topo
            .leaves
            .iter()
            .filter(|&&l| vswitch::is_vswitch(&topo, l))
            .count();
        let lids = f.num_lids();
        s["vswitch"] = json!({
            "hypervisors": hvs,
            "vfs_per_hypervisor": vfs,
            "vms": f.num_hcas() - hvs,
            "lids": lids,
            "hv_lid": if scheme == vswitch::HvLid::Own { "own" } else { "shared" },
            "physical_switches": f.num_switches() - hvs,
            "switches_with_vswitches": f.num_switches(),
            "lft_blocks_per_switch": blocks_for(f.max_lid() as usize),
        });
    }
    if let Some(out) = out {
        write_text(out, &netlist::write(&f))?;
        s["netlist"] = json!(out);
    }
    Ok(s.to_string())
}

fn name_list(o: &Value, key: &str) -> Result<Option<Vec<String>>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect(),
        )),
        Some(_) => bail!("{key}: expected a list of node names"),
    }
}

/// Routes a netlist with an engine and writes opensm-lfts.dump. `opts` is a JSON object:
/// {"lids_from": dump, "order": [node names], "old": dump, "subtree": [names], "vms": [names],
/// "check": bool, "metabase_in": file (mfattree: phase II only), "metabase_out": file}.
pub fn route(net: &str, engine: &str, out: &str, opts: &str) -> Result<String> {
    let o: Value = if opts.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?
    };
    let f = load_with_lids(net, o.get("lids_from").and_then(Value::as_str))?;
    let t = Topo::new(&f)?;
    let mut eo = engines::EngineOptions {
        order: name_list(&o, "order")?,
        subtree: name_list(&o, "subtree")?,
        vms: name_list(&o, "vms")?,
        ..Default::default()
    };
    if let Some(p) = o.get("old").and_then(Value::as_str) {
        eo.old = Some(load_lfts(p)?.lfts);
    }
    let (mb_in, mb_out) = (
        o.get("metabase_in").and_then(Value::as_str),
        o.get("metabase_out").and_then(Value::as_str),
    );
    if (mb_in.is_some() || mb_out.is_some() || o.get("metabase_paths").is_some())
        && engine != "mfattree"
    {
        bail!("a metabase is mfattree's: --metabase-in/-out/-paths need --engine mfattree");
    }
    let mut mb_times = serde_json::Map::new();
    if let Some(p) = mb_in {
        let start = Instant::now();
        let bytes = std::fs::read(p).map_err(|e| err(format!("cannot read {p}: {e}")))?;
        eo.metabase = Some(
            crate::metabase::Metabase::from_bytes(&bytes, &f, &t)
                .map_err(|e| err(format!("{p}: {e}")))?,
        );
        mb_times.insert(
            "metabase_load_seconds".into(),
            json!(start.elapsed().as_secs_f64()),
        );
    } else if mb_out.is_some() || o.get("metabase_paths").is_some() {
        let mb = match o.get("metabase_paths").and_then(Value::as_str) {
            None | Some("nodes") => crate::metabase::Metabase::build(&f, &t),
            Some("disjoint") => crate::metabase::Metabase::build_paths(
                &f,
                &t,
                crate::metabase::Metabase::disjoint_paths(&t),
            ),
            Some(x) => bail!("metabase paths: {x:?} (nodes, disjoint)"),
        };
        mb_times.insert("metabase_paths_per_leaf".into(), json!(mb.per_leaf));
        mb_times.insert("metabase_build_seconds".into(), json!(mb.seconds));
        eo.metabase = Some(mb);
    }
    let (lfts, stats) = engines::run(&f, &t, engine, &eo)?;
    if let (Some(p), Some(mb)) = (mb_out, &eo.metabase) {
        let start = Instant::now();
        write_bytes(p, &mb.to_bytes(&f, &t))?;
        mb_times.insert(
            "metabase_save_seconds".into(),
            json!(start.elapsed().as_secs_f64()),
        );
        mb_times.insert("metabase_out".into(), json!(p));
    }
    let start = Instant::now();
    write_dump_file(out, &f, &lfts)?;
    let mut v = serde_json::to_value(&stats).map_err(|e| err(e.to_string()))?;
    v["write_seconds"] = json!(start.elapsed().as_secs_f64());
    v["out"] = json!(out);
    for (k, x) in mb_times {
        v[k] = x;
    }
    if mb_in.is_some() {
        v["phase_ii_only"] = json!(true);
    }
    if o.get("check").and_then(Value::as_bool).unwrap_or(true) {
        let r = check::check(&f, &t, &lfts)?;
        v["check"] = serde_json::to_value(&r).map_err(|e| err(e.to_string()))?;
    }
    Ok(v.to_string())
}

pub fn check_files(net: &str, dump: &str) -> Result<String> {
    let d = load_lfts(dump)?;
    let mut f = load_fabric(net)?;
    f.set_lids_from_guids(&d.lids)
        .map_err(|e| err(format!("{dump}: {e}")))?;
    let t = Topo::new(&f)?;
    let r = check::check(&f, &t, &d.lfts)?;
    serde_json::to_string(&r).map_err(|e| err(e.to_string()))
}

pub fn balance_files(net: &str, dump: &str) -> Result<String> {
    let d = load_lfts(dump)?;
    let mut f = load_fabric(net)?;
    f.set_lids_from_guids(&d.lids)
        .map_err(|e| err(format!("{dump}: {e}")))?;
    let t = Topo::new(&f)?;
    let b = balance::balance(&f, &t, &d.lfts)?;
    serde_json::to_string(&b).map_err(|e| err(e.to_string()))
}

pub fn diff_files(old: &str, new: &str) -> Result<String> {
    let a: Lfts = load_lfts(old)?.lfts;
    let b: Lfts = load_lfts(new)?.lfts;
    let d = lft::diff(&a, &b)?;
    serde_json::to_string(&d).map_err(|e| err(e.to_string()))
}

/// ORCS-like evaluation. `opts`: {"pattern", "runs", "seed", "order": [names], "progress": bool}.
pub fn eval_files(net: &str, dump: &str, opts: &str) -> Result<String> {
    let o: Value = serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?;
    let d = load_lfts(dump)?;
    let mut f = load_fabric(net)?;
    f.set_lids_from_guids(&d.lids)
        .map_err(|e| err(format!("{dump}: {e}")))?;
    let t = Topo::new(&f)?;
    let order = match o.get("order") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect(),
        ),
        Some(_) => bail!("order: expected a list of node names"),
    };
    let eo = crate::eval::EvalOptions {
        pattern: o
            .get("pattern")
            .and_then(Value::as_str)
            .unwrap_or("bisect")
            .to_string(),
        runs: o.get("runs").and_then(Value::as_u64).unwrap_or(100) as usize,
        seed: o.get("seed").and_then(Value::as_u64).unwrap_or(1),
        order,
        progress: o.get("progress").and_then(Value::as_bool).unwrap_or(true),
        threads: o.get("threads").and_then(Value::as_u64).unwrap_or(0) as usize,
    };
    crate::patterns::phases(&eo.pattern, 2, &mut crate::patterns::Rng::new(0))?;
    let r = crate::eval::evaluate(&f, &t, &d.lfts, &eo)?;
    serde_json::to_string(&r).map_err(|e| err(e.to_string()))
}

/// Writes the netlist again with the LIDs ibsim should give (ours, or those of a dump), so that
/// OpenSM under ibsim uses exactly the LIDs our tables were computed for.
pub fn normalize(net: &str, lids_from: Option<&str>, out: &str) -> Result<String> {
    let f = load_with_lids(net, lids_from)?;
    write_text(out, &netlist::write(&f))?;
    let ports: usize = f.nodes.iter().map(|n| n.nports as usize + 1).sum();
    Ok(json!({
        "nodes": f.nodes.len(),
        "switches": f.num_switches(),
        "ports": ports,
        "lids": f.num_lids(),
        "out": out,
    })
    .to_string())
}

fn opt_str<'a>(o: &'a Value, key: &str) -> Result<&'a str> {
    o.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| err(format!("missing {key:?}")))
}

/// VM migration by LID swap or copy. `opts`: {"vm", "to", "mode": "swap"|"copy", "out_net",
/// "out", "compare": bool (also re-route the new fabric with vswitch-ftree and count its SMPs)}.
pub fn migrate_files(net: &str, dump: &str, opts: &str) -> Result<String> {
    let o: Value = serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?;
    let f = load_with_lids(net, Some(dump))?;
    let old = load_lfts(dump)?.lfts;
    let mode = match o.get("mode").and_then(Value::as_str).unwrap_or("swap") {
        "swap" => migrate::Mode::Swap,
        "copy" => migrate::Mode::Copy,
        "min-copy" => migrate::Mode::MinCopy,
        m => bail!("unknown mode {m:?} (swap, copy, min-copy)"),
    };
    let (g, new, m) = migrate::migrate(&f, &old, opt_str(&o, "vm")?, opt_str(&o, "to")?, mode)?;
    let mut v = serde_json::to_value(&m).map_err(|e| err(e.to_string()))?;
    let t = Topo::new(&g)?;
    let r = check::check(&g, &t, &new)?;
    v["check"] = serde_json::to_value(&r).map_err(|e| err(e.to_string()))?;
    if o.get("compare").and_then(Value::as_bool).unwrap_or(true) {
        let (rerouted, _) = vswitch::route(&g, &t, None)?;
        let d = lft::diff(&old, &rerouted)?;
        v["reroute_vswitch_ftree"] = serde_json::to_value(&d).map_err(|e| err(e.to_string()))?;
    }
    if let Some(p) = o.get("out_net").and_then(Value::as_str) {
        write_text(p, &netlist::write(&g))?;
        v["out_net"] = json!(p);
    }
    if let Some(p) = o.get("out").and_then(Value::as_str) {
        write_dump_file(p, &g, &new)?;
        v["out"] = json!(p);
    }
    Ok(v.to_string())
}

/// Migration simulator on the tree of `spec` (its compute nodes become hypervisors). `opts`:
/// {"vfs", "population", "initial", "pattern", "migrations", "mode": "copy"|"min-copy",
/// "rebalance_every", "snapshot_percent", "bisect_runs", "seed", "progress"}.
pub fn migsim(spec: &str, opts: &str) -> Result<String> {
    let o: Value = serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?;
    let phys = spec_to_pgft(spec)?.build()?;
    let num = |k: &str, d: u64| o.get(k).and_then(Value::as_u64).unwrap_or(d);
    let s = |k: &str, d: &'static str| -> String {
        o.get(k).and_then(Value::as_str).unwrap_or(d).to_string()
    };
    let so = crate::migsim::SimOptions {
        vfs: num("vfs", 4).min(250) as u32,
        population: o.get("population").and_then(Value::as_f64).unwrap_or(0.25),
        initial: crate::migplan::Initial::parse(&s("initial", "uniform"))?,
        pattern: crate::migplan::Pattern::parse(&s("pattern", "random"))?,
        migrations: o
            .get("migrations")
            .and_then(Value::as_u64)
            .map(|x| x as usize),
        mode: match s("mode", "min-copy").as_str() {
            "copy" => migrate::Mode::Copy,
            "min-copy" => migrate::Mode::MinCopy,
            m => bail!("unknown mode {m:?} (copy, min-copy)"),
        },
        rebalance_every: num("rebalance_every", 0) as usize,
        snapshot_percent: o
            .get("snapshot_percent")
            .and_then(Value::as_f64)
            .unwrap_or(10.0),
        bisect_runs: num("bisect_runs", 200).max(1) as usize,
        seed: num("seed", 1),
        progress: o.get("progress").and_then(Value::as_bool).unwrap_or(true),
        hv_lid: vswitch::HvLid::parse(&s("hv_lid", "own"))?,
    };
    let r = crate::migsim::simulate(&phys, &so)?;
    serde_json::to_string(&r).map_err(|e| err(e.to_string()))
}

/// Paper IV node-order study. `opts`: {"pattern", "placement", "runs", "seed"}.
pub fn order_study(net: &str, opts: &str) -> Result<String> {
    let o: Value = serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?;
    let f = load_fabric(net)?;
    let t = Topo::new(&f)?;
    let s = nodeorder::study(
        &f,
        &t,
        o.get("pattern").and_then(Value::as_str).unwrap_or("bruck"),
        o.get("placement")
            .and_then(Value::as_str)
            .unwrap_or("leaf-blocks"),
        o.get("runs").and_then(Value::as_u64).unwrap_or(100) as usize,
        o.get("seed").and_then(Value::as_u64).unwrap_or(1),
    )?;
    serde_json::to_string(&s).map_err(|e| err(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen_summary_of_the_largest_thesis_tree() {
        let v: Value =
            serde_json::from_str(&gen(r#"{"kind":"named","name":"18-3-1-full"}"#, None).unwrap())
                .unwrap();
        assert_eq!(v["nodes"], 11664);
        assert_eq!(v["switches"], 1620);
        assert_eq!(v["lids"], 13284);
        assert_eq!(v["lft_blocks_per_switch"], 208);
        assert_eq!(v["full_reconfiguration_smps"], 336_960);
        assert_eq!(v["lid_swap_copy_max_smps"], 3240);
        let v: Value = serde_json::from_str(
            &gen(r#"{"kind":"xgft","h":3,"m":[4,4,3],"w":[1,2,3]}"#, None).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (
                v["spanning_trees_different"].as_u64(),
                v["spanning_trees_disjoint"].as_u64()
            ),
            (Some(6), Some(2))
        );
        assert!(gen(r#"{"kind":"xgft","h":2,"m":[4,4,3],"w":[1,2,3]}"#, None).is_err());
        // 48-ary-3-tree: 110,592 nodes + 6,912 switches, far beyond one subnet's LIDs.
        let e = gen(r#"{"kind":"kary","k":48,"n":3}"#, None).unwrap_err().0;
        assert!(
            e.contains("117504 LIDs needed") && e.contains("49151 unicast LIDs"),
            "{e}"
        );
        assert!(e.contains("1837 LFT blocks") && !e.contains('\n'), "{e}");
        assert!(gen("{", None).is_err());
    }
}

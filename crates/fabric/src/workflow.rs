//! Operator workflows behind `lanes fabric fail|guid-files|slurm`: paths and JSON in, JSON out.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::api::{load_lfts, load_with_lids, write_dump_file, write_text};
use crate::bail;
use crate::error::{err, Result};
use crate::fail::{self, Failures};
use crate::failsub;
use crate::lft::Lfts;
use crate::model::Fabric;
use crate::topo::Topo;
use crate::{balance, check, engines, ftree, netlist};

fn strings(o: &Value, key: &str) -> Result<Vec<String>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| err(format!("{key}: expected a list of names")))
            })
            .collect(),
        Some(_) => bail!("{key}: expected a list of names"),
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| err(e.to_string()))
}

/// `opts`: {"links": ["s1-0[8]"], "switches": [..], "nodes": [..], "random_link_percent": f,
/// "seed": n, "engine": "ftree"|"slimupdate"|"slimupdate-paper"|"mfattree"|"subtree", "old": dump, "lids_from": dump,
/// "out": dump, "out_net": netlist, "phases": dir (two drop-first phases as dumps)}.
pub fn fail_files(net: &str, opts: &str) -> Result<String> {
    let o: Value = serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?;
    let lids_from = o.get("lids_from").and_then(Value::as_str);
    let old_path = o.get("old").and_then(Value::as_str);
    let f = load_with_lids(net, lids_from.or(old_path))?;
    let links = strings(&o, "links")?
        .iter()
        .map(|s| fail::parse_link(s))
        .collect::<Result<Vec<_>>>()?;
    let fl = Failures {
        links,
        switches: strings(&o, "switches")?,
        nodes: strings(&o, "nodes")?,
        random_link_percent: o
            .get("random_link_percent")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        seed: o.get("seed").and_then(Value::as_u64).unwrap_or(1),
    };
    let engine = o.get("engine").and_then(Value::as_str).unwrap_or("ftree");
    // The tables in place before the failure: given, or lanes's ftree of the intact fabric.
    let old = match old_path {
        Some(p) => load_lfts(p)?.lfts,
        None => ftree::route(&f)?.0,
    };
    let (g, applied) = fail::apply(&f, &fl)?;
    let t = Topo::new(&g).map_err(|e| err(format!("the degraded fabric: {e}")))?;
    let kept = fail::surviving(&old, &g);
    let before = check::check(&g, &t, &kept)?;
    let mut subtree_report = None;
    let (routed, seconds) = fail::timed(|| {
        if engine == "subtree" {
            let (l, s, r) = failsub::reroute(&f, &g, &t, &kept, &fl, &applied.failed_links)?;
            subtree_report = Some(r);
            Ok((l, s))
        } else {
            engines::reroute(&g, &t, engine, &kept)
        }
    });
    let (lfts, stats) = routed?;
    let after = check::check(&g, &t, &lfts)?;
    let transition = check::transition(&g, &t, &kept, &lfts)?;
    let bal = balance::balance(&g, &t, &lfts)?;
    let (smps, full, switches) = fail::changed_blocks(&kept, &lfts);
    let mut v = json!({
        "failures": to_value(&applied)?,
        "fabric": {
            "switches": g.num_switches(),
            "compute_nodes": t.hcas.iter().map(Vec::len).sum::<usize>(),
            "lids": g.num_lids(),
        },
        "engine": engine,
        "seconds": seconds,
        "stats": to_value(&stats)?,
        "smps": smps,
        "full_reconfiguration_smps": full,
        "switches_updated": switches,
        "check": to_value(&after)?,
        "transition": to_value(&transition)?,
        "balance": to_value(&bal)?,
        "without_reroute": to_value(&before)?,
    });
    if let Some(r) = subtree_report {
        v["subtree"] = to_value(&r)?;
    }
    if let Some(dir) = o.get("phases").and_then(Value::as_str) {
        v["phases"] = write_phases(&g, &t, &kept, &lfts, dir)?;
    }
    if let Some(p) = o.get("out").and_then(Value::as_str) {
        write_dump_file(p, &g, &lfts)?;
        v["out"] = json!(p);
    }
    if let Some(p) = o.get("out_net").and_then(Value::as_str) {
        write_text(p, &netlist::write(&g))?;
        v["out_net"] = json!(p);
    }
    Ok(v.to_string())
}

/// `opts`: {"engines": ["ftree", "slimupdate-paper"], "runs": 10000, "seed": 1}: paths modified
/// after a first link failure (see `pathsmod`).
pub fn paths_modified_files(net: &str, opts: &str) -> Result<String> {
    let o: Value = serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?;
    let f = load_with_lids(net, o.get("lids_from").and_then(Value::as_str))?;
    let mut engines = strings(&o, "engines")?;
    if engines.is_empty() {
        engines = vec!["ftree".into(), "slimupdate-paper".into()];
    }
    let po = crate::pathsmod::Options {
        engines,
        runs: o.get("runs").and_then(Value::as_u64).unwrap_or(10_000) as usize,
        seed: o.get("seed").and_then(Value::as_u64).unwrap_or(1),
    };
    to_value(&crate::pathsmod::paths_modified(&f, &po)?).map(|v| v.to_string())
}

/// Plans the two drop-first phases from `old` to `new` and writes them as OpenSM dumps
/// (`DIR/phase1.dump`, `DIR/phase2.dump`, each loadable by `opensm -R file -U`).
fn write_phases(g: &Fabric, t: &Topo, old: &Lfts, new: &Lfts, dir: &str) -> Result<Value> {
    let (phase1, r) = crate::phases::plan(g, t, old, new)?;
    let path = |name: &str| format!("{}/{name}", dir.trim_end_matches('/'));
    write_dump_file(&path("phase1.dump"), g, &phase1)?;
    write_dump_file(&path("phase2.dump"), g, new)?;
    let mut v = to_value(&r)?;
    v["phase1"] = json!(path("phase1.dump"));
    v["phase2"] = json!(path("phase2.dump"));
    Ok(v)
}

/// The drop-first phases between two dumps of one fabric (`net`, LIDs from the new dump).
pub fn phases_files(net: &str, old: &str, new: &str, dir: &str) -> Result<String> {
    let f = load_with_lids(net, Some(new))?;
    let t = Topo::new(&f)?;
    let a = load_lfts(old)?.lfts;
    let b = load_lfts(new)?.lfts;
    Ok(write_phases(&f, &t, &a, &b, dir)?.to_string())
}

/// Writes the GUID files OpenSM's ftree takes (root_guid_file -a, cn_guid_file -u, io_guid_file
/// -G): roots are the top-level switches, compute nodes every CA port on a leaf except the `io`
/// nodes named. Returns the paths and counts.
pub fn guid_files(net: &str, dir: &str, io: &[String]) -> Result<String> {
    let f = load_with_lids(net, None)?;
    let t = Topo::new(&f)?;
    let mut roots = String::new();
    for &s in &t.by_level[0] {
        let _ = writeln!(
            roots,
            "{:#018x}",
            f.nodes[t.sw_node[s as usize] as usize].guid
        );
    }
    let (mut cn, mut ion) = (String::new(), String::new());
    let (mut ncn, mut nio) = (0, 0);
    for io_name in io {
        if f.find(io_name).is_none() {
            bail!("no node named {io_name:?}");
        }
    }
    for &(_, h) in t.hcas.iter().flatten() {
        let n = &f.nodes[h as usize];
        if io.contains(&n.name) {
            let _ = writeln!(ion, "{:#018x}", n.port_guid());
            nio += 1;
        } else {
            let _ = writeln!(cn, "{:#018x}", n.port_guid());
            ncn += 1;
        }
    }
    let path = |name: &str| format!("{}/{name}", dir.trim_end_matches('/'));
    write_text(&path("root_guids.txt"), &roots)?;
    write_text(&path("cn_guids.txt"), &cn)?;
    let mut v = json!({
        "root_guid_file": path("root_guids.txt"),
        "roots": t.by_level[0].len(),
        "cn_guid_file": path("cn_guids.txt"),
        "compute_nodes": ncn,
    });
    if nio > 0 {
        write_text(&path("io_guids.txt"), &ion)?;
        v["io_guid_file"] = json!(path("io_guids.txt"));
        v["io_nodes"] = json!(nio);
    }
    Ok(v.to_string())
}

/// Slurm's topology.conf (topology/tree): one line per switch with its child switches or nodes,
/// and a compute-node order file (leaf by leaf, port order: the order ftree balances for).
pub fn slurm_files(net: &str, topology: Option<&str>, order: Option<&str>) -> Result<String> {
    let f = load_with_lids(net, None)?;
    let t = Topo::new(&f)?;
    let name = |s: u32| f.nodes[t.sw_node[s as usize] as usize].name.as_str();
    let mut conf =
        String::from("# Slurm topology.conf (TopologyPlugin=topology/tree), written by lanes\n");
    for level in (0..t.nlevels).rev() {
        for &s in &t.by_level[level] {
            let hosts: Vec<&str> = t.hcas[s as usize]
                .iter()
                .map(|&(_, h)| f.nodes[h as usize].name.as_str())
                .collect();
            let mut children: Vec<&str> =
                t.down[s as usize].iter().map(|g| name(g.remote)).collect();
            children.dedup();
            if !hosts.is_empty() {
                let _ = writeln!(conf, "SwitchName={} Nodes={}", name(s), hosts.join(","));
            } else if !children.is_empty() {
                let _ = writeln!(
                    conf,
                    "SwitchName={} Switches={}",
                    name(s),
                    children.join(",")
                );
            }
        }
    }
    let mut ord = String::new();
    let mut nodes = 0;
    for &l in &t.leaves {
        for &(_, h) in &t.hcas[l as usize] {
            let _ = writeln!(ord, "{}", f.nodes[h as usize].name);
            nodes += 1;
        }
    }
    let mut v = json!({"switches": t.num_switches(), "compute_nodes": nodes});
    if let Some(p) = topology {
        write_text(p, &conf)?;
        v["topology_conf"] = json!(p);
    }
    if let Some(p) = order {
        write_text(p, &ord)?;
        v["order_file"] = json!(p);
    }
    Ok(v.to_string())
}

/// The SL/VL-aware deadlock check of a dump on any topology: path SLs from `path_sl` (saquery -p
/// output or "SLID DLID SL" lines), `sl2vl` 16 VLs (identity when empty) or `sl2vl_dump`
/// (OpenSM's opensm-sl2vl.dump, per switch and port pair). Beside it the VL-blind check of the
/// same tables (one VL for every hop), and on fat trees lanes's usual check.
pub fn check_vl_files(
    net: &str,
    dump: &str,
    path_sl: &str,
    sl2vl: &[u8],
    sl2vl_dump: Option<&str>,
) -> Result<String> {
    use crate::vlcheck::{read_path_sls, read_sl2vl_dump, Sl2Vl};
    let d = load_lfts(dump)?;
    let mut f = crate::api::load_fabric(net)?;
    f.set_lids_from_guids(&d.lids)
        .map_err(|e| err(format!("{dump}: {e}")))?;
    let sls = read_path_sls(&crate::api::read_text(path_sl)?)
        .map_err(|e| err(format!("{path_sl}: {e}")))?;
    if sls.is_empty() {
        bail!("{path_sl}: no path SLs (expected saquery -p output or SLID DLID SL lines)");
    }
    let map = match sl2vl_dump {
        Some(p) => {
            if !sl2vl.is_empty() {
                bail!("give either --sl2vl or --sl2vl-dump");
            }
            read_sl2vl_dump(&crate::api::read_text(p)?).map_err(|e| err(format!("{p}: {e}")))?
        }
        None => {
            let mut m: [u8; 16] = std::array::from_fn(|i| i as u8);
            if !sl2vl.is_empty() {
                if sl2vl.len() != 16 || sl2vl.iter().any(|&v| v > 15) {
                    bail!("sl2vl: expected 16 VLs (0..15), one per SL");
                }
                m.copy_from_slice(sl2vl);
            }
            Sl2Vl::Uniform(m)
        }
    };
    let r = crate::vlcheck::check(&f, &d.lfts, &sls, &map, false)?;
    let blind = crate::vlcheck::check(&f, &d.lfts, &sls, &map, true)?;
    let mut used: Vec<u8> = sls.values().copied().collect();
    used.sort_unstable();
    used.dedup();
    let mut v = json!({
        "vl": to_value(&r)?,
        "vl_blind": to_value(&blind)?,
        "path_sls": sls.len(),
        "sls_used": used,
    });
    match Topo::new(&f) {
        Ok(t) => v["single_vl"] = to_value(&check::check(&f, &t, &d.lfts)?)?,
        Err(e) => v["not_a_fat_tree"] = json!(e.0),
    }
    Ok(v.to_string())
}

/// The SA storm model for every event, with and without the path-record cache. `opts`:
/// {"peers", "queries_per_peer", "sa_rate", "timeout_s", "retries"}.
pub fn sa_storm(opts: &str) -> Result<String> {
    use crate::sacache::{Event, Storm};
    let o: Value = serde_json::from_str(opts).map_err(|e| err(format!("bad options: {e}")))?;
    let num = |k: &str, d: f64| o.get(k).and_then(Value::as_f64).unwrap_or(d);
    let s = Storm {
        peers: num("peers", 2000.0) as u64,
        queries_per_peer: num("queries_per_peer", 10.0) as u64,
        sa_rate: num("sa_rate", 6000.0),
        timeout_s: num("timeout_s", 1.0),
        retries: num("retries", 3.0) as u32,
    };
    if s.sa_rate <= 0.0 || s.timeout_s <= 0.0 {
        bail!("sa_rate and timeout_s must be positive");
    }
    if s.peers.saturating_mul(s.queries_per_peer) > 100_000_000 {
        bail!("more than 100 million queries: not a storm this model is for");
    }
    let mut rows = Vec::new();
    for (name, ev) in [
        (
            "migration, VM keeps its LID (vSwitch)",
            Event::MigrationKeepsLid,
        ),
        ("migration, VM gets a new LID", Event::MigrationNewLid),
        ("switch failure", Event::SwitchFailure),
    ] {
        for cache in [false, true] {
            let r = s.run(ev, cache);
            rows.push(json!({"event": name, "cache": cache, "result": to_value(&r)?}));
        }
    }
    Ok(json!({"scenario": to_value(&s)?, "rows": rows}).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;

    fn net(dir: &std::path::Path) -> String {
        let f = Pgft::kary(4, 2).unwrap().build().unwrap();
        let p = dir.join("f.net");
        std::fs::write(&p, netlist::write(&f)).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("lanes-wf-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_failed_leaf_link_is_rerouted_deadlock_free_and_reachable() {
        let d = tmp("fail");
        let n = net(&d);
        for engine in ["ftree", "slimupdate"] {
            let o = json!({"links": ["s1-0[8]"], "engine": engine}).to_string();
            let v: Value = serde_json::from_str(&fail_files(&n, &o).unwrap()).unwrap();
            assert_eq!(v["failures"]["links_failed"], 1);
            assert_eq!(v["check"]["deadlock_free"], true, "{engine}");
            assert_eq!(v["check"]["unreachable"], 0);
            // Without re-routing, s1-0 still sends 3 of its 12 remote destinations into the dead
            // link, and each other leaf 1 of s1-0's 4 nodes (through s2-3): 6 pairs lost; and
            // two switch LIDs (s2-3's from s1-0 among them).
            assert_eq!(v["without_reroute"]["unreachable"], 8);
            assert_eq!(v["without_reroute"]["unreachable_switch_lids"], 2);
            assert_eq!(v["without_reroute"]["updown_violations"], 0);
            assert!(v["smps"].as_u64().unwrap() > 0);
            assert!(v["smps"].as_u64() <= v["full_reconfiguration_smps"].as_u64());
        }
        let o = json!({"switches": ["s2-0"], "engine": "slimupdate"}).to_string();
        let v: Value = serde_json::from_str(&fail_files(&n, &o).unwrap()).unwrap();
        assert_eq!(v["fabric"]["switches"], 7);
        assert_eq!(v["check"]["unreachable"], 0);
        let e = fail_files(&n, &json!({"links": ["nope[1]"]}).to_string()).unwrap_err();
        assert!(e.0.contains("no node named"), "{e}");
    }

    #[test]
    fn guid_and_slurm_files() {
        let d = tmp("files");
        let n = net(&d);
        let v: Value =
            serde_json::from_str(&guid_files(&n, d.to_str().unwrap(), &["h-0".into()]).unwrap())
                .unwrap();
        assert_eq!(
            (v["roots"].as_u64(), v["compute_nodes"].as_u64()),
            (Some(4), Some(15))
        );
        let roots = std::fs::read_to_string(d.join("root_guids.txt")).unwrap();
        assert_eq!(roots.lines().count(), 4);
        let topo = d.join("topology.conf");
        let ord = d.join("order.txt");
        slurm_files(&n, topo.to_str(), ord.to_str()).unwrap();
        let conf = std::fs::read_to_string(&topo).unwrap();
        assert!(
            conf.contains("SwitchName=s1-0 Nodes=h-0,h-1,h-2,h-3\n"),
            "{conf}"
        );
        assert!(
            conf.contains("SwitchName=s2-0 Switches=s1-0,s1-1,s1-2,s1-3\n"),
            "{conf}"
        );
        let order = std::fs::read_to_string(&ord).unwrap();
        assert_eq!(order.lines().take(2).collect::<Vec<_>>(), ["h-0", "h-1"]);
    }
}

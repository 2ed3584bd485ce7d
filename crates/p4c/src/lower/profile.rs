//! Action profiles and selectors (a table's `implementation`), as p4c writes them: the table
//! becomes `indirect` (profile) or `indirect_ws` (selector) and names its profile; the
//! pipeline's `action_profiles` list the profile once (`max_size`, and for a selector the hash
//! algorithm and its input, the table's `selector` keys). An instance declared in the control
//! keeps its qualified name; one written in the property is named by its `@name`, else
//! `action_profile_N` (p4c's fresh name next to the extern type's own).

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::lower::expr::Ref;
use crate::lower::{Lowerer, Scope};
use serde_json::{json, Value};

/// What P4Info needs of an action profile or selector.
#[derive(Debug, Clone)]
pub struct ProfileInfo {
    pub name: String,
    pub with_selector: bool,
    pub size: u64,
    /// Tables using it (qualified names), in declaration order (p4c's P4Info order).
    pub tables: Vec<String>,
    /// Where each of `tables` is declared (file, line, column).
    table_locs: Vec<(u32, u32, u32)>,
    pub annotations: Vec<Annotation>,
    /// Hash algorithm (selectors).
    pub algo: Option<String>,
    /// Where it is declared (the pipeline lists profiles in source order).
    pub loc: Loc,
    /// The JSON entry was written (for the pipeline being lowered).
    pub emitted_in: Option<String>,
}

/// The hash algorithms p4c accepts for a selector, with their bmv2 names.
const SELECTOR_ALGOS: &[&str] = &[
    "crc32",
    "crc32_custom",
    "crc16",
    "crc16_custom",
    "random",
    "identity",
    "csum16",
    "xor16",
];

impl Lowerer<'_> {
    /// Names the profile table `t` of `control` writes in its `implementation`, if any: its
    /// `@name`, else `action_profile_N` in declaration order (before the graph is built).
    pub fn name_anonymous_profile(&mut self, control: &str, t: &TableDecl) {
        let anonymous = t
            .props
            .iter()
            .any(|(p, e, _)| p == "implementation" && matches!(e, Expr::Call { .. }));
        if !anonymous {
            return;
        }
        let name = match annotation(&t.impl_annotations, "name") {
            Some(a) => a.body.trim_matches('"').trim_start_matches('.').to_string(),
            None => {
                if !self.used_names.contains_key("action_profile") {
                    self.fresh("action_profile");
                }
                self.fresh("action_profile")
            }
        };
        self.anonymous_profiles
            .insert((control.to_string(), t.name.clone()), name);
    }

    /// The pipeline's profiles in source order, numbered from the pipeline's first id.
    pub fn order_profiles(&mut self) {
        let loc_of = |l: &Lowerer, j: &Value| {
            l.profiles
                .iter()
                .find(|p| j["name"] == p.name.as_str())
                .map(|p| (p.loc.file, p.loc.line, p.loc.col))
        };
        let mut ps = std::mem::take(&mut self.action_profiles);
        let first = ps
            .iter()
            .filter_map(|j| j["id"].as_u64())
            .min()
            .unwrap_or(0);
        ps.sort_by_key(|j| loc_of(self, j));
        for (i, j) in ps.iter_mut().enumerate() {
            j["id"] = json!(first + i as u64);
        }
        self.action_profiles = ps;
    }

    /// Records `action_profile(size)` / `action_selector(algo, size, width)` named `name`.
    pub fn declare_profile(
        &mut self,
        name: &str,
        ty: &str,
        args: &[Expr],
        annotations: &[Annotation],
        loc: Loc,
    ) -> Res<()> {
        let (with_selector, size_arg, want) = match ty {
            "action_profile" => (false, 0, 1),
            _ => (true, 1, 3),
        };
        if args.len() != want {
            return fail(
                loc,
                format!(
                    "{ty} takes {want} argument{}",
                    if want == 1 { "" } else { "s" }
                ),
            );
        }
        let size = match self.env.const_value(&args[size_arg]) {
            Ok((v, _)) => v as u64,
            Err(_) => {
                return fail(
                    args[size_arg].loc(),
                    format!("{ty}'s size must be a constant"),
                )
            }
        };
        let algo = if with_selector {
            match &args[0] {
                Expr::Member(b, m, _)
                    if matches!(&**b, Expr::Name(n, _) if n == "HashAlgorithm")
                        && SELECTOR_ALGOS.contains(&m.as_str()) =>
                {
                    Some(m.clone())
                }
                e => {
                    return fail(
                        e.loc(),
                        "the selector's algorithm must be a HashAlgorithm member, e.g. HashAlgorithm.crc16",
                    )
                }
            }
        } else {
            None
        };
        self.profiles.push(ProfileInfo {
            name: name.to_string(),
            with_selector,
            size,
            tables: Vec::new(),
            table_locs: Vec::new(),
            annotations: annotations.to_vec(),
            algo,
            emitted_in: None,
            loc,
        });
        Ok(())
    }

    /// The table `t`'s implementation `e`: the profile's name and whether it selects, after
    /// adding the table to it and the profile to the pipeline's `action_profiles`.
    pub fn table_implementation(
        &mut self,
        sc: &Scope,
        t: &TableDecl,
        table: &str,
        e: &Expr,
        selector_input: &[Value],
    ) -> Res<(String, bool)> {
        let name =
            match e {
                Expr::Call { func, args, .. } => {
                    let ty = match &**func {
                        Expr::Name(n, _) if n == "action_profile" || n == "action_selector" => n,
                        _ => {
                            return fail(
                                e.loc(),
                                "implementation must be an action_profile or action_selector",
                            )
                        }
                    };
                    let key = (sc.block.clone(), t.name.clone());
                    let Some(name) = self.anonymous_profiles.get(&key).cloned() else {
                        return fail(e.loc(), "internal: the profile was not named");
                    };
                    if !self.profiles.iter().any(|p| p.name == name) {
                        self.declare_profile(&name, ty, args, &t.impl_annotations, e.loc())?;
                    }
                    name
                }
                _ => match self.resolve(sc, e) {
                    Ok(Ref::Extern(n, ty, _))
                        if ty == "action_profile"
                            || ty == "action_selector"
                            || ty == "ActionProfile" =>
                    {
                        n
                    }
                    _ => return fail(
                        e.loc(),
                        "implementation must name an action_profile or action_selector instance",
                    ),
                },
            };
        let pipeline = self.pipeline.clone();
        let next_id = self
            .profiles
            .iter()
            .filter(|p| p.emitted_in.is_some())
            .count();
        let Some(p) = self.profiles.iter_mut().find(|p| p.name == name) else {
            return fail(e.loc(), format!("no action profile '{name}'"));
        };
        match (p.with_selector, selector_input.is_empty()) {
            (true, true) => {
                return fail(
                    t.loc,
                    format!("table {} uses the selector {name} but has no `selector` key", t.name),
                )
            }
            (false, false) => {
                return fail(
                    t.loc,
                    format!("table {} has `selector` keys but {name} is an action_profile, not an action_selector", t.name),
                )
            }
            _ => {}
        }
        if !p.tables.iter().any(|x| x == table) {
            // tables are lowered back to front: keep them in declaration order
            let at = (t.loc.file, t.loc.line, t.loc.col);
            let i = p.table_locs.partition_point(|l| *l < at);
            p.tables.insert(i, table.to_string());
            p.table_locs.insert(i, at);
        }
        match &p.emitted_in {
            Some(pl) if *pl != pipeline => {
                return fail(
                    t.loc,
                    format!("{name} is used in both ingress and egress: bmv2 profiles belong to one pipeline"),
                )
            }
            Some(_) => {
                // a selector shared by tables must hash the same input
                let same = self
                    .action_profiles
                    .iter()
                    .find(|j| j["name"] == name.as_str())
                    .is_none_or(|j| !p.with_selector || j["selector"]["input"] == json!(selector_input));
                if !same {
                    return fail(t.loc, format!("tables sharing the selector {name} must have the same selector keys"));
                }
            }
            None => {
                p.emitted_in = Some(pipeline);
                let mut j = json!({"name": name, "id": next_id, "max_size": p.size});
                if let Some(a) = &p.algo {
                    j["selector"] = json!({"algo": a, "input": selector_input});
                }
                self.action_profiles.push(j);
            }
        }
        let with_selector = self
            .profiles
            .iter()
            .any(|p| p.name == name && p.with_selector);
        Ok((name, with_selector))
    }
}

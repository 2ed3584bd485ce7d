//! A table action whose leading in/out/inout parameters are bound in the table's `actions`
//! list (`actions = { set(hdr.f); }`): one action per binding, taking only the directionless
//! parameters as control-plane data, its body a call of the declared action with the bound
//! arguments (inlined there with copy-in/copy-out as any action call is).

use crate::ast::*;
use crate::diag::{fail, Res};
use crate::lower::{Binding, Lowerer, Scope};

/// The lowered action a table offers for one entry of its `actions` list.
pub struct Offered {
    /// The name the control plane knows it by.
    pub qualified: String,
    pub id: u64,
    /// Its control-plane parameters (the directionless ones).
    pub decl: ActionDecl,
    /// How many leading arguments the `actions` list binds (and a default or entry repeats).
    pub bound: usize,
}

impl Lowerer<'_> {
    /// The action `r` of table `table` (qualified name), lowered on first use.
    pub fn offered_action(&mut self, sc: &Scope, table: &str, r: &ActionRef) -> Res<Offered> {
        let Some(Binding::Action(q)) = sc.get(&r.name).cloned() else {
            return fail(r.loc, format!("'{}' is not an action", r.name));
        };
        let Some(decl) = self.find_action(sc, &q) else {
            return fail(r.loc, format!("action '{}' not found", r.name));
        };
        let bound = decl.params.iter().filter(|p| p.dir != Dir::None).count();
        if bound == 0 {
            if !r.args.is_empty() {
                return fail(
                    r.loc,
                    "arguments in a table's action list bind only in/out/inout parameters",
                );
            }
            let id = self.lower_action(sc, &decl, &q)?;
            return Ok(Offered {
                qualified: q,
                id,
                decl,
                bound,
            });
        }
        if r.args.len() != bound || decl.params[..bound].iter().any(|p| p.dir == Dir::None) {
            return fail(
                r.loc,
                format!(
                    "action {} in a table's action list must bind exactly its {bound} leading in/out/inout parameter(s)",
                    decl.name
                ),
            );
        }
        let data_params: Vec<Param> = decl.params[bound..].to_vec();
        let mut names = Vec::new();
        for a in &r.args {
            crate::alias::reads_of(a, &mut names);
        }
        if let Some(p) = data_params.iter().find(|p| {
            names
                .iter()
                .any(|n| n.split(['.', '[']).next() == Some(p.name.as_str()))
        }) {
            return fail(
                r.loc,
                format!(
                    "a bound argument of action {} names '{}', also one of its parameters",
                    decl.name, p.name
                ),
            );
        }
        let mut args = r.args.clone();
        args.extend(
            data_params
                .iter()
                .map(|p| Expr::Name(p.name.clone(), p.loc)),
        );
        let call = Expr::Call {
            func: Box::new(Expr::Name(r.name.clone(), r.loc)),
            type_args: Vec::new(),
            args,
            loc: r.loc,
        };
        let wrapper = ActionDecl {
            name: decl.name.clone(),
            params: data_params,
            body: vec![Stmt::Call(call, r.loc)],
            loc: decl.loc,
            annotations: decl.annotations.clone(),
        };
        let key = format!("{q}@{table}");
        let id = self.lower_action(sc, &wrapper, &key)?;
        // every copy goes by the declared action's name, as p4c names them
        self.actions[id as usize]["name"] = q.clone().into();
        self.action_ids.entry(q.clone()).or_insert(id);
        if let Some(t) = self.action_param_types.get(&key).cloned() {
            self.action_param_types.entry(q.clone()).or_insert(t);
        }
        self.action_annotations
            .entry(q.clone())
            .or_insert_with(|| wrapper.annotations.clone());
        Ok(Offered {
            qualified: q,
            id,
            decl: wrapper,
            bound,
        })
    }
}

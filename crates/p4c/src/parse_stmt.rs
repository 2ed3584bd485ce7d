//! Statements, parser states, control bodies, actions and tables.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::lexer::Tok;
use crate::parse::Parser;

impl Parser {
    pub fn block(&mut self) -> Res<Vec<Stmt>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            if self.at_eof() {
                return fail(self.loc(), "missing '}' at end of file");
            }
            out.push(self.stmt()?);
        }
        Ok(out)
    }

    /// A statement as a block (the branch of an `if`).
    fn branch(&mut self) -> Res<Vec<Stmt>> {
        if self.is("{") {
            self.block()
        } else {
            Ok(vec![self.stmt()?])
        }
    }

    pub(crate) fn is_decl_start(&self) -> bool {
        if !self.starts_type() {
            return false;
        }
        match self.peek() {
            Tok::Ident(s) if matches!(s.as_str(), "bit" | "int" | "varbit" | "bool" | "tuple") => {
                true
            }
            _ => {
                // `T x`, `T<..> x`, `T[n] x` (a stack): T is a type name, never a variable
                matches!(self.peek_at(1), Tok::Ident(_))
                    || matches!(self.peek_at(1), Tok::Punct("<") | Tok::Punct("["))
            }
        }
    }

    pub fn stmt(&mut self) -> Res<Stmt> {
        self.annotations()?;
        let loc = self.loc();
        if self.is("{") {
            return Ok(Stmt::Block(self.block()?));
        }
        if self.eat(";") {
            return Ok(Stmt::Empty);
        }
        if self.eat_kw("if") {
            self.expect("(")?;
            let c = self.expr()?;
            self.expect(")")?;
            let t = self.branch()?;
            let e = if self.eat_kw("else") {
                self.branch()?
            } else {
                Vec::new()
            };
            return Ok(Stmt::If(c, t, e, loc));
        }
        if self.eat_kw("switch") {
            self.expect("(")?;
            let e = self.expr()?;
            self.expect(")")?;
            self.expect("{")?;
            let mut cases = Vec::new();
            while !self.eat("}") {
                let lloc = self.loc();
                let (label, value) = if self.eat_kw("default") {
                    ("default".to_string(), None)
                } else {
                    // an action name (action_run) or a value
                    let v = self.expr()?;
                    (v.path().unwrap_or_default(), Some(v))
                };
                self.expect(":")?;
                let body = if self.is("{") {
                    Some(self.block()?)
                } else {
                    None
                };
                cases.push(SwitchCase {
                    labels: vec![(label, lloc)],
                    values: vec![value],
                    body,
                });
            }
            return Ok(Stmt::Switch(e, cases, loc));
        }
        if self.eat_kw("for") {
            return self.for_stmt(loc);
        }
        if self.eat_kw("break") {
            self.expect(";")?;
            return Ok(Stmt::Break(loc));
        }
        if self.eat_kw("continue") {
            self.expect(";")?;
            return Ok(Stmt::Continue(loc));
        }
        if self.eat_kw("exit") {
            self.expect(";")?;
            return Ok(Stmt::Exit(loc));
        }
        if self.eat_kw("return") {
            if !self.is(";") {
                let e = self.expr()?;
                self.expect(";")?;
                return Ok(Stmt::ReturnValue(e, loc));
            }
            self.expect(";")?;
            return Ok(Stmt::Return(loc));
        }
        if self.eat_kw("const") {
            let ty = self.ty()?;
            let (name, loc) = self.ident()?;
            self.expect("=")?;
            let value = self.expr()?;
            self.expect(";")?;
            return Ok(Stmt::Const {
                ty,
                name,
                value,
                loc,
            });
        }
        if self.is_decl_start() {
            let ty = self.ty()?;
            let (name, loc) = self.ident()?;
            let init = if self.eat("=") {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect(";")?;
            return Ok(Stmt::Var {
                ty,
                name,
                init,
                loc,
            });
        }
        let lhs = self.expr()?;
        if let Some((op, n)) = self.compound_assign() {
            let oloc = self.loc();
            self.i += n;
            let rhs = self.expr()?;
            self.expect(";")?;
            return crate::compound_assign::compound_assign(lhs, op, rhs, loc, oloc);
        }
        if self.eat("=") {
            let rhs = self.expr()?;
            self.expect(";")?;
            return Ok(Stmt::Assign(lhs, rhs, loc));
        }
        if !matches!(lhs, Expr::Call { .. }) {
            return fail(loc, "expected an assignment or a call here");
        }
        self.expect(";")?;
        Ok(Stmt::Call(lhs, loc))
    }

    pub fn action(&mut self, annotations: Vec<Annotation>) -> Res<ActionDecl> {
        self.expect_kw("action")?;
        let (name, loc) = self.ident()?;
        let params = self.params()?;
        let body = self.block()?;
        Ok(ActionDecl {
            name,
            params,
            body,
            loc,
            annotations,
        })
    }

    /// Local declarations shared by parsers and controls; None when the next item is not one.
    fn local(&mut self, anns: Vec<Annotation>) -> Res<Option<Local>> {
        if self.is_kw("action") {
            return Ok(Some(Local::Action(self.action(anns)?)));
        }
        if self.is_kw("table") {
            return Ok(Some(Local::Table(self.table(anns)?)));
        }
        if self.eat_kw("const") {
            let ty = self.ty()?;
            let (name, loc) = self.ident()?;
            self.expect("=")?;
            let value = self.expr()?;
            self.expect(";")?;
            return Ok(Some(Local::Const {
                ty,
                name,
                value,
                loc,
            }));
        }
        if matches!(self.peek(), Tok::Ident(_)) && !self.is_kw("state") && !self.is_kw("apply") {
            let ty = self.ty()?;
            if self.is("(") {
                return Ok(Some(Local::Instance(self.instance_rest(ty, anns)?)));
            }
            let (name, loc) = self.ident()?;
            let init = if self.eat("=") {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect(";")?;
            return Ok(Some(Local::Var {
                ty,
                name,
                init,
                loc,
            }));
        }
        Ok(None)
    }

    pub fn parser_body(&mut self, name: String, params: Vec<Param>, loc: Loc) -> Res<ParserDecl> {
        self.expect("{")?;
        let mut locals = Vec::new();
        let mut states = Vec::new();
        while !self.eat("}") {
            let anns = self.annotations()?;
            if self.eat_kw("state") {
                states.push(self.state()?);
                continue;
            }
            match self.local(anns)? {
                Some(l) => locals.push(l),
                None => {
                    return fail(
                        self.loc(),
                        format!(
                            "expected a state or a declaration, found {}",
                            self.describe()
                        ),
                    )
                }
            }
        }
        Ok(ParserDecl {
            name,
            params,
            locals,
            states,
            loc,
        })
    }

    fn state(&mut self) -> Res<State> {
        let (name, loc) = self.ident()?;
        self.expect("{")?;
        let mut body = Vec::new();
        let transition;
        loop {
            if self.is("}") {
                // no transition: reject, as the spec says
                transition = Transition::Goto("reject".into(), self.loc());
                break;
            }
            if self.eat_kw("transition") {
                transition = self.transition()?;
                break;
            }
            body.push(self.stmt()?);
        }
        self.expect("}")?;
        Ok(State {
            name,
            body,
            transition,
            loc,
        })
    }

    fn transition(&mut self) -> Res<Transition> {
        let loc = self.loc();
        if self.eat_kw("select") {
            self.expect("(")?;
            let mut keys = Vec::new();
            loop {
                keys.push(self.expr()?);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(")")?;
            self.expect("{")?;
            let mut cases = Vec::new();
            while !self.eat("}") {
                let cloc = self.loc();
                let values = self.keyset()?;
                self.expect(":")?;
                let (next, _) = self.ident()?;
                self.expect(";")?;
                cases.push(SelectCase {
                    values,
                    next,
                    loc: cloc,
                });
            }
            return Ok(Transition::Select { keys, cases, loc });
        }
        let (n, l) = self.ident()?;
        self.expect(";")?;
        Ok(Transition::Goto(n, l))
    }

    /// `(a, b &&& m, _)` or a single keyset expression.
    fn keyset(&mut self) -> Res<Vec<Expr>> {
        if self.is("(") {
            let save = self.i;
            self.i += 1;
            let mut vals = Vec::new();
            loop {
                vals.push(self.keyset_expr()?);
                if !self.eat(",") {
                    break;
                }
            }
            if self.eat(")") && (self.is(":") || vals.len() > 1) {
                return Ok(vals);
            }
            self.i = save;
        }
        Ok(vec![self.keyset_expr()?])
    }

    pub fn control_body(&mut self, name: String, params: Vec<Param>, loc: Loc) -> Res<ControlDecl> {
        self.expect("{")?;
        let mut locals = Vec::new();
        let mut apply = None;
        while !self.eat("}") {
            let anns = self.annotations()?;
            if self.eat_kw("apply") {
                apply = Some(self.block()?);
                continue;
            }
            match self.local(anns)? {
                Some(l) => locals.push(l),
                None => {
                    return fail(
                        self.loc(),
                        format!("expected a declaration or apply, found {}", self.describe()),
                    )
                }
            }
        }
        let Some(apply) = apply else {
            return fail(loc, format!("control '{name}' has no apply block"));
        };
        Ok(ControlDecl {
            name,
            params,
            ctor_params: Vec::new(),
            locals,
            apply,
            loc,
        })
    }

    fn action_ref(&mut self) -> Res<ActionRef> {
        let annotations = self.annotations()?;
        let (name, loc) = self.ident()?;
        let args = if self.is("(") {
            self.args()?
        } else {
            Vec::new()
        };
        Ok(ActionRef {
            name,
            args,
            loc,
            annotations,
        })
    }

    fn table(&mut self, annotations: Vec<Annotation>) -> Res<TableDecl> {
        self.expect_kw("table")?;
        let (name, loc) = self.ident()?;
        self.expect("{")?;
        let mut t = TableDecl {
            name,
            keys: Vec::new(),
            actions: Vec::new(),
            default_action: None,
            entries: None,
            size: None,
            props: Vec::new(),
            loc,
            annotations,
            impl_annotations: Vec::new(),
        };
        while !self.eat("}") {
            let prop_annotations = self.annotations()?;
            let is_const = self.eat_kw("const");
            let (prop, ploc) = self.ident()?;
            self.expect("=")?;
            match prop.as_str() {
                "key" => {
                    self.expect("{")?;
                    while !self.eat("}") {
                        let kloc = self.loc();
                        let expr = self.expr()?;
                        self.expect(":")?;
                        let (match_kind, _) = self.ident()?;
                        let annotations = self.annotations()?;
                        self.expect(";")?;
                        t.keys.push(KeyElem {
                            expr,
                            match_kind,
                            loc: kloc,
                            annotations,
                        });
                    }
                }
                "actions" => {
                    self.expect("{")?;
                    while !self.eat("}") {
                        t.actions.push(self.action_ref()?);
                        if !self.eat(";") && !self.eat(",") {
                            self.expect("}")?;
                            break;
                        }
                    }
                }
                "default_action" => {
                    t.default_action = Some((self.action_ref()?, is_const));
                    self.expect(";")?;
                }
                "entries" => {
                    self.expect("{")?;
                    let mut entries = Vec::new();
                    while !self.eat("}") {
                        let eloc = self.loc();
                        let mut priority = None;
                        if self.eat_kw("priority") {
                            self.expect("=")?;
                            priority = Some(self.expr()?);
                            self.expect(":")?;
                        }
                        let keys = self.keyset()?;
                        self.expect(":")?;
                        let action = self.action_ref()?;
                        // `@priority(n)` after the action: p4c's form of `priority = n:`
                        let trailing = self.annotations()?;
                        if let Some(a) = annotation(&trailing, "priority") {
                            priority = crate::parse::annotation_exprs(a)?.into_iter().next();
                        }
                        self.expect(";")?;
                        entries.push(ConstEntry {
                            keys,
                            action,
                            priority,
                            loc: eloc,
                        });
                    }
                    if !is_const {
                        return fail(ploc, "only 'const entries' are supported: add const");
                    }
                    t.entries = Some(entries);
                }
                "size" => {
                    t.size = Some(self.expr()?);
                    self.expect(";")?;
                }
                _ => {
                    let e = self.expr()?;
                    self.expect(";")?;
                    // PSA's names for v1model's table properties
                    let prop = match prop.as_str() {
                        "psa_implementation" => "implementation".to_string(),
                        "psa_direct_counter" => "counters".to_string(),
                        "psa_direct_meter" => "meters".to_string(),
                        _ => prop,
                    };
                    if prop == "implementation" {
                        t.impl_annotations = prop_annotations;
                    }
                    t.props.push((prop, e, ploc));
                }
            }
        }
        Ok(t)
    }
}

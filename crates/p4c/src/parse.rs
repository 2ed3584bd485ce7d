//! Recursive-descent parser, P4-16 grammar (the declarations; statements and expressions are in
//! `parse_stmt` and `parse_expr`). It knows which names are types, to tell `(T) e` casts and
//! variable declarations from expressions.

use crate::ast::*;
use crate::diag::{fail, Loc, Res};
use crate::lexer::{Tok, Token};
use std::collections::HashSet;

pub struct Parser {
    pub t: Vec<Token>,
    pub i: usize,
    pub type_names: HashSet<String>,
}

pub fn parse_program(tokens: Vec<Token>) -> Res<Vec<Decl>> {
    let mut p = Parser {
        t: tokens,
        i: 0,
        type_names: HashSet::new(),
    };
    let mut out = Vec::new();
    while !p.at_eof() {
        if p.eat(";") {
            continue;
        }
        out.push(p.decl()?);
    }
    Ok(out)
}

impl Parser {
    pub fn peek(&self) -> &Tok {
        &self.t[self.i.min(self.t.len() - 1)].tok
    }

    pub fn peek_at(&self, n: usize) -> &Tok {
        &self.t[(self.i + n).min(self.t.len() - 1)].tok
    }

    pub fn loc(&self) -> Loc {
        self.t[self.i.min(self.t.len() - 1)].loc
    }

    pub fn at_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }

    pub fn bump(&mut self) -> Token {
        let t = self.t[self.i.min(self.t.len() - 1)].clone();
        if self.i < self.t.len() {
            self.i += 1;
        }
        t
    }

    pub fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    pub fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(q) if q == k)
    }

    pub fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn eat_kw(&mut self, k: &str) -> bool {
        if self.is_kw(k) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn describe(&self) -> String {
        match self.peek() {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Int(v, _) => format!("'{v}'"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Directive(d, _) => format!("#{d}"),
            Tok::Eof => "end of file".into(),
        }
    }

    pub fn expect(&mut self, p: &str) -> Res<Loc> {
        let loc = self.loc();
        if self.eat(p) {
            Ok(loc)
        } else {
            fail(loc, format!("expected '{p}', found {}", self.describe()))
        }
    }

    pub fn expect_kw(&mut self, k: &str) -> Res<Loc> {
        let loc = self.loc();
        if self.eat_kw(k) {
            Ok(loc)
        } else {
            fail(loc, format!("expected '{k}', found {}", self.describe()))
        }
    }

    pub fn ident(&mut self) -> Res<(String, Loc)> {
        let loc = self.loc();
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.i += 1;
                Ok((s, loc))
            }
            _ => fail(loc, format!("expected a name, found {}", self.describe())),
        }
    }

    pub fn annotations(&mut self) -> Res<Vec<Annotation>> {
        let mut out = Vec::new();
        while self.is("@") {
            let loc = self.loc();
            self.i += 1;
            let (name, _) = self.ident()?;
            let mut body = String::new();
            if self.is("(") && self.t[self.i].joined || self.is("(") {
                self.i += 1;
                let mut depth = 1;
                loop {
                    let t = self.bump();
                    match &t.tok {
                        Tok::Punct("(") => depth += 1,
                        Tok::Punct(")") => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Tok::Eof => return fail(loc, "unterminated annotation"),
                        _ => {}
                    }
                    if !body.is_empty() && !t.joined {
                        body.push(' ');
                    }
                    body.push_str(&tok_text(&t.tok));
                }
            }
            out.push(Annotation { name, body, loc });
        }
        Ok(out)
    }

    fn decl(&mut self) -> Res<Decl> {
        let anns = self.annotations()?;
        let loc = self.loc();
        let kw = match self.peek() {
            Tok::Ident(s) => s.clone(),
            _ => {
                return fail(
                    loc,
                    format!("expected a declaration, found {}", self.describe()),
                )
            }
        };
        match kw.as_str() {
            "const" => {
                self.i += 1;
                let ty = self.ty()?;
                let (name, loc) = self.ident()?;
                self.expect("=")?;
                let value = self.expr()?;
                self.expect(";")?;
                Ok(Decl::Const {
                    ty,
                    name,
                    value,
                    loc,
                })
            }
            "typedef" | "type" => {
                self.i += 1;
                let ty = self.ty()?;
                let (name, loc) = self.ident()?;
                self.expect(";")?;
                self.type_names.insert(name.clone());
                Ok(Decl::Typedef {
                    name,
                    ty,
                    loc,
                    new_type: kw == "type",
                    annotations: anns,
                })
            }
            "header" | "struct" | "header_union" => {
                self.i += 1;
                let (name, loc) = self.ident()?;
                self.type_names.insert(name.clone());
                if self.is("<") {
                    return fail(self.loc(), "generic structs and headers are not supported");
                }
                let fields = self.fields()?;
                Ok(match kw.as_str() {
                    "header" => Decl::Header {
                        name,
                        fields,
                        loc,
                        annotations: anns,
                    },
                    "struct" => Decl::Struct { name, fields, loc },
                    _ => Decl::HeaderUnion { name, fields, loc },
                })
            }
            "enum" => {
                self.i += 1;
                let repr = if self.is_kw("bit") || self.is_kw("int") {
                    Some(self.ty()?)
                } else {
                    None
                };
                let (name, loc) = self.ident()?;
                self.type_names.insert(name.clone());
                self.expect("{")?;
                let mut members = Vec::new();
                while !self.eat("}") {
                    let (m, mloc) = self.ident()?;
                    let v = if self.eat("=") {
                        Some(self.expr()?)
                    } else {
                        None
                    };
                    members.push((m, v, mloc));
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                Ok(Decl::Enum {
                    name,
                    repr,
                    members,
                    loc,
                })
            }
            "error" | "match_kind" => {
                self.i += 1;
                self.expect("{")?;
                let mut members = Vec::new();
                while !self.eat("}") {
                    members.push(self.ident()?);
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                Ok(if kw == "error" {
                    Decl::Error { members }
                } else {
                    Decl::MatchKind { members }
                })
            }
            "extern" => {
                self.i += 1;
                self.extern_decl()
            }
            "parser" => {
                self.i += 1;
                let (name, loc) = self.ident()?;
                self.skip_type_params()?;
                let params = self.params()?;
                if self.eat(";") {
                    self.type_names.insert(name.clone());
                    return Ok(Decl::Signature);
                }
                let loc_ctor = self.loc();
                if !self.ctor_params()?.is_empty() {
                    return fail(
                        loc_ctor,
                        "constructor parameters of parsers are not supported",
                    );
                }
                Ok(Decl::Parser(Box::new(self.parser_body(name, params, loc)?)))
            }
            "control" => {
                self.i += 1;
                let (name, loc) = self.ident()?;
                self.skip_type_params()?;
                let params = self.params()?;
                if self.eat(";") {
                    self.type_names.insert(name.clone());
                    return Ok(Decl::Signature);
                }
                let ctor_params = self.ctor_params()?;
                let mut c = self.control_body(name, params, loc)?;
                c.ctor_params = ctor_params;
                Ok(Decl::Control(Box::new(c)))
            }
            "package" => {
                self.i += 1;
                let (name, _) = self.ident()?;
                self.type_names.insert(name.clone());
                self.skip_type_params()?;
                self.params()?;
                self.expect(";")?;
                Ok(Decl::Signature)
            }
            "action" => Ok(Decl::Action(self.action(anns)?)),
            "value_set" => {
                let loc = self.loc();
                Ok(Decl::ValueSet { loc })
            }
            _ => {
                // an instantiation `T(args) name;` or a function `T name(params) { ... }`
                let ty = self.ty()?;
                if self.is("(") {
                    let inst = self.instance_rest(ty, anns)?;
                    return Ok(Decl::Instance(inst));
                }
                let (name, loc) = self.ident()?;
                if self.is("<") {
                    return fail(
                        self.loc(),
                        format!("generic function '{name}' is not supported: give its types"),
                    );
                }
                let params = self.params()?;
                let body = self.block()?;
                Ok(Decl::Function(FunctionDecl {
                    ret: ty,
                    name,
                    params,
                    body,
                    loc,
                }))
            }
        }
    }

    pub fn instance_rest(&mut self, ty: Type, annotations: Vec<Annotation>) -> Res<Instance> {
        let args = self.args()?;
        let (name, loc) = self.ident()?;
        if self.is("=") {
            return fail(
                self.loc(),
                "extern instances with an initializer block are not supported",
            );
        }
        self.expect(";")?;
        Ok(Instance {
            ty,
            args,
            name,
            loc,
            annotations,
        })
    }

    fn fields(&mut self) -> Res<Vec<Field>> {
        self.expect("{")?;
        let mut out = Vec::new();
        while !self.eat("}") {
            let annotations = self.annotations()?;
            let ty = self.ty()?;
            let (name, loc) = self.ident()?;
            self.expect(";")?;
            out.push(Field {
                ty,
                name,
                loc,
                annotations,
            });
        }
        Ok(out)
    }

    fn skip_type_params(&mut self) -> Res<()> {
        if self.eat("<") {
            loop {
                let (n, _) = self.ident()?;
                self.type_names.insert(n);
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(">")?;
        }
        Ok(())
    }

    fn ctor_params(&mut self) -> Res<Vec<Param>> {
        if self.is("(") {
            return self.params();
        }
        Ok(Vec::new())
    }

    pub fn params(&mut self) -> Res<Vec<Param>> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            self.annotations()?;
            let dir = if self.eat_kw("inout") {
                Dir::InOut
            } else if self.eat_kw("in") {
                Dir::In
            } else if self.eat_kw("out") {
                Dir::Out
            } else {
                Dir::None
            };
            let ty = self.ty()?;
            let (name, loc) = self.ident()?;
            if self.eat("=") {
                self.expr()?; // default value: accepted, not used
            }
            out.push(Param { dir, ty, name, loc });
            if !self.eat(",") {
                break;
            }
        }
        self.expect(")")?;
        Ok(out)
    }

    fn extern_decl(&mut self) -> Res<Decl> {
        // object: `extern Name<T> { ... }`
        if let (Tok::Ident(name), Tok::Punct(p)) = (self.peek().clone(), self.peek_at(1).clone()) {
            if p == "{" || p == "<" && self.object_follows() {
                self.i += 1;
                self.type_names.insert(name.clone());
                self.skip_type_params()?;
                self.expect("{")?;
                let mut methods = Vec::new();
                while !self.eat("}") {
                    self.annotations()?;
                    methods.push(self.prototype_shape()?);
                }
                return Ok(Decl::Extern {
                    name,
                    methods,
                    is_function: false,
                });
            }
        }
        let (name, arity) = self.prototype_shape()?;
        Ok(Decl::Extern {
            name,
            methods: vec![(String::new(), arity)],
            is_function: true,
        })
    }

    /// After `extern Name <`: true when the `<...>` is followed by `{` (an object).
    fn object_follows(&self) -> bool {
        let mut j = self.i + 2;
        let mut depth = 1;
        while j < self.t.len() && depth > 0 {
            match &self.t[j].tok {
                Tok::Punct("<") => depth += 1,
                Tok::Punct(">") => depth -= 1,
                Tok::Eof => return false,
                _ => {}
            }
            j += 1;
        }
        matches!(self.t.get(j).map(|t| &t.tok), Some(Tok::Punct("{")))
    }

    /// A method or function prototype up to `;`: its name (the name before the parameter list)
    /// and number of parameters.
    fn prototype_shape(&mut self) -> Res<(String, usize)> {
        let mut last_ident = String::new();
        let mut angle = 0;
        loop {
            let t = self.bump();
            match &t.tok {
                Tok::Ident(s) if angle == 0 => last_ident = s.clone(),
                Tok::Punct("<") => angle += 1,
                Tok::Punct(">") => angle -= 1,
                Tok::Punct("(") if angle == 0 => {
                    self.i -= 1;
                    let params = self.params()?;
                    self.expect(";")?;
                    return Ok((last_ident, params.len()));
                }
                Tok::Eof => return fail(t.loc, "unterminated extern declaration"),
                _ => {}
            }
        }
    }
}

pub fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => s.clone(),
        Tok::Int(v, None) => v.to_string(),
        Tok::Int(v, Some((s, w))) => format!("{w}{}{v}", if *s { "s" } else { "w" }),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::Punct(p) => p.to_string(),
        Tok::Directive(d, r) => format!("#{d} {r}"),
        Tok::Eof => String::new(),
    }
}

/// The comma-separated expressions of an annotation's body, e.g. `@field_list(1, Lists.mirror)`.
pub fn annotation_exprs(a: &Annotation) -> Res<Vec<Expr>> {
    let mut t = crate::lexer::lex(&a.body, a.loc.file)?;
    for tok in &mut t {
        tok.loc = a.loc;
    }
    let mut p = Parser {
        t,
        i: 0,
        type_names: HashSet::new(),
    };
    let mut out = Vec::new();
    while !p.at_eof() {
        out.push(p.expr()?);
        if !p.eat(",") {
            break;
        }
    }
    if !p.at_eof() {
        return fail(
            a.loc,
            format!("@{}: expected expressions separated by commas", a.name),
        );
    }
    Ok(out)
}

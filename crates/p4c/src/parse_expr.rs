//! Types and expressions. Binary operators bind as in the P4-16 grammar (`==` looser than `&`).

use crate::ast::*;
use crate::diag::{fail, Res};
use crate::lexer::Tok;
use crate::parse::Parser;

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "==" | "!=" => 3,
        "<" | ">" | "<=" | ">=" => 4,
        "|" => 5,
        "^" => 6,
        "&" => 7,
        "<<" | ">>" => 8,
        "++" | "+" | "-" | "|+|" | "|-|" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

impl Parser {
    pub fn ty(&mut self) -> Res<Type> {
        let (name, loc) = self.ident()?;
        let t = match name.as_str() {
            "bit" | "int" | "varbit" => {
                let w = if self.eat("<") {
                    let w = if self.eat("(") {
                        let e = self.expr()?;
                        self.expect(")")?;
                        e
                    } else {
                        self.primary()?
                    };
                    self.expect(">")?;
                    w
                } else if name == "bit" {
                    Expr::Int {
                        value: 1,
                        width: None,
                        loc,
                    }
                } else if name == "int" {
                    return Ok(Type::UnsizedInt);
                } else {
                    return fail(loc, format!("'{name}' needs a width: {name}<W>"));
                };
                let w = Box::new(w);
                match name.as_str() {
                    "bit" => Type::Bit(w),
                    "int" => Type::Int(w),
                    _ => Type::Varbit(w),
                }
            }
            "bool" => Type::Bool,
            "void" => Type::Void,
            "error" => Type::Error,
            "string" => Type::Str,
            "tuple" | "list" => Type::Tuple(self.type_args()?),
            _ => {
                let args = if self.is("<") {
                    self.type_args()?
                } else {
                    Vec::new()
                };
                Type::Named(name, args, loc)
            }
        };
        if self.is("[") {
            self.i += 1;
            let n = self.expr()?;
            self.expect("]")?;
            return Ok(Type::Stack(Box::new(t), Box::new(n)));
        }
        Ok(t)
    }

    fn type_args(&mut self) -> Res<Vec<Type>> {
        self.expect("<")?;
        let mut out = Vec::new();
        loop {
            if self.is("_") {
                self.i += 1;
                out.push(Type::DontCare);
            } else {
                out.push(self.ty()?);
            }
            if !self.eat(",") {
                break;
            }
        }
        self.expect(">")?;
        Ok(out)
    }

    /// True when the tokens ahead start a type (for casts and declarations).
    pub fn starts_type(&self) -> bool {
        match self.peek() {
            Tok::Ident(s) => {
                matches!(s.as_str(), "bit" | "int" | "varbit" | "bool" | "tuple")
                    || self.type_names.contains(s)
            }
            _ => false,
        }
    }

    pub fn args(&mut self) -> Res<Vec<Expr>> {
        self.expect("(")?;
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            if self.is("_") {
                let loc = self.loc();
                self.i += 1;
                out.push(Expr::Default(loc));
            } else {
                // named arguments `name = value`: the name is dropped (positional order kept)
                if matches!(self.peek(), Tok::Ident(_))
                    && matches!(self.peek_at(1), Tok::Punct("="))
                {
                    self.i += 2;
                }
                out.push(self.expr()?);
            }
            if !self.eat(",") {
                break;
            }
        }
        self.expect(")")?;
        Ok(out)
    }

    pub fn expr(&mut self) -> Res<Expr> {
        let c = self.binary(1)?;
        if self.is("?") {
            let loc = self.loc();
            self.i += 1;
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(Expr::Mux(Box::new(c), Box::new(a), Box::new(b), loc));
        }
        Ok(c)
    }

    /// An expression in a select case or table entry: may be a mask, a range, `default`, `_`.
    pub fn keyset_expr(&mut self) -> Res<Expr> {
        let loc = self.loc();
        if self.eat_kw("default") || self.eat("_") {
            return Ok(Expr::Default(loc));
        }
        let e = self.expr()?;
        let loc = self.loc();
        if self.eat("&&&") {
            let m = self.expr()?;
            return Ok(Expr::Mask(Box::new(e), Box::new(m), loc));
        }
        if self.eat("..") {
            let m = self.expr()?;
            return Ok(Expr::Range(Box::new(e), Box::new(m), loc));
        }
        Ok(e)
    }

    /// The binary operator ahead, if any (`>>` is two adjacent `>` tokens).
    fn binop(&self) -> Option<(&'static str, usize)> {
        match self.peek() {
            Tok::Punct(">")
                if matches!(self.peek_at(1), Tok::Punct(">")) && self.t[self.i + 1].joined =>
            {
                Some((">>", 2))
            }
            Tok::Punct("|")
                if matches!(self.peek_at(1), Tok::Punct("+"))
                    && matches!(self.peek_at(2), Tok::Punct("|")) =>
            {
                Some(("|+|", 3))
            }
            Tok::Punct("|")
                if matches!(self.peek_at(1), Tok::Punct("-"))
                    && matches!(self.peek_at(2), Tok::Punct("|")) =>
            {
                Some(("|-|", 3))
            }
            Tok::Punct(p) if prec(p).is_some() => Some((p, 1)),
            _ => None,
        }
    }

    /// The compound assignment ahead (`+=`, `<<=`, `>>=`, `|+|=`): its operator and tokens.
    pub fn compound_assign(&self) -> Option<(&'static str, usize)> {
        let eq_at = |n: usize, q: &str| {
            matches!(self.peek_at(n), Tok::Punct(p) if *p == q)
                && self.t.get(self.i + n).is_some_and(|t| t.joined)
        };
        if self.is(">") && eq_at(1, ">=") {
            return Some((">>", 2));
        }
        let (op, n) = self.binop()?;
        let arith = !matches!(
            op,
            "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||" | "&&&"
        );
        (arith && eq_at(n, "=")).then_some((op, n + 1))
    }

    fn binary(&mut self, min: u8) -> Res<Expr> {
        let mut l = self.unary()?;
        while let Some((op, n)) = self.binop() {
            if self.compound_assign().is_some() {
                break;
            }
            let p = prec(op).unwrap_or(0);
            if p < min {
                break;
            }
            let loc = self.loc();
            self.i += n;
            let r = self.binary(p + 1)?;
            l = Expr::Binary(op, Box::new(l), Box::new(r), loc);
        }
        Ok(l)
    }

    fn unary(&mut self) -> Res<Expr> {
        let loc = self.loc();
        for op in ["!", "~", "-", "+"] {
            if self.eat(op) {
                let e = self.unary()?;
                if op == "+" {
                    return Ok(e);
                }
                return Ok(Expr::Unary(op, Box::new(e), loc));
            }
        }
        if self.is("(")
            && {
                let save = self.i;
                self.i += 1;
                let is_cast = self.starts_type()
                    && (!matches!(self.peek(), Tok::Ident(s) if !matches!(s.as_str(), "bit"|"int"|"varbit"|"bool"))
                        || matches!(self.peek_at(1), Tok::Punct(")")));
                self.i = save;
                is_cast
            }
        {
            self.i += 1;
            let ty = self.ty()?;
            self.expect(")")?;
            let e = self.unary()?;
            return Ok(Expr::Cast(ty, Box::new(e), loc));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Res<Expr> {
        let mut e = self.primary()?;
        loop {
            let loc = self.loc();
            if self.eat(".") {
                let (n, nloc) = self.ident()?;
                e = Expr::Member(Box::new(e), n, nloc);
            } else if self.eat("[") {
                let a = self.expr()?;
                if self.eat(":") {
                    let b = self.expr()?;
                    self.expect("]")?;
                    e = Expr::Slice(Box::new(e), Box::new(a), Box::new(b), loc);
                } else {
                    self.expect("]")?;
                    e = Expr::Index(Box::new(e), Box::new(a), loc);
                }
            } else if self.is("(") {
                let args = self.args()?;
                e = Expr::Call {
                    func: Box::new(e),
                    type_args: Vec::new(),
                    args,
                    loc,
                };
            } else if self.is("<") && matches!(e, Expr::Name(..) | Expr::Member(..)) {
                // generic call `f<T>(...)`, else `<` is a comparison
                let save = self.i;
                match self.type_args() {
                    Ok(type_args) if self.is("(") => {
                        let args = self.args()?;
                        e = Expr::Call {
                            func: Box::new(e),
                            type_args,
                            args,
                            loc,
                        };
                    }
                    _ => {
                        self.i = save;
                        break;
                    }
                }
            } else {
                break;
            }
        }
        Ok(e)
    }

    pub fn primary(&mut self) -> Res<Expr> {
        let loc = self.loc();
        let t = self.bump();
        Ok(match t.tok {
            Tok::Int(value, width) => Expr::Int { value, width, loc },
            Tok::Str(s) => Expr::Str(s, loc),
            Tok::Ident(s) if s == "true" => Expr::Bool(true, loc),
            Tok::Ident(s) if s == "false" => Expr::Bool(false, loc),
            Tok::Ident(s) if s == "default" => Expr::Default(loc),
            Tok::Ident(s) => Expr::Name(s, loc),
            Tok::Punct("_") => Expr::Default(loc),
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                e
            }
            Tok::Punct("{") => {
                let mut items = Vec::new();
                while !self.eat("}") {
                    items.push(self.expr()?);
                    if !self.eat(",") {
                        self.expect("}")?;
                        break;
                    }
                }
                Expr::List(items, loc)
            }
            _ => {
                self.i -= 1;
                return fail(
                    loc,
                    format!("expected an expression, found {}", self.describe()),
                );
            }
        })
    }
}

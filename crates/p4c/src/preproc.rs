//! The C-style preprocessor P4 programs use: `#include`, object-like `#define` / `#undef`,
//! `#if` / `#ifdef` / `#ifndef` / `#elif` / `#else` / `#endif`, `#error`; `#pragma` and `#line`
//! are ignored. Works on the lexer's tokens; macro uses take the location of the use.

use crate::diag::{fail, Error, Loc, Res};
use crate::lexer::{lex, Tok, Token};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub struct Sources {
    /// Path of each file, indexed by `Loc::file`.
    pub files: Vec<PathBuf>,
}

pub struct Options<'a> {
    pub include_dirs: &'a [PathBuf],
    pub defines: &'a [(String, String)],
}

struct Pre<'a> {
    opts: &'a Options<'a>,
    files: Vec<PathBuf>,
    macros: HashMap<String, Vec<Token>>,
    out: Vec<Token>,
    depth: usize,
}

/// Preprocesses `main` (and what it includes) into one token stream ending in `Eof`.
pub fn preprocess(main: &Path, opts: &Options) -> Result<(Vec<Token>, Sources), (Error, Sources)> {
    let mut p = Pre {
        opts,
        files: Vec::new(),
        macros: HashMap::new(),
        out: Vec::new(),
        depth: 0,
    };
    for (name, value) in opts.defines {
        let toks = lex(value, 0).map(|mut t| {
            t.pop();
            t
        });
        p.macros.insert(name.clone(), toks.unwrap_or_default());
    }
    let r = p.file(main, Loc::default());
    let loc = p.out.last().map(|t| t.loc).unwrap_or_default();
    let sources = Sources { files: p.files };
    match r {
        Ok(()) => {
            let mut out = p.out;
            out.push(Token {
                tok: Tok::Eof,
                loc,
                joined: false,
            });
            Ok((out, sources))
        }
        Err(e) => Err((e, sources)),
    }
}

/// One level of `#if` nesting: whether this branch is live, whether any branch was taken.
struct Cond {
    live: bool,
    taken: bool,
    outer_live: bool,
}

impl Pre<'_> {
    fn file(&mut self, path: &Path, from: Loc) -> Res<()> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => return fail(from, format!("cannot read {}: {e}", path.display())),
        };
        self.source(path, &text, from)
    }

    fn source(&mut self, path: &Path, text: &str, from: Loc) -> Res<()> {
        self.depth += 1;
        if self.depth > 50 {
            return fail(from, "#include nested too deeply (an include cycle?)");
        }
        let id = self.files.len() as u32;
        self.files.push(path.to_path_buf());
        let toks = lex(text, id)?;
        let mut conds: Vec<Cond> = Vec::new();
        let live = |c: &Vec<Cond>| c.last().is_none_or(|c| c.live);
        for t in toks {
            match &t.tok {
                Tok::Eof => break,
                Tok::Directive(name, rest) => {
                    let is_live = live(&conds);
                    match name.as_str() {
                        "ifdef" | "ifndef" => {
                            let defined = self.macros.contains_key(rest.trim());
                            let v = defined == (name == "ifdef");
                            conds.push(Cond {
                                live: is_live && v,
                                taken: v,
                                outer_live: is_live,
                            });
                        }
                        "if" => {
                            let v = is_live && self.eval(rest, t.loc)? != 0;
                            conds.push(Cond {
                                live: v,
                                taken: v,
                                outer_live: is_live,
                            });
                        }
                        "elif" => {
                            let Some(c) = conds.last() else {
                                return fail(t.loc, "#elif without #if");
                            };
                            let (outer, taken) = (c.outer_live, c.taken);
                            let v = outer && !taken && self.eval(rest, t.loc)? != 0;
                            let c = conds.last_mut().expect("checked");
                            c.live = v;
                            c.taken |= v;
                        }
                        "else" => {
                            let Some(c) = conds.last_mut() else {
                                return fail(t.loc, "#else without #if");
                            };
                            c.live = c.outer_live && !c.taken;
                            c.taken = true;
                        }
                        "endif" => {
                            if conds.pop().is_none() {
                                return fail(t.loc, "#endif without #if");
                            }
                        }
                        _ if !is_live => {}
                        "include" => self.include(rest, t.loc, path)?,
                        "define" => self.define(rest, t.loc)?,
                        "undef" => {
                            self.macros.remove(rest.trim());
                        }
                        "error" => return fail(t.loc, format!("#error {rest}")),
                        "pragma" | "line" | "warning" => {}
                        other => return fail(t.loc, format!("unknown directive #{other}")),
                    }
                }
                _ if !live(&conds) => {}
                _ => self.emit(t, &mut HashSet::new())?,
            }
        }
        if !conds.is_empty() {
            return fail(
                Loc {
                    file: id,
                    line: 0,
                    col: 0,
                },
                "missing #endif at end of file",
            );
        }
        self.depth -= 1;
        Ok(())
    }

    fn emit(&mut self, t: Token, expanding: &mut HashSet<String>) -> Res<()> {
        if let Tok::Ident(name) = &t.tok {
            if !expanding.contains(name) {
                if let Some(body) = self.macros.get(name).cloned() {
                    expanding.insert(name.clone());
                    for (i, mut b) in body.into_iter().enumerate() {
                        b.loc = t.loc;
                        if i == 0 {
                            b.joined = t.joined;
                        }
                        self.emit(b, expanding)?;
                    }
                    expanding.remove(name);
                    return Ok(());
                }
            }
        }
        self.out.push(t);
        Ok(())
    }

    fn include(&mut self, rest: &str, loc: Loc, current: &Path) -> Res<()> {
        let rest = rest.trim();
        let (name, quoted) =
            if let Some(n) = rest.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
                (n, false)
            } else if let Some(n) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                (n, true)
            } else {
                return fail(
                    loc,
                    format!("#include expects <file> or \"file\", got '{rest}'"),
                );
            };
        let mut dirs: Vec<PathBuf> = Vec::new();
        if quoted {
            dirs.push(current.parent().unwrap_or(Path::new(".")).to_path_buf());
        }
        dirs.extend(self.opts.include_dirs.iter().cloned());
        for d in dirs {
            let p = d.join(name);
            if p.is_file() {
                return self.file(&p, loc);
            }
        }
        let builtin = match name {
            "core.p4" => Some(crate::CORE_P4),
            "v1model.p4" => Some(crate::V1MODEL_P4),
            _ => None,
        };
        if let Some(text) = builtin {
            return self.source(&Path::new("p4/include").join(name), text, loc);
        }
        fail(
            loc,
            format!(
                "cannot find include file '{name}': give its directory with -I DIR (searched: {})",
                self.opts
                    .include_dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }

    fn define(&mut self, rest: &str, loc: Loc) -> Res<()> {
        let name_end = rest
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        if name.is_empty() {
            return fail(loc, "#define needs a name");
        }
        if rest[name_end..].starts_with('(') {
            return fail(
                loc,
                format!("function-like macro '{name}' is not supported: use a const or an action"),
            );
        }
        let mut body = lex(&rest[name_end..], loc.file).map_err(|mut e| {
            e.loc = loc;
            e
        })?;
        body.pop();
        self.macros.insert(name.to_string(), body);
        Ok(())
    }

    /// Value of an `#if` expression.
    fn eval(&self, text: &str, loc: Loc) -> Res<i128> {
        let toks = lex(text, loc.file).map_err(|mut e| {
            e.loc = loc;
            e
        })?;
        // expand macros (not inside defined(...)) to a flat list
        let mut flat: Vec<Tok> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            match &toks[i].tok {
                Tok::Ident(n) if n == "defined" => {
                    let (name, skip) = match (
                        &toks.get(i + 1).map(|t| &t.tok),
                        &toks.get(i + 2).map(|t| &t.tok),
                    ) {
                        (Some(Tok::Punct("(")), Some(Tok::Ident(n))) => (n.clone(), 4),
                        (Some(Tok::Ident(n)), _) => (n.clone(), 2),
                        _ => return fail(loc, "defined needs a macro name"),
                    };
                    flat.push(Tok::Int(u128::from(self.macros.contains_key(&name)), None));
                    i += skip;
                }
                Tok::Ident(n) => {
                    match self.macros.get(n) {
                        Some(body) => flat.extend(body.iter().map(|t| t.tok.clone())),
                        None => flat.push(Tok::Int(0, None)),
                    }
                    i += 1;
                }
                t => {
                    flat.push(t.clone());
                    i += 1;
                }
            }
        }
        let mut ev = CondEval {
            t: &flat,
            i: 0,
            loc,
        };
        let v = ev.expr(0)?;
        if !matches!(ev.t.get(ev.i), Some(Tok::Eof) | None) {
            return fail(loc, "cannot evaluate this #if expression");
        }
        Ok(v)
    }
}

struct CondEval<'a> {
    t: &'a [Tok],
    i: usize,
    loc: Loc,
}

impl CondEval<'_> {
    fn prec(op: &str) -> Option<u8> {
        Some(match op {
            "||" => 1,
            "&&" => 2,
            "|" => 3,
            "^" => 4,
            "&" => 5,
            "==" | "!=" => 6,
            "<" | ">" | "<=" | ">=" => 7,
            "<<" => 8,
            "+" | "-" => 9,
            "*" | "/" | "%" => 10,
            _ => return None,
        })
    }

    fn expr(&mut self, min: u8) -> Res<i128> {
        let mut l = self.unary()?;
        while let Some(Tok::Punct(op)) = self.t.get(self.i) {
            let Some(p) = Self::prec(op) else { break };
            if p < min {
                break;
            }
            self.i += 1;
            let r = self.expr(p + 1)?;
            l = match *op {
                "||" => i128::from(l != 0 || r != 0),
                "&&" => i128::from(l != 0 && r != 0),
                "|" => l | r,
                "^" => l ^ r,
                "&" => l & r,
                "==" => i128::from(l == r),
                "!=" => i128::from(l != r),
                "<" => i128::from(l < r),
                ">" => i128::from(l > r),
                "<=" => i128::from(l <= r),
                ">=" => i128::from(l >= r),
                "<<" => l.wrapping_shl(r as u32),
                "+" => l.wrapping_add(r),
                "-" => l.wrapping_sub(r),
                "*" => l.wrapping_mul(r),
                "/" | "%" if r == 0 => return fail(self.loc, "division by zero in #if"),
                "/" => l / r,
                _ => l % r,
            };
        }
        Ok(l)
    }

    fn unary(&mut self) -> Res<i128> {
        let t = self.t.get(self.i).cloned();
        self.i += 1;
        match t {
            Some(Tok::Int(v, _)) => Ok(v as i128),
            Some(Tok::Punct("!")) => Ok(i128::from(self.unary()? == 0)),
            Some(Tok::Punct("-")) => Ok(-self.unary()?),
            Some(Tok::Punct("(")) => {
                let v = self.expr(0)?;
                if self.t.get(self.i) != Some(&Tok::Punct(")")) {
                    return fail(self.loc, "missing ) in #if expression");
                }
                self.i += 1;
                Ok(v)
            }
            _ => fail(self.loc, "cannot evaluate this #if expression"),
        }
    }
}

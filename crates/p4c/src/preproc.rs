//! The C-style preprocessor P4 programs use: `#include`, object-like and function-like
//! `#define` (`#define F(a, b) ...`, arguments expanded before they are substituted) / `#undef`,
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

/// A macro: its parameters (None for an object-like macro) and its body.
#[derive(Clone)]
struct Macro {
    params: Option<Vec<String>>,
    body: Vec<Token>,
}

pub struct Options<'a> {
    pub include_dirs: &'a [PathBuf],
    pub defines: &'a [(String, String)],
}

struct Pre<'a> {
    opts: &'a Options<'a>,
    files: Vec<PathBuf>,
    macros: HashMap<String, Macro>,
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
        let mut body = toks.unwrap_or_default();
        for b in &mut body {
            b.loc.file = u32::MAX;
        }
        p.macros.insert(name.clone(), Macro { params: None, body });
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
        // live tokens since the last directive, expanded together so that a function-like
        // macro's arguments may span lines
        let mut pending: Vec<Token> = Vec::new();
        for t in toks {
            match &t.tok {
                Tok::Eof => break,
                Tok::Directive(name, rest) => {
                    self.flush(&mut pending)?;
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
                _ => pending.push(t),
            }
        }
        self.flush(&mut pending)?;
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

    fn flush(&mut self, pending: &mut Vec<Token>) -> Res<()> {
        let toks = std::mem::take(pending);
        let out = self.expand(toks, &HashSet::new())?;
        self.out.extend(out);
        Ok(())
    }

    /// `toks` with every macro use replaced by its expansion (rescanned, a macro not expanding
    /// inside itself). A function-like macro's name not followed by `(` stays a name.
    fn expand(&self, toks: Vec<Token>, expanding: &HashSet<String>) -> Res<Vec<Token>> {
        let mut out = Vec::with_capacity(toks.len());
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            let m = match &t.tok {
                Tok::Ident(name) if !expanding.contains(name) => {
                    self.macros.get(name).map(|m| (name, m))
                }
                _ => None,
            };
            let Some((name, m)) = m else {
                out.push(t.clone());
                i += 1;
                continue;
            };
            let is_call = matches!(toks.get(i + 1).map(|t| &t.tok), Some(Tok::Punct("(")));
            let body = match &m.params {
                None => {
                    i += 1;
                    m.body.clone()
                }
                Some(_) if !is_call => {
                    out.push(t.clone());
                    i += 1;
                    continue;
                }
                Some(params) => {
                    let (args, end) = call_args(&toks, i + 2, name, t.loc)?;
                    let given = if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        0
                    } else {
                        args.len()
                    };
                    if given != params.len() {
                        return fail(
                            t.loc,
                            format!(
                                "macro '{name}' takes {} argument(s), {given} given",
                                params.len()
                            ),
                        );
                    }
                    let mut expanded = Vec::with_capacity(args.len());
                    for a in args {
                        expanded.push(self.expand(a, expanding)?);
                    }
                    i = end + 1;
                    let mut body = Vec::new();
                    for b in &m.body {
                        let arg = match &b.tok {
                            Tok::Ident(n) => params.iter().position(|p| p == n),
                            _ => None,
                        };
                        match arg {
                            Some(k) => body.extend(expanded[k].iter().cloned()),
                            None => body.push(b.clone()),
                        }
                    }
                    body
                }
            };
            let mut inner = expanding.clone();
            inner.insert(name.clone());
            let use_loc = t.loc;
            let use_joined = t.joined;
            let mut body = body;
            for (k, b) in body.iter_mut().enumerate() {
                // the body's own tokens point at the use; arguments keep their places
                if b.loc.file == u32::MAX {
                    b.loc = use_loc;
                }
                if k == 0 {
                    b.joined = use_joined;
                }
            }
            out.extend(self.expand(body, &inner)?);
        }
        Ok(out)
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
        if let Some(arch) = other_architecture(name) {
            return fail(loc, format!("the {arch} architecture ('{name}') is not supported: lanes p4c compiles v1model and PSA programs (include <v1model.p4> or <psa.p4>)"));
        }
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
            // p4c names its bmv2 PSA include bmv2/psa.p4; lanes has one PSA
            "psa.p4" | "bmv2/psa.p4" => Some(crate::PSA_P4),
            _ => None,
        };
        if let Some(text) = builtin {
            let file = name.rsplit('/').next().unwrap_or(name);
            return self.source(&Path::new("p4/include").join(file), text, loc);
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
        let (params, body_text) = match rest[name_end..].strip_prefix('(') {
            Some(after) => {
                let Some(close) = after.find(')') else {
                    return fail(
                        loc,
                        format!("macro '{name}': missing ) after its parameters"),
                    );
                };
                let list = after[..close].trim();
                let params: Vec<String> = if list.is_empty() {
                    Vec::new()
                } else {
                    list.split(',').map(|p| p.trim().to_string()).collect()
                };
                if let Some(bad) = params.iter().find(|p| {
                    p.is_empty() || !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                }) {
                    return fail(
                        loc,
                        format!(
                            "macro '{name}': parameter '{bad}' is not supported (names only, no ...)"
                        ),
                    );
                }
                (Some(params), &after[close + 1..])
            }
            None => (None, &rest[name_end..]),
        };
        if body_text.contains('#') {
            return fail(
                loc,
                format!("macro '{name}': the # and ## operators are not supported: write the tokens out"),
            );
        }
        let mut body = lex(body_text, loc.file).map_err(|mut e| {
            e.loc = loc;
            e
        })?;
        body.pop();
        // the body's tokens take the place of each use (see `expand`)
        for b in &mut body {
            b.loc = Loc {
                file: u32::MAX,
                ..b.loc
            };
        }
        self.macros.insert(name.to_string(), Macro { params, body });
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
                        Some(m) => flat.extend(m.body.iter().map(|t| t.tok.clone())),
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

/// The arguments of a macro call whose `(` is just before `start`: token lists split at
/// top-level commas, and the index of the closing `)`.
fn call_args(toks: &[Token], start: usize, name: &str, loc: Loc) -> Res<(Vec<Vec<Token>>, usize)> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(start) {
        match t.tok {
            // as in C, only parentheses keep a comma inside one argument
            Tok::Punct("(") => depth += 1,
            Tok::Punct(")") if depth == 0 => return Ok((args, k)),
            Tok::Punct(")") => depth -= 1,
            Tok::Punct(",") if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        args.last_mut().expect("one at least").push(t.clone());
    }
    fail(
        loc,
        format!("macro '{name}': missing ) to close its arguments (before the next # line)"),
    )
}

/// Architectures other than v1model that programs name by their include file; refused by name
/// rather than as a missing file.
fn other_architecture(include: &str) -> Option<&'static str> {
    match include.rsplit('/').next().unwrap_or(include) {
        "pna.p4" => Some("PNA"),
        "tna.p4" | "t2na.p4" => Some("TNA"),
        "ebpf_model.p4" => Some("eBPF"),
        "ubpf_model.p4" => Some("uBPF"),
        "xdp_model.p4" => Some("XDP"),
        _ => None,
    }
}

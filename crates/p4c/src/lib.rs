//! `lanes p4c`: a P4-16 compiler for the v1model programs lanes runs. Source goes through the
//! preprocessor (`preproc`), the lexer and parser (`lexer`, `parse*` -> `ast`), name and type
//! resolution (`env`, `lower::expr`) and lowering to the bmv2 JSON the switch loads (`lower`,
//! `emit`); `p4info` writes the P4Info text with p4c's id scheme (`ids`). Errors are
//! [`Diag`]s: one line, `file:line:col: error: what to do`.
//!
//! What it takes: `#include` / `#define` (also with arguments) / `#if` / `#ifdef`; headers,
//! header stacks (indexed by constants or at run time, `lower::stack_index`; assigned whole,
//! `stack_copy`), header unions and union stacks (`lower::union_stack`), structs, `typedef` and `type`, enums and serializable enums, constants,
//! `bit<W>` and `bool`, casts, slices (read and written), `++`, arithmetic that wraps at the operand width; parsers with
//! `extract` (also `stack.next`), `lookahead<T>()` (and a header's field), `advance`, `verify`,
//! `select` on tuples with masks, ranges and `default`; controls with tables (exact, lpm,
//! ternary, range, optional keys, masked keys, const entries, default actions, size, direct
//! counters and meters), actions (calls between actions are inlined), `apply` with
//! `hit` / `miss` / `action_run`, `if`, `exit`, `for` loops (with `break` / `continue`);
//! `==` on headers, stacks and structs; variables of enum, tuple and header stack types;
//! struct-typed header fields (`env::header_structs`); functions, controls instantiated inside
//! controls and parsers inside parsers (inlined first, `inline`, `inline_parser`); the v1model
//! externs the switch runs (counter,
//! meter, register, direct_counter, direct_meter, hash, checksums, mark_to_drop, clone and
//! clone3 / clone_preserving_field_list, resubmit and recirculate (both forms, with
//! `@field_list` lists), digest, random, log_msg, truncate, action profiles and selectors).
//! Before inlining, `desugar`, `control_locals` and `ctor_args` make rewrites p4c's front end
//! makes: self-assignments dropped, slices of slices folded, `extract(_)` and unused lookaheads
//! given variables, control variables' initialisers moved into apply, tuple variables split,
//! controls with constructor parameters specialised per instance.
//! Anything else is refused with a diagnostic naming the construct.
//!
//! ```no_run
//! let out = lanes_p4c::compile_file(std::path::Path::new("p4/tm_basic.p4"),
//!                                   &lanes_p4c::Options::default()).unwrap();
//! std::fs::write("tm_basic.json", out.json).unwrap();
//! ```

#![forbid(unsafe_code)]

mod alias;
mod arch;
mod ast;
mod ast_map;
mod bound_action;
mod compound_assign;
mod control_locals;
mod ctor_args;
mod desugar;
mod diag;
mod emit;
mod env;
mod fn_return_flag;
mod hoist_apply;
pub mod ids;
mod inline;
mod inline_action;
mod inline_fn;
mod inline_parser;
mod key_temps;
mod lexer;
mod lower;
mod p4info;
mod parse;
mod parse_expr;
mod parse_for;
mod parse_stmt;
mod parser_ifs;
mod preproc;
mod psa_hoist;
mod stack_copy;
mod subst;

pub use diag::Diag;
use std::path::{Path, PathBuf};

/// Where `#include <core.p4>` and `<v1model.p4>` come from when no -I directory has them.
pub const CORE_P4: &str = include_str!("../../../p4/include/core.p4");
pub const V1MODEL_P4: &str = include_str!("../../../p4/include/v1model.p4");
/// The built-in `<psa.p4>` (also `<bmv2/psa.p4>`).
pub const PSA_P4: &str = include_str!("../../../p4/include/psa.p4");

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// -I directories, searched in order (then the built-in core.p4 / v1model.p4).
    pub include_dirs: Vec<PathBuf>,
    /// -D NAME=VALUE (VALUE "1" when only NAME is given).
    pub defines: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub struct Output {
    /// bmv2 JSON, pretty-printed.
    pub json: String,
    /// P4Info in protobuf text format.
    pub p4info: String,
}

/// Compiles the program at `path`.
pub fn compile_file(path: &Path, opts: &Options) -> Result<Output, Diag> {
    let popts = preproc::Options {
        include_dirs: &opts.include_dirs,
        defines: &opts.defines,
    };
    let (tokens, sources) = match preproc::preprocess(path, &popts) {
        Ok(x) => x,
        Err((e, s)) => return Err(to_diag(e, &s.files, path)),
    };
    let files = sources.files;
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let run = || -> diag::Res<Output> {
        let decls = ctor_args::program(desugar::program(parse::parse_program(tokens)?))?;
        let decls = key_temps::program(inline::program(psa_hoist::program(decls))?);
        let env = env::Env::build(decls)?;
        let mut l = lower::Lowerer::new(&env, file_name);
        l.sources = files.iter().map(|f| source_lines(f)).collect();
        let json = emit::program(&mut l)?;
        let p4info = p4info::write(&l, &env)?;
        Ok(Output { json, p4info })
    };
    run().map_err(|e| to_diag(e, &files, path))
}

/// A source file's name and lines (none if it cannot be read again: only `source_info` lacks them).
fn source_lines(path: &Path) -> (String, Vec<String>) {
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    (name, text.lines().map(str::to_string).collect())
}

fn to_diag(e: diag::Error, files: &[PathBuf], main: &Path) -> Diag {
    let file = files
        .get(e.loc.file as usize)
        .map_or_else(|| main.display().to_string(), |p| p.display().to_string());
    Diag {
        file,
        line: e.loc.line,
        col: e.loc.col,
        msg: e.msg,
    }
}

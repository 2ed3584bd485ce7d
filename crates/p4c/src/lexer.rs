//! Tokens of P4-16 source. Preprocessor directives come out as one `Directive` token holding
//! the rest of the line (continuation lines joined), so the preprocessor works on tokens.

use crate::diag::{fail, Loc, Res};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// Integer literal: value, and `Some((signed, width))` for `8w5` / `8s5` forms.
    Int(u128, Option<(bool, u32)>),
    Str(String),
    /// Punctuation or operator, e.g. "(", "==", "&&&", "++".
    Punct(&'static str),
    /// `#name rest-of-line`.
    Directive(String, String),
    Eof,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub loc: Loc,
    /// True when no whitespace separates this token from the previous one (for `>>`).
    pub joined: bool,
}

// Longest first.
const PUNCT: &[&str] = &[
    "&&&", "...", "<<", "&&", "||", "==", "!=", ">=", "<=", "++", "..", "+", "-", "*", "/", "%",
    "&", "|", "^", "~", "!", "<", ">", "=", "(", ")", "{", "}", "[", "]", ";", ",", ".", ":", "?",
    "@", "_",
];

pub fn lex(src: &str, file: u32) -> Res<Vec<Token>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let mut line_start = true; // only whitespace so far on this line
    let mut joined = false;
    while i < b.len() {
        let c = b[i];
        let loc = Loc { file, line, col };
        if c == b'\n' {
            i += 1;
            line += 1;
            col = 1;
            line_start = true;
            joined = false;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            col += 1;
            joined = false;
            continue;
        }
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            joined = false;
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i += 2;
            col += 2;
            loop {
                if i >= b.len() {
                    return fail(loc, "unterminated comment: add the closing */");
                }
                if b[i..].starts_with(b"*/") {
                    i += 2;
                    col += 2;
                    break;
                }
                if b[i] == b'\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
                i += 1;
            }
            joined = false;
            continue;
        }
        if c == b'#' && line_start {
            // directive: up to the end of line, with backslash continuations and comments cut
            let mut text = String::new();
            i += 1;
            while i < b.len() && b[i] != b'\n' {
                if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
                    i += 2;
                    line += 1;
                    text.push(' ');
                    continue;
                }
                if b[i..].starts_with(b"//") {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    break;
                }
                text.push(b[i] as char);
                i += 1;
            }
            let text = text.trim();
            let name_end = text
                .find(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_')
                .unwrap_or(text.len());
            out.push(Token {
                tok: Tok::Directive(
                    text[..name_end].to_string(),
                    text[name_end..].trim().to_string(),
                ),
                loc,
                joined: false,
            });
            continue;
        }
        line_start = false;
        let start = i;
        if c.is_ascii_alphabetic()
            || (c == b'_'
                && b.get(i + 1)
                    .is_some_and(|x| x.is_ascii_alphanumeric() || *x == b'_'))
        {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(src[start..i].to_string()),
                loc,
                joined,
            });
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let text = &src[start..i];
            out.push(Token {
                tok: number(text, loc)?,
                loc,
                joined,
            });
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            if i >= b.len() || b[i] != b'"' {
                return fail(loc, "unterminated string literal");
            }
            i += 1;
            out.push(Token {
                tok: Tok::Str(src[start + 1..i - 1].to_string()),
                loc,
                joined,
            });
        } else {
            let Some(p) = PUNCT.iter().find(|p| b[i..].starts_with(p.as_bytes())) else {
                return fail(loc, format!("unexpected character '{}'", c as char));
            };
            i += p.len();
            out.push(Token {
                tok: Tok::Punct(p),
                loc,
                joined,
            });
        }
        col += (i - start) as u32;
        joined = true;
    }
    out.push(Token {
        tok: Tok::Eof,
        loc: Loc { file, line, col },
        joined: false,
    });
    Ok(out)
}

/// `42`, `0x2a`, `0b101`, `0o7`, `8w255`, `16s-1` (sign comes from unary minus), `1_000`.
fn number(text: &str, loc: Loc) -> Res<Tok> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    let split = t
        .find(['w', 's'])
        .filter(|p| *p > 0 && t[..*p].bytes().all(|c| c.is_ascii_digit()));
    let (width, body) = match split {
        Some(p) => {
            let w: u32 = match t[..p].parse() {
                Ok(w) => w,
                Err(_) => return fail(loc, format!("bad integer literal '{text}'")),
            };
            (Some((&t[p..p + 1] == "s", w)), t[p + 1..].to_string())
        }
        None => (None, t.clone()),
    };
    let (radix, digits) = match body.get(..2) {
        Some("0x") | Some("0X") => (16, &body[2..]),
        Some("0b") | Some("0B") => (2, &body[2..]),
        Some("0o") | Some("0O") => (8, &body[2..]),
        Some("0d") | Some("0D") => (10, &body[2..]),
        _ => (10, &body[..]),
    };
    match u128::from_str_radix(digits, radix) {
        Ok(v) => Ok(Tok::Int(v, width)),
        Err(_) => fail(
            loc,
            format!("bad integer literal '{text}' (at most 128 bits)"),
        ),
    }
}

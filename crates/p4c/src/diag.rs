//! Diagnostics: one error, located in a source file, printed as `file:line:col: error: msg`.

use std::fmt;

/// A place in the sources: index into the compiler's file table, 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

/// A compile error with its place already resolved to a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: error: {}", self.file, self.msg)
        } else {
            write!(
                f,
                "{}:{}:{}: error: {}",
                self.file, self.line, self.col, self.msg
            )
        }
    }
}

impl std::error::Error for Diag {}

/// An error still carrying a [`Loc`]; the driver turns it into a [`Diag`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub loc: Loc,
    pub msg: String,
}

pub type Res<T> = Result<T, Error>;

pub fn fail<T>(loc: Loc, msg: impl Into<String>) -> Res<T> {
    Err(Error {
        loc,
        msg: msg.into(),
    })
}

//! Load-time errors: one line naming the JSON object and the construct.

use std::fmt;

/// Why a bmv2 JSON program was refused. `Display` is one line: `<object>: <what>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The JSON object, e.g. `actions[3] "MyIngress.fwd"` or `top level`.
    pub object: String,
    /// What is wrong or unsupported.
    pub message: String,
}

impl LoadError {
    pub fn new(object: impl Into<String>, message: impl Into<String>) -> Self {
        LoadError {
            object: object.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.object, self.message)
    }
}

impl std::error::Error for LoadError {}

/// Errors from the runtime control API (tables, externs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    UnknownTable(String),
    UnknownAction(String),
    UnknownExtern(String),
    BadHandle(u32),
    IndexOutOfRange {
        name: String,
        index: u64,
        size: u64,
    },
    /// Key count, match kind, value width or parameter mismatch, with a one-line explanation.
    Invalid(String),
    DuplicateEntry,
    TableFull(String),
    ConstTable(String),
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::UnknownTable(n) => write!(f, "unknown table {n}"),
            ApiError::UnknownAction(n) => write!(f, "unknown action {n}"),
            ApiError::UnknownExtern(n) => write!(f, "unknown extern {n}"),
            ApiError::BadHandle(h) => write!(f, "no entry with handle {h}"),
            ApiError::IndexOutOfRange { name, index, size } => {
                write!(f, "{name}: index {index} out of range (size {size})")
            }
            ApiError::Invalid(m) => write!(f, "{m}"),
            ApiError::DuplicateEntry => write!(f, "an entry with this key already exists"),
            ApiError::TableFull(n) => write!(f, "table {n} is full"),
            ApiError::ConstTable(n) => write!(f, "table {n} has const entries"),
        }
    }
}

impl std::error::Error for ApiError {}

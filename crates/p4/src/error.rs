//! Load-time errors: one line naming the JSON object and the construct. The runtime control
//! API's errors are `ApiError` (api_error.rs).

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
            object: one_line(object.into()),
            message: one_line(message.into()),
        }
    }
}

/// Names and values quoted from the JSON may hold control characters (`"a\nb"`); they are
/// escaped so the error stays one line.
fn one_line(s: String) -> String {
    if !s.chars().any(char::is_control) {
        return s;
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.object, self.message)
    }
}

impl std::error::Error for LoadError {}

pub use crate::api_error::ApiError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_control_characters_stay_on_one_line() {
        // found by the json_bytes fuzzer: an op name with a JSON "\n" escape in it
        let e = LoadError::new("actions[3] \"a\nb\"", "primitive \"x\ty\r\" not supported");
        let line = e.to_string();
        assert!(!line.contains('\n') && !line.contains('\r') && !line.contains('\t'));
        assert_eq!(
            line,
            r#"actions[3] "a\nb": primitive "x\ty\r" not supported"#
        );
        assert_eq!(LoadError::new("a", "b").to_string(), "a: b");
    }
}

//! The one error type of the crate: a single line meant for a user.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FabricError(pub String);

impl fmt::Display for FabricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FabricError {}

pub type Result<T> = std::result::Result<T, FabricError>;

/// Builds an `Err(FabricError)` from a format string.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::FabricError(format!($($arg)*)))
    };
}

pub fn err(msg: impl Into<String>) -> FabricError {
    FabricError(msg.into())
}

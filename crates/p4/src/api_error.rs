//! Errors of the runtime control API (tables, entries, action profiles, externs) and the one
//! place that says what each means to the three routes into it: its text (what `lanes ctl`
//! prints, P4Runtime's message, the line the Thrift server logs), its P4Runtime (gRPC) status
//! code, and the `TableOperationErrorCode` bmv2's Thrift API answers with. The routes never
//! decide a code from a message.

use std::fmt;

/// Why a control-plane call was refused.
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
    /// A match key that does not fit its table: field count, match kind, width, prefix length,
    /// mask, range bounds, priority, a field given twice or missing.
    BadKey(String),
    /// Action parameters that do not fit the action (count or width).
    BadActionData(String),
    /// A direct call on an indirect table or the other way round, or a group where the table's
    /// profile has no selector.
    WrongTableType(String),
    /// Any other refused argument, with a one-line explanation.
    Invalid(String),
    DuplicateEntry,
    TableFull(String),
    ConstTable(String),
    /// The table's default action is const and another one was asked for (table name).
    ConstDefault(String),
    /// An idle timeout for an entry of a table without `support_timeout` (table name).
    AgeingDisabled(String),
    NoDirectCounter(String),
    NoDirectMeter(String),
    BadMeterRates(String),
    /// No entry with the match key (and priority) given.
    NoEntry,
    /// An action profile member or group that does not exist.
    NoMember(String),
    NoGroup(String),
    /// A member or group still named by table entries or groups.
    MemberInUse(String),
    GroupInUse(String),
    /// Adding a member to a group that holds it, or removing one it does not hold.
    MemberInGroup(String),
    MemberNotInGroup(String),
    /// Any other named object (action profile, value set, value) that does not exist.
    NotFound(String),
    /// The switch runs no program.
    NoProgram,
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
            ApiError::DuplicateEntry => write!(f, "an entry with this key already exists"),
            ApiError::TableFull(n) => write!(f, "table {n} is full"),
            ApiError::ConstTable(n) => write!(f, "table {n} has const entries"),
            ApiError::ConstDefault(n) => write!(f, "table {n}: default action is const"),
            ApiError::AgeingDisabled(n) => write!(f, "table {n} does not support idle timeouts"),
            ApiError::NoDirectCounter(n) => write!(f, "table {n} has no direct counter"),
            ApiError::NoDirectMeter(n) => write!(f, "table {n} has no direct meter"),
            ApiError::NoEntry => write!(f, "no entry with this match key"),
            ApiError::NoProgram => write!(f, "no forwarding pipeline loaded"),
            ApiError::BadKey(m)
            | ApiError::BadActionData(m)
            | ApiError::WrongTableType(m)
            | ApiError::Invalid(m)
            | ApiError::BadMeterRates(m)
            | ApiError::NoMember(m)
            | ApiError::NoGroup(m)
            | ApiError::MemberInUse(m)
            | ApiError::GroupInUse(m)
            | ApiError::MemberInGroup(m)
            | ApiError::MemberNotInGroup(m)
            | ApiError::NotFound(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for ApiError {}

/// gRPC status codes (P4Runtime's error space).
pub mod grpc {
    pub const OK: u8 = 0;
    pub const INVALID_ARGUMENT: u8 = 3;
    pub const NOT_FOUND: u8 = 5;
    pub const ALREADY_EXISTS: u8 = 6;
    pub const PERMISSION_DENIED: u8 = 7;
    pub const RESOURCE_EXHAUSTED: u8 = 8;
    pub const FAILED_PRECONDITION: u8 = 9;
    pub const OUT_OF_RANGE: u8 = 11;
}

/// bmv2's `TableOperationErrorCode` (standard.thrift), the codes its `InvalidTableOperation`
/// carries.
pub mod thrift {
    pub const TABLE_FULL: i32 = 1;
    pub const INVALID_HANDLE: i32 = 2;
    pub const COUNTERS_DISABLED: i32 = 4;
    pub const METERS_DISABLED: i32 = 5;
    pub const AGEING_DISABLED: i32 = 6;
    pub const INVALID_TABLE_NAME: i32 = 7;
    pub const INVALID_ACTION_NAME: i32 = 8;
    pub const WRONG_TABLE_TYPE: i32 = 9;
    pub const INVALID_MBR_HANDLE: i32 = 10;
    pub const MBR_STILL_USED: i32 = 11;
    pub const MBR_ALREADY_IN_GRP: i32 = 12;
    pub const MBR_NOT_IN_GRP: i32 = 13;
    pub const INVALID_GRP_HANDLE: i32 = 14;
    pub const GRP_STILL_USED: i32 = 15;
    pub const DUPLICATE_ENTRY: i32 = 17;
    pub const BAD_MATCH_KEY: i32 = 18;
    pub const INVALID_METER_OPERATION: i32 = 19;
    pub const DEFAULT_ACTION_IS_CONST: i32 = 20;
    pub const IMMUTABLE_TABLE_ENTRIES: i32 = 25;
    pub const BAD_ACTION_DATA: i32 = 26;
    pub const ERROR: i32 = 100;
}

impl ApiError {
    /// The P4Runtime (gRPC) status code of this error.
    pub fn grpc_code(&self) -> u8 {
        use grpc::*;
        match self {
            ApiError::UnknownTable(_)
            | ApiError::UnknownAction(_)
            | ApiError::UnknownExtern(_)
            | ApiError::BadHandle(_)
            | ApiError::NoEntry
            | ApiError::NoMember(_)
            | ApiError::NoGroup(_)
            | ApiError::MemberNotInGroup(_)
            | ApiError::NotFound(_) => NOT_FOUND,
            ApiError::BadKey(_)
            | ApiError::BadActionData(_)
            | ApiError::WrongTableType(_)
            | ApiError::Invalid(_)
            | ApiError::AgeingDisabled(_)
            | ApiError::NoDirectCounter(_)
            | ApiError::NoDirectMeter(_)
            | ApiError::BadMeterRates(_)
            | ApiError::MemberInGroup(_) => INVALID_ARGUMENT,
            ApiError::IndexOutOfRange { .. } => OUT_OF_RANGE,
            ApiError::DuplicateEntry => ALREADY_EXISTS,
            ApiError::TableFull(_) => RESOURCE_EXHAUSTED,
            ApiError::ConstTable(_) | ApiError::ConstDefault(_) => PERMISSION_DENIED,
            ApiError::MemberInUse(_) | ApiError::GroupInUse(_) | ApiError::NoProgram => {
                FAILED_PRECONDITION
            }
        }
    }

    /// The code bmv2's Thrift API answers this error with (`InvalidTableOperation.code`).
    pub fn thrift_code(&self) -> i32 {
        use thrift::*;
        match self {
            ApiError::UnknownTable(_) => INVALID_TABLE_NAME,
            ApiError::UnknownAction(_) => INVALID_ACTION_NAME,
            ApiError::BadHandle(_) | ApiError::NoEntry => INVALID_HANDLE,
            ApiError::BadKey(_) => BAD_MATCH_KEY,
            ApiError::BadActionData(_) => BAD_ACTION_DATA,
            ApiError::WrongTableType(_) => WRONG_TABLE_TYPE,
            ApiError::DuplicateEntry => DUPLICATE_ENTRY,
            ApiError::TableFull(_) => TABLE_FULL,
            ApiError::ConstTable(_) => IMMUTABLE_TABLE_ENTRIES,
            ApiError::ConstDefault(_) => DEFAULT_ACTION_IS_CONST,
            ApiError::AgeingDisabled(_) => AGEING_DISABLED,
            ApiError::NoDirectCounter(_) => COUNTERS_DISABLED,
            ApiError::NoDirectMeter(_) => METERS_DISABLED,
            ApiError::BadMeterRates(_) => INVALID_METER_OPERATION,
            ApiError::NoMember(_) => INVALID_MBR_HANDLE,
            ApiError::NoGroup(_) => INVALID_GRP_HANDLE,
            ApiError::MemberInUse(_) => MBR_STILL_USED,
            ApiError::GroupInUse(_) => GRP_STILL_USED,
            ApiError::MemberInGroup(_) => MBR_ALREADY_IN_GRP,
            ApiError::MemberNotInGroup(_) => MBR_NOT_IN_GRP,
            ApiError::UnknownExtern(_)
            | ApiError::IndexOutOfRange { .. }
            | ApiError::Invalid(_)
            | ApiError::NotFound(_)
            | ApiError::NoProgram => ERROR,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_its_codes_and_one_line() {
        let cases = [
            (
                ApiError::DuplicateEntry,
                grpc::ALREADY_EXISTS,
                thrift::DUPLICATE_ENTRY,
            ),
            (ApiError::NoEntry, grpc::NOT_FOUND, thrift::INVALID_HANDLE),
            (
                ApiError::BadHandle(3),
                grpc::NOT_FOUND,
                thrift::INVALID_HANDLE,
            ),
            (
                ApiError::BadKey("k".into()),
                grpc::INVALID_ARGUMENT,
                thrift::BAD_MATCH_KEY,
            ),
            (
                ApiError::BadActionData("a".into()),
                grpc::INVALID_ARGUMENT,
                thrift::BAD_ACTION_DATA,
            ),
            (
                ApiError::ConstDefault("t".into()),
                grpc::PERMISSION_DENIED,
                thrift::DEFAULT_ACTION_IS_CONST,
            ),
            (
                ApiError::ConstTable("t".into()),
                grpc::PERMISSION_DENIED,
                thrift::IMMUTABLE_TABLE_ENTRIES,
            ),
            (
                ApiError::TableFull("t".into()),
                grpc::RESOURCE_EXHAUSTED,
                thrift::TABLE_FULL,
            ),
            (
                ApiError::GroupInUse("g".into()),
                grpc::FAILED_PRECONDITION,
                thrift::GRP_STILL_USED,
            ),
            (
                ApiError::MemberInGroup("m".into()),
                grpc::INVALID_ARGUMENT,
                thrift::MBR_ALREADY_IN_GRP,
            ),
            (
                ApiError::NoProgram,
                grpc::FAILED_PRECONDITION,
                thrift::ERROR,
            ),
            (
                ApiError::NoDirectCounter("t".into()),
                grpc::INVALID_ARGUMENT,
                thrift::COUNTERS_DISABLED,
            ),
            (
                ApiError::NoDirectMeter("t".into()),
                grpc::INVALID_ARGUMENT,
                thrift::METERS_DISABLED,
            ),
            (
                ApiError::BadMeterRates("r".into()),
                grpc::INVALID_ARGUMENT,
                thrift::INVALID_METER_OPERATION,
            ),
        ];
        for (e, g, t) in cases {
            assert_eq!((e.grpc_code(), e.thrift_code()), (g, t), "{e:?}");
            assert!(!e.to_string().contains('\n'));
        }
        assert_eq!(
            ApiError::ConstDefault("ing.t".into()).to_string(),
            "table ing.t: default action is const"
        );
    }
}

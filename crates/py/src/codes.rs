//! The integer codes Python passes to the bindings: update operations, match key kinds, action
//! profile group operations and value set operations. Defined here once and exported as
//! `lanes._native` attributes, which the Python side imports instead of restating the numbers.

use pyo3::prelude::*;

/// Entity updates (tables, members, clone sessions, multicast groups): insert, modify, delete.
pub(crate) const OP_INSERT: u8 = 0;
pub(crate) const OP_MODIFY: u8 = 1;
pub(crate) const OP_DELETE: u8 = 2;
/// Table updates only: set the default action, write a direct counter, write a direct meter.
pub(crate) const OP_DEFAULT: u8 = 3;
pub(crate) const OP_COUNTER: u8 = 4;
pub(crate) const OP_METER: u8 = 5;

/// Match key kinds of a `(kind, a, b, prefix_len)` key.
pub(crate) const KEY_EXACT: u8 = 0;
pub(crate) const KEY_LPM: u8 = 1;
pub(crate) const KEY_TERNARY: u8 = 2;
pub(crate) const KEY_RANGE: u8 = 3;
pub(crate) const KEY_OPTIONAL: u8 = 4;
/// An optional key that matches anything.
pub(crate) const KEY_ANY: u8 = 5;

/// Action profile group operations.
pub(crate) const GROUP_CREATE: u8 = 0;
pub(crate) const GROUP_DELETE: u8 = 1;
pub(crate) const GROUP_SET: u8 = 2;
pub(crate) const GROUP_ADD_MEMBER: u8 = 3;
pub(crate) const GROUP_REMOVE_MEMBER: u8 = 4;

/// Value set operations.
pub(crate) const VSET_ADD: u8 = 0;
pub(crate) const VSET_REMOVE: u8 = 1;
pub(crate) const VSET_CLEAR: u8 = 2;

const ALL: [(&str, u8); 20] = [
    ("OP_INSERT", OP_INSERT),
    ("OP_MODIFY", OP_MODIFY),
    ("OP_DELETE", OP_DELETE),
    ("OP_DEFAULT", OP_DEFAULT),
    ("OP_COUNTER", OP_COUNTER),
    ("OP_METER", OP_METER),
    ("KEY_EXACT", KEY_EXACT),
    ("KEY_LPM", KEY_LPM),
    ("KEY_TERNARY", KEY_TERNARY),
    ("KEY_RANGE", KEY_RANGE),
    ("KEY_OPTIONAL", KEY_OPTIONAL),
    ("KEY_ANY", KEY_ANY),
    ("GROUP_CREATE", GROUP_CREATE),
    ("GROUP_DELETE", GROUP_DELETE),
    ("GROUP_SET", GROUP_SET),
    ("GROUP_ADD_MEMBER", GROUP_ADD_MEMBER),
    ("GROUP_REMOVE_MEMBER", GROUP_REMOVE_MEMBER),
    ("VSET_ADD", VSET_ADD),
    ("VSET_REMOVE", VSET_REMOVE),
    ("VSET_CLEAR", VSET_CLEAR),
];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for (name, value) in ALL {
        m.add(name, value)?;
    }
    Ok(())
}

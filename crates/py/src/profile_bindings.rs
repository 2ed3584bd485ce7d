//! Bindings for action profiles and selectors, shared by the Thrift server (simple_switch_CLI's
//! `act_prof_*` calls) and the P4Runtime server (ActionProfileMember/Group). Profiles,
//! actions and handles are the program's own; errors are `P4rtError(code, message)`.

use lanes_p4::{ActionId, ProfileId, TableId};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::codes::{
    GROUP_ADD_MEMBER, GROUP_CREATE, GROUP_DELETE, GROUP_REMOVE_MEMBER, GROUP_SET, OP_DELETE,
    OP_INSERT, OP_MODIFY,
};
use crate::p4rt_bindings::with_program;
use crate::switch_bindings::PySwitch;

/// Member operations (crate::codes): OP_INSERT (handle None: the lowest free), OP_MODIFY,
/// OP_DELETE. Returns the
/// member's handle.
#[pyfunction]
#[pyo3(signature = (sw, profile, op, handle, action = 0, params = Vec::new()))]
fn ap_member_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    profile: u32,
    op: u8,
    handle: Option<u32>,
    action: u32,
    params: Vec<PyBackedBytes>,
) -> PyResult<u32> {
    let params: Vec<Vec<u8>> = params.iter().map(|x| x.to_vec()).collect();
    let (p, a) = (ProfileId(profile), ActionId(action));
    with_program(py, &sw, |prog| match (op, handle) {
        (OP_INSERT, h) => prog.add_member(p, h, a, &params),
        (OP_MODIFY, Some(h)) => prog.modify_member(p, h, a, &params).map(|()| h),
        (OP_DELETE, Some(h)) => prog.delete_member(p, h).map(|()| h),
        _ => Err(lanes_p4::ApiError::Invalid(format!(
            "member operation {op} needs a handle"
        ))),
    })
}

/// Group operations (crate::codes): create (handle None: the lowest free; `members` then set
/// if given), delete, set members (member, weight), add `members[0]`, remove `members[0]`.
/// Returns the group's handle.
#[pyfunction]
#[pyo3(signature = (sw, profile, op, handle, members = Vec::new(), max_size = 0))]
fn ap_group_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    profile: u32,
    op: u8,
    handle: Option<u32>,
    members: Vec<(u32, u32)>,
    max_size: u32,
) -> PyResult<u32> {
    let p = ProfileId(profile);
    with_program(py, &sw, |prog| {
        let invalid = |m: String| lanes_p4::ApiError::Invalid(m);
        if op == GROUP_CREATE {
            let h = prog.create_group(p, handle, max_size)?;
            if !members.is_empty() {
                if let Err(e) = prog.set_group_members(p, h, &members) {
                    let _ = prog.delete_group(p, h);
                    return Err(e);
                }
            }
            return Ok(h);
        }
        let h = handle.ok_or_else(|| invalid(format!("group operation {op} needs a handle")))?;
        let first = members.first().map(|m| m.0);
        match (op, first) {
            (GROUP_DELETE, _) => prog.delete_group(p, h),
            (GROUP_SET, _) => prog.set_group_members(p, h, &members),
            (GROUP_ADD_MEMBER, Some(m)) => prog.add_member_to_group(p, m, h),
            (GROUP_REMOVE_MEMBER, Some(m)) => prog.remove_member_from_group(p, m, h),
            _ => Err(invalid(format!("group operation {op}: bad arguments"))),
        }
        .map(|()| h)
    })
}

/// A member as read: (handle, action index, params).
type OutMember = (u32, u32, Vec<Vec<u8>>);

/// A group as read: (handle, [(member, weight)], max_size).
type OutGroup = (u32, Vec<(u32, u32)>, u32);

/// Members of a profile: (handle, action index, params), ascending by handle.
#[pyfunction]
fn ap_members(py: Python<'_>, sw: PyRef<'_, PySwitch>, profile: u32) -> PyResult<Vec<OutMember>> {
    with_program(py, &sw, |p| {
        Ok(p.members(ProfileId(profile))?
            .into_iter()
            .map(|m| (m.handle, m.action.0, m.params))
            .collect())
    })
}

/// Groups of a profile: (handle, [(member, weight)], max_size), ascending by handle.
#[pyfunction]
fn ap_groups(py: Python<'_>, sw: PyRef<'_, PySwitch>, profile: u32) -> PyResult<Vec<OutGroup>> {
    with_program(py, &sw, |p| {
        Ok(p.groups(ProfileId(profile))?
            .into_iter()
            .map(|g| (g.handle, g.members, g.max_size))
            .collect())
    })
}

/// The default member or group of an indirect table: (is a group, handle) or None.
#[pyfunction]
fn ap_default_target(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
) -> PyResult<Option<(bool, u32)>> {
    with_program(py, &sw, |p| {
        Ok(p.default_target(TableId(table))?.map(|r| match r {
            lanes_p4::ProfileRef::Group(h) => (true, h),
            lanes_p4::ProfileRef::Member(h) => (false, h),
        }))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ap_member_write, m)?)?;
    m.add_function(wrap_pyfunction!(ap_group_write, m)?)?;
    m.add_function(wrap_pyfunction!(ap_members, m)?)?;
    m.add_function(wrap_pyfunction!(ap_groups, m)?)?;
    m.add_function(wrap_pyfunction!(ap_default_target, m)?)?;
    Ok(())
}

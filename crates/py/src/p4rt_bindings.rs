//! Bindings for the P4Runtime server (python/lanes/p4runtime): staged programs, batched table
//! writes with per-update results, entry reads, counters, registers and meters. Objects are
//! addressed by the program's own indices (TableId, ActionId) that the server resolves once
//! per pipeline from the P4Info. Every call releases the GIL while it works on the data plane.
//!
//! Errors carry a gRPC status code: `P4rtError(code, message)`.

use std::sync::Mutex;

use lanes_p4::p4info::{ExternInfo, P4Names};
use lanes_p4::{
    ActionId, ApiError, CounterValue, EntryHandle, EntryView, MatchKey, MeterRates, ProfileRef,
    Program, TableId,
};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use serde_json::{json, Value};

use crate::switch_bindings::PySwitch;

create_exception!(_native, P4rtError, PyException);

// gRPC status codes used here.
const OK: u8 = 0;
pub(crate) const INVALID_ARGUMENT: u8 = 3;
pub(crate) const NOT_FOUND: u8 = 5;
pub(crate) const ALREADY_EXISTS: u8 = 6;
const PERMISSION_DENIED: u8 = 7;
const RESOURCE_EXHAUSTED: u8 = 8;
const FAILED_PRECONDITION: u8 = 9;
const OUT_OF_RANGE: u8 = 11;

fn code_of(e: &ApiError) -> u8 {
    match e {
        ApiError::UnknownTable(_) | ApiError::UnknownAction(_) | ApiError::UnknownExtern(_) => {
            NOT_FOUND
        }
        ApiError::BadHandle(_) | ApiError::NotFound(_) => NOT_FOUND,
        ApiError::InUse(_) => FAILED_PRECONDITION,
        ApiError::IndexOutOfRange { .. } => OUT_OF_RANGE,
        ApiError::Invalid(_) => INVALID_ARGUMENT,
        ApiError::DuplicateEntry => ALREADY_EXISTS,
        ApiError::TableFull(_) => RESOURCE_EXHAUSTED,
        ApiError::ConstTable(_) => PERMISSION_DENIED,
    }
}

pub(crate) fn py_err(code: u8, msg: impl Into<String>) -> PyErr {
    P4rtError::new_err((code, msg.into()))
}

pub(crate) fn api_err(e: ApiError) -> PyErr {
    py_err(code_of(&e), e.to_string())
}

/// A match key from Python: (kind, a, b, prefix_len); kinds 0 exact(a), 1 lpm(a, plen),
/// 2 ternary(a, mask b), 3 range(low a, high b), 4 optional(a), 5 optional wildcard.
type PyKey = (u8, PyBackedBytes, PyBackedBytes, u32);

fn to_key(k: &PyKey) -> Result<MatchKey, String> {
    let (kind, a, b, plen) = k;
    Ok(match kind {
        0 => MatchKey::Exact(a.to_vec()),
        1 => MatchKey::Lpm(a.to_vec(), *plen),
        2 => MatchKey::Ternary(a.to_vec(), b.to_vec()),
        3 => MatchKey::Range(a.to_vec(), b.to_vec()),
        4 => MatchKey::Optional(Some(a.to_vec())),
        5 => MatchKey::Optional(None),
        other => return Err(format!("unknown match kind {other}")),
    })
}

/// A key as returned to Python: (kind, a, b, prefix_len), kinds as in `PyKey`.
pub(crate) type OutKey = (u8, Vec<u8>, Vec<u8>, u32);

pub(crate) fn from_key(k: &MatchKey) -> OutKey {
    match k {
        MatchKey::Exact(v) => (0, v.clone(), vec![], 0),
        MatchKey::Lpm(v, p) => (1, v.clone(), vec![], *p),
        MatchKey::Ternary(v, m) => (2, v.clone(), m.clone(), 0),
        MatchKey::Range(lo, hi) => (3, lo.clone(), hi.clone(), 0),
        MatchKey::Optional(Some(v)) => (4, v.clone(), vec![], 0),
        MatchKey::Optional(None) => (5, vec![], vec![], 0),
    }
}

pub(crate) type PyRates = (f64, u64, f64, u64);

pub(crate) fn rates(r: PyRates) -> MeterRates {
    MeterRates {
        cir: r.0,
        cbs: r.1,
        pir: r.2,
        pbs: r.3,
    }
}

pub(crate) fn out_rates(r: Option<MeterRates>) -> Option<PyRates> {
    r.map(|r| (r.cir, r.cbs, r.pir, r.pbs))
}

/// A program compiled and checked but not yet running (VERIFY_AND_SAVE keeps one).
#[pyclass(name = "P4rtProgram")]
pub(crate) struct PyP4rtProgram {
    program: Mutex<Option<Program>>,
    names: String,
}

#[pymethods]
impl PyP4rtProgram {
    /// The program's tables, actions and externs (names, widths, match kinds) as JSON.
    fn names_json(&self) -> String {
        self.names.clone()
    }
}

fn externs_json(list: &[ExternInfo]) -> Value {
    Value::Array(
        list.iter()
            .map(|x| json!({"name": x.name, "size": x.size, "bitwidth": x.bitwidth, "table": x.table}))
            .collect(),
    )
}

/// Each action profile: name, index, JSON id, size, selector, and the actions its members may
/// run (name, the switch's index).
fn profiles_json(p: &Program) -> Vec<Value> {
    p.profile_names()
        .iter()
        .filter_map(|name| {
            let id = p.profile_id(name)?;
            let info = p.profile_info(id).ok()?;
            let actions: Vec<Value> = p
                .profile_action_names(id)
                .into_iter()
                .map(|(a, n)| json!({"name": n, "index": a.0}))
                .collect();
            Some(json!({"name": info.name, "index": id.0, "id": info.id,
                        "max_size": info.max_size, "with_selector": info.with_selector,
                        "actions": actions}))
        })
        .collect()
}

fn names_json(p: &Program) -> String {
    let n = P4Names::from_program(p);
    let tables: Vec<Value> = n
        .tables
        .iter()
        .map(|t| {
            let actions: Vec<Value> = n
                .actions
                .iter()
                .filter(|a| t.action_ids.contains(&a.id))
                .map(|a| {
                    let inst = p.action_id(t.table, &a.name).map(|x| x.0);
                    json!({"name": a.name, "index": inst})
                })
                .collect();
            let default = p.default_entry(t.table).ok().flatten();
            json!({
                "name": t.name,
                "index": t.table.0,
                "keys": t.keys.iter().map(|k| json!({"name": k.name, "bitwidth": k.bitwidth,
                         "match_kind": k.match_kind.name()})).collect::<Vec<_>>(),
                "actions": actions,
                "size": t.size,
                "const_entries": t.const_entries,
                "default_const": p.default_is_const(t.table).unwrap_or(false),
                "default": default.map(|(a, params)| json!({"index": a.0, "params": params})),
                "direct_counter": n.direct_counters.iter().find(|c| Some(c.id) == t.direct_counter)
                    .map(|c| c.name.clone()),
                "direct_meter": n.direct_meters.iter().find(|c| Some(c.id) == t.direct_meter)
                    .map(|c| c.name.clone()),
                "profile": p.table_profile(t.table).ok().flatten().map(|x| x.0),
                "support_timeout": p.supports_timeout(t.table).unwrap_or(false),
            })
        })
        .collect();
    let actions: Vec<Value> = n
        .actions
        .iter()
        .map(|a| {
            json!({"name": a.name, "params": a.params.iter()
                   .map(|q| json!({"name": q.name, "bitwidth": q.bitwidth})).collect::<Vec<_>>()})
        })
        .collect();
    let meter_units: Vec<Value> = n
        .meters
        .iter()
        .chain(&n.direct_meters)
        .map(|m| json!([m.name, p.meter_counts_packets(&m.name).unwrap_or(false)]))
        .collect();
    json!({
        "tables": tables,
        "actions": actions,
        "profiles": profiles_json(p),
        "value_sets": p.value_set_names().iter().filter_map(|n| {
            let (width, max_size) = p.value_set_info(n).ok()?;
            Some(json!({"name": n, "width": width, "max_size": max_size}))
        }).collect::<Vec<_>>(),
        "counters": externs_json(&n.counters),
        "direct_counters": externs_json(&n.direct_counters),
        "meters": externs_json(&n.meters),
        "direct_meters": externs_json(&n.direct_meters),
        "registers": externs_json(&n.registers),
        "meter_packets": meter_units,
        "learn_lists": p.learn_lists().iter()
            .map(|(name, widths)| json!({"name": name, "widths": widths}))
            .collect::<Vec<_>>(),
    })
    .to_string()
}

/// Compile a bmv2 JSON program without installing it. P4rtError(INVALID_ARGUMENT) if refused.
#[pyfunction]
fn p4rt_compile(py: Python<'_>, json_text: &str) -> PyResult<PyP4rtProgram> {
    py.allow_threads(|| {
        let p = Program::load(json_text).map_err(|e| py_err(INVALID_ARGUMENT, e.to_string()))?;
        let names = names_json(&p);
        Ok(PyP4rtProgram {
            program: Mutex::new(Some(p)),
            names,
        })
    })
}

fn take_program(staged: &PyP4rtProgram) -> PyResult<Program> {
    staged
        .program
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .ok_or_else(|| py_err(FAILED_PRECONDITION, "this program was committed already"))
}

/// Install a staged program; the old program and its entries are gone.
#[pyfunction]
fn p4rt_commit(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    staged: PyRef<'_, PyP4rtProgram>,
) -> PyResult<()> {
    let p = take_program(&staged)?;
    let sw: &PySwitch = &sw;
    py.allow_threads(|| sw.inner.with(|dp| dp.set_program(p)));
    Ok(())
}

/// Install a staged program keeping the running program's table entries, default actions,
/// counters and registers (matched by name). Fails, changing nothing, if an entry cannot move.
#[pyfunction]
fn p4rt_reconcile(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    staged: PyRef<'_, PyP4rtProgram>,
) -> PyResult<()> {
    let mut new = take_program(&staged)?;
    let sw: &PySwitch = &sw;
    let r = py.allow_threads(|| {
        sw.inner.with(|dp| {
            if let Some(old) = dp.program() {
                new.carry_state_from(old)?;
            }
            dp.set_program(new);
            Ok::<(), String>(())
        })
    });
    r.map_err(|e| py_err(INVALID_ARGUMENT, format!("cannot reconcile: {e}")))
}

/// One table update: (op, table, keys, action, params, priority, hint handle or -1,
/// counter (packets, bytes) or None, meter rates or None, target or None). Ops: 0 insert,
/// 1 modify, 2 delete, 3 set default action, 4 write direct counter, 5 write direct meter
/// (rates None = reset). In an indirect table the target (is a group, handle) takes the place
/// of the action; op 3 with no target and action `u32::MAX` resets the default member.
type PyOp = (
    u8,
    u32,
    Vec<PyKey>,
    u32,
    Vec<PyBackedBytes>,
    i32,
    i64,
    Option<(u64, u64)>,
    Option<PyRates>,
    Option<PyTarget>,
);

/// A member or group of an action profile: (is a group, handle).
pub(crate) type PyTarget = (bool, u32);

pub(crate) fn target_of(t: PyTarget) -> ProfileRef {
    match t {
        (true, h) => ProfileRef::Group(h),
        (false, h) => ProfileRef::Member(h),
    }
}

fn target_out(r: ProfileRef) -> PyTarget {
    match r {
        ProfileRef::Group(h) => (true, h),
        ProfileRef::Member(h) => (false, h),
    }
}

/// Result of one update: (status code, entry handle or -1, message).
type OpResult = (u8, i64, String);

fn apply_op(p: &mut Program, op: &PyOp) -> Result<i64, (u8, String)> {
    let (kind, table, keys, action, params, priority, hint, counter, meter, target) = op;
    let target = target.map(target_of);
    let t = TableId(*table);
    let a = ActionId(*action);
    let params = || params.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
    let keys: Vec<MatchKey> = keys
        .iter()
        .map(to_key)
        .collect::<Result<_, _>>()
        .map_err(|e| (INVALID_ARGUMENT, e))?;
    let e = |x: ApiError| (code_of(&x), x.to_string());
    let find = |p: &Program| -> Result<EntryHandle, (u8, String)> {
        let hint = u32::try_from(*hint).ok().map(EntryHandle);
        p.find_entry_hint(t, &keys, *priority, hint)
            .map_err(e)?
            .ok_or((NOT_FOUND, "no entry with this match key".to_string()))
    };
    let counter_value = |c: &(u64, u64)| CounterValue {
        packets: c.0,
        bytes: c.1,
    };
    match kind {
        0 => {
            let h = match target {
                Some(r) => p.add_indirect_entry(t, keys.clone(), r, *priority),
                None => p.add_entry(t, keys.clone(), a, params(), *priority),
            }
            .map_err(e)?;
            if let Some(c) = counter {
                p.direct_counter_write(t, h, counter_value(c)).map_err(e)?;
            }
            if let Some(r) = meter {
                p.direct_meter_set(t, h, rates(*r)).map_err(e)?;
            }
            Ok(i64::from(h.0))
        }
        1 => {
            let h = find(p)?;
            match target {
                Some(r) => p.modify_indirect_entry(t, h, r),
                None => p.modify_entry(t, h, a, params()),
            }
            .map_err(e)?;
            if let Some(c) = counter {
                p.direct_counter_write(t, h, counter_value(c)).map_err(e)?;
            }
            if let Some(r) = meter {
                p.direct_meter_set(t, h, rates(*r)).map_err(e)?;
            }
            Ok(i64::from(h.0))
        }
        2 => {
            let h = find(p)?;
            p.delete_entry(t, h).map_err(e)?;
            Ok(i64::from(h.0))
        }
        3 if target.is_some() || *action == u32::MAX => {
            p.set_default_target(t, target).map_err(e)?;
            Ok(-1)
        }
        3 => {
            if p.default_is_const(t).map_err(e)?
                && p.default_entry(t).map_err(e)?.map(|d| d.0) != Some(a)
            {
                return Err((
                    PERMISSION_DENIED,
                    "the table's default action is const".into(),
                ));
            }
            p.set_default(t, a, params()).map_err(e)?;
            Ok(-1)
        }
        4 => {
            let h = find(p)?;
            p.direct_counter_write(t, h, counter.map(|c| counter_value(&c)).unwrap_or_default())
                .map_err(e)?;
            Ok(i64::from(h.0))
        }
        5 => {
            let h = find(p)?;
            match meter {
                Some(r) => p.direct_meter_set(t, h, rates(*r)).map_err(e)?,
                None => p.direct_meter_reset(t, h).map_err(e)?,
            }
            Ok(i64::from(h.0))
        }
        other => Err((INVALID_ARGUMENT, format!("unknown table operation {other}"))),
    }
}

/// Apply table updates in order; one result per update (later updates run after a failure).
#[pyfunction]
fn p4rt_table_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    ops: Vec<PyOp>,
) -> PyResult<Vec<OpResult>> {
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| {
            let Some(p) = dp.program_mut() else {
                return Err(py_err(FAILED_PRECONDITION, "no forwarding pipeline loaded"));
            };
            Ok(ops
                .iter()
                .map(|op| match apply_op(p, op) {
                    Ok(h) => (OK, h, String::new()),
                    Err((code, msg)) => (code, -1, msg),
                })
                .collect())
        })
    })
}

/// An entry as read: (handle, keys, action index, params, priority, (packets, bytes), meter,
/// target of an indirect entry or None).
pub(crate) type OutEntry = (
    u32,
    Vec<OutKey>,
    u32,
    Vec<Vec<u8>>,
    i32,
    (u64, u64),
    Option<PyRates>,
    Option<PyTarget>,
);

pub(crate) fn with_program<R: Send>(
    py: Python<'_>,
    sw: &PySwitch,
    f: impl FnOnce(&mut Program) -> Result<R, ApiError> + Send,
) -> PyResult<R> {
    py.allow_threads(|| {
        sw.inner.with(|dp| match dp.program_mut() {
            Some(p) => f(p).map_err(api_err),
            None => Err(py_err(FAILED_PRECONDITION, "no forwarding pipeline loaded")),
        })
    })
}

/// Entries of a table, in handle order.
#[pyfunction]
fn p4rt_table_read(py: Python<'_>, sw: PyRef<'_, PySwitch>, table: u32) -> PyResult<Vec<OutEntry>> {
    with_program(py, &sw, |p| {
        let t = TableId(table);
        let entries = p.entries(t)?;
        entries.into_iter().map(|e| view_out(p, t, e)).collect()
    })
}

/// The entry with these keys (hint handle checked first), or None.
#[pyfunction]
fn p4rt_table_find(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    keys: Vec<PyKey>,
    priority: i32,
    hint: i64,
) -> PyResult<Option<OutEntry>> {
    let keys: Vec<MatchKey> = keys
        .iter()
        .map(to_key)
        .collect::<Result<_, _>>()
        .map_err(|e| py_err(INVALID_ARGUMENT, e))?;
    with_program(py, &sw, |p| {
        let t = TableId(table);
        let hint = u32::try_from(hint).ok().map(EntryHandle);
        let Some(h) = p.find_entry_hint(t, &keys, priority, hint)? else {
            return Ok(None);
        };
        entry_out(p, t, h).map(Some)
    })
}

/// Entry `h` of table `t` as the entry reads return it: (handle, keys, action, params,
/// priority, (packets, bytes), direct meter rates).
pub(crate) fn entry_out(
    p: &Program,
    t: TableId,
    h: EntryHandle,
) -> Result<OutEntry, lanes_p4::ApiError> {
    view_out(p, t, p.entry_view(t, h)?)
}

fn view_out(p: &Program, t: TableId, e: EntryView) -> Result<OutEntry, lanes_p4::ApiError> {
    let m = p.direct_meter_get(t, e.handle)?;
    Ok((
        e.handle.0,
        e.keys.iter().map(from_key).collect(),
        e.action.0,
        e.params,
        e.priority,
        (e.counter.packets, e.counter.bytes),
        out_rates(m),
        e.target.map(target_out),
    ))
}

/// The default action of a table: (action index, params) or None.
#[pyfunction]
fn p4rt_table_default(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
) -> PyResult<Option<(u32, Vec<Vec<u8>>)>> {
    with_program(py, &sw, |p| {
        Ok(p.default_entry(TableId(table))?
            .map(|(a, params)| (a.0, params)))
    })
}

/// Removes every entry of a table.
#[pyfunction]
fn p4rt_table_clear(py: Python<'_>, sw: PyRef<'_, PySwitch>, table: u32) -> PyResult<()> {
    with_program(py, &sw, |p| p.clear_table(TableId(table)))
}

fn indices(p: &Program, name: &str, index: Option<u64>) -> Result<Vec<u64>, ApiError> {
    let size = p.extern_size(name)?;
    match index {
        Some(i) if i >= size => Err(ApiError::IndexOutOfRange {
            name: name.to_string(),
            index: i,
            size,
        }),
        Some(i) => Ok(vec![i]),
        None => Ok((0..size).collect()),
    }
}

/// Cells of an indexed counter: [(index, packets, bytes)]; all cells if index is None.
#[pyfunction]
#[pyo3(signature = (sw, name, index = None))]
fn p4rt_counter_read(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
) -> PyResult<Vec<(u64, u64, u64)>> {
    with_program(py, &sw, |p| {
        indices(p, &name, index)?
            .into_iter()
            .map(|i| p.counter_read(&name, i).map(|c| (i, c.packets, c.bytes)))
            .collect()
    })
}

/// Set counter cells (all cells if index is None).
#[pyfunction]
#[pyo3(signature = (sw, name, index, packets, bytes))]
fn p4rt_counter_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
    packets: u64,
    bytes: u64,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        for i in indices(p, &name, index)? {
            p.counter_write(&name, i, CounterValue { packets, bytes })?;
        }
        Ok(())
    })
}

/// Cells of a register: [(index, value)]; all cells if index is None.
#[pyfunction]
#[pyo3(signature = (sw, name, index = None))]
fn p4rt_register_read(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
) -> PyResult<Vec<(u64, u64)>> {
    with_program(py, &sw, |p| {
        indices(p, &name, index)?
            .into_iter()
            .map(|i| p.register_read(&name, i).map(|v| (i, v)))
            .collect()
    })
}

/// Set register cells (all cells if index is None).
#[pyfunction]
#[pyo3(signature = (sw, name, index, value))]
fn p4rt_register_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
    value: u64,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        for i in indices(p, &name, index)? {
            p.register_write(&name, i, value)?;
        }
        Ok(())
    })
}

/// Meter cells: [(index, rates or None)]; all cells if index is None.
#[pyfunction]
#[pyo3(signature = (sw, name, index = None))]
fn p4rt_meter_read(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
) -> PyResult<Vec<(u64, Option<PyRates>)>> {
    with_program(py, &sw, |p| {
        indices(p, &name, index)?
            .into_iter()
            .map(|i| p.meter_get(&name, i).map(|r| (i, out_rates(r))))
            .collect()
    })
}

/// Configure meter cells (all if index is None); rates None returns them to unconfigured.
#[pyfunction]
#[pyo3(signature = (sw, name, index, rates_))]
fn p4rt_meter_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    name: String,
    index: Option<u64>,
    rates_: Option<PyRates>,
) -> PyResult<()> {
    with_program(py, &sw, |p| {
        for i in indices(p, &name, index)? {
            match rates_ {
                Some(r) => p.meter_set(&name, i, rates(r))?,
                None => p.meter_reset(&name, i)?,
            }
        }
        Ok(())
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("P4rtError", m.py().get_type::<P4rtError>())?;
    m.add_class::<PyP4rtProgram>()?;
    m.add_function(wrap_pyfunction!(p4rt_compile, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_commit, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_reconcile, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_read, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_find, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_default, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_clear, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_counter_read, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_counter_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_register_read, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_register_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_meter_read, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_meter_write, m)?)?;
    Ok(())
}

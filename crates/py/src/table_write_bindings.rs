//! Table writes from Python: `TableWrite` (one write, its fields by name), `WriteResult` (its
//! outcome with both error codes), `p4rt_table_write` (a batch under one hold of the data
//! plane, idle timeouts included) and the key lookups the Thrift and P4Runtime reads make.
//! Rules and error codes are lanes-p4's; this file only converts.

use lanes_p4::api_error::grpc;
use lanes_p4::{
    ActionId, ApiError, CounterValue, FieldMatch, KeyRules, MatchKey, TableId, TableWrite,
    WriteKind,
};
use lanes_switch::dataplane_now_ns;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::codes::{
    KEY_ANY, KEY_EXACT, KEY_LPM, KEY_OPTIONAL, KEY_RANGE, KEY_TERNARY, OP_COUNTER, OP_DEFAULT,
    OP_DELETE, OP_INSERT, OP_METER, OP_MODIFY,
};
use crate::entry_read::{entry_out, view_out, EntryRead};
use crate::p4rt_bindings::{api_err, py_err, rates, target_of, with_program, PyRates, PyTarget};
use crate::switch_bindings::PySwitch;

/// A match key field from Python: (position in the table's key, kind, a, b, prefix_len); kinds
/// (crate::codes) exact(a), lpm(a, plen), ternary(a, mask b), range(low a, high b),
/// optional(a), any (optional wildcard).
pub(crate) type PyKey = (u32, u8, PyBackedBytes, PyBackedBytes, u32);

fn field_of(k: &PyKey) -> PyResult<FieldMatch> {
    let (field, kind, a, b, plen) = k;
    let key = match *kind {
        KEY_EXACT => MatchKey::Exact(a.to_vec()),
        KEY_LPM => MatchKey::Lpm(a.to_vec(), *plen),
        KEY_TERNARY => MatchKey::Ternary(a.to_vec(), b.to_vec()),
        KEY_RANGE => MatchKey::Range(a.to_vec(), b.to_vec()),
        KEY_OPTIONAL => MatchKey::Optional(Some(a.to_vec())),
        KEY_ANY => MatchKey::Optional(None),
        other => {
            return Err(py_err(
                grpc::INVALID_ARGUMENT,
                format!("unknown match kind {other}"),
            ))
        }
    };
    Ok(FieldMatch { field: *field, key })
}

fn fields_of(keys: &[PyKey]) -> PyResult<Vec<FieldMatch>> {
    keys.iter().map(field_of).collect()
}

fn rules_of(p4runtime_rules: bool) -> KeyRules {
    if p4runtime_rules {
        KeyRules::P4Runtime
    } else {
        KeyRules::Bmv2
    }
}

/// One table write, built from Python by name (lanes-p4's `TableWrite`).
#[pyclass(name = "TableWrite", frozen, module = "lanes._native")]
pub(crate) struct PyTableWrite {
    inner: TableWrite,
}

#[pymethods]
impl PyTableWrite {
    /// `kind`: OP_INSERT, OP_MODIFY, OP_DELETE, OP_DEFAULT, OP_COUNTER or OP_METER; `action`
    /// None (with no `target`) in an OP_DEFAULT returns an indirect table to its program
    /// default; `meter` None in an OP_METER unconfigures the meter; `idle_timeout_ns` None
    /// leaves the entry's timeout, 0 makes it never age; `metadata` None leaves the
    /// controller's metadata as it is, b"" clears it; `p4runtime_rules` False holds the key to
    /// bmv2's rules instead of P4Runtime's.
    #[new]
    #[pyo3(signature = (kind, table, keys = Vec::new(), priority = 0, action = None,
        params = Vec::new(), target = None, counter = None, meter = None,
        idle_timeout_ns = None, metadata = None, p4runtime_rules = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        kind: u8,
        table: u32,
        keys: Vec<PyKey>,
        priority: i32,
        action: Option<u32>,
        params: Vec<PyBackedBytes>,
        target: Option<PyTarget>,
        counter: Option<(u64, u64)>,
        meter: Option<PyRates>,
        idle_timeout_ns: Option<u64>,
        metadata: Option<PyBackedBytes>,
        p4runtime_rules: bool,
    ) -> PyResult<Self> {
        let kind = match kind {
            OP_INSERT => WriteKind::Insert,
            OP_MODIFY => WriteKind::Modify,
            OP_DELETE => WriteKind::Delete,
            OP_DEFAULT => WriteKind::SetDefault,
            OP_COUNTER => WriteKind::DirectCounter,
            OP_METER => WriteKind::DirectMeter,
            other => {
                return Err(py_err(
                    grpc::INVALID_ARGUMENT,
                    format!("unknown table operation {other}"),
                ))
            }
        };
        let params = || params.iter().map(|x| x.to_vec()).collect();
        Ok(PyTableWrite {
            inner: TableWrite {
                kind,
                table: TableId(table),
                keys: fields_of(&keys)?,
                rules: rules_of(p4runtime_rules),
                priority,
                action: action.map(|a| (ActionId(a), params())),
                target: target.map(target_of),
                counter: counter.map(|(packets, bytes)| CounterValue { packets, bytes }),
                meter: meter.map(rates),
                idle_timeout_ns,
                metadata: metadata.map(|m| m.to_vec()),
            },
        })
    }

    fn __repr__(&self) -> String {
        format!("TableWrite({:?})", self.inner)
    }
}

/// What became of one write: `code` (gRPC, 0 = OK) and `thrift_code` (bmv2's
/// TableOperationErrorCode, 0 = OK) of the same error, the entry's handle (-1: none) and the
/// error's one-line message.
#[pyclass(name = "WriteResult", frozen, get_all, module = "lanes._native")]
pub(crate) struct WriteResult {
    code: u8,
    thrift_code: i32,
    handle: i64,
    message: String,
}

#[pymethods]
impl WriteResult {
    fn __repr__(&self) -> String {
        format!(
            "WriteResult(code={}, thrift_code={}, handle={}, message={:?})",
            self.code, self.thrift_code, self.handle, self.message
        )
    }
}

fn result_of(r: Result<Option<lanes_p4::EntryHandle>, ApiError>) -> WriteResult {
    match r {
        Ok(h) => WriteResult {
            code: grpc::OK,
            thrift_code: 0,
            handle: h.map_or(-1, |h| i64::from(h.0)),
            message: String::new(),
        },
        Err(e) => WriteResult {
            code: e.grpc_code(),
            thrift_code: e.thrift_code(),
            handle: -1,
            message: e.to_string(),
        },
    }
}

/// Applies table writes in order under one hold of the data plane; one result per write (later
/// writes run after a failure). P4rtError only if no program runs.
#[pyfunction]
fn p4rt_table_write(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    writes: Vec<Bound<'_, PyTableWrite>>,
) -> PyResult<Vec<WriteResult>> {
    let writes: Vec<&TableWrite> = writes.iter().map(|w| &w.get().inner).collect();
    let sw: &PySwitch = &sw;
    py.allow_threads(|| {
        sw.inner.with(|dp| {
            let Some(p) = dp.program_mut() else {
                return Err(api_err(ApiError::NoProgram));
            };
            let now = dataplane_now_ns();
            Ok(writes
                .iter()
                .map(|w| result_of(p.apply_write(w, now)))
                .collect())
        })
    })
}

/// The entry with these key fields (and priority, in a ternary table), or None.
#[pyfunction]
#[pyo3(signature = (sw, table, keys, priority, p4runtime_rules = true))]
fn p4rt_table_find(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    keys: Vec<PyKey>,
    priority: i32,
    p4runtime_rules: bool,
) -> PyResult<Option<EntryRead>> {
    let fields = fields_of(&keys)?;
    with_program(py, &sw, |p| {
        let t = TableId(table);
        let Some(h) = p.lookup_entry(t, &fields, rules_of(p4runtime_rules), priority)? else {
            return Ok(None);
        };
        entry_out(p, t, h).map(Some)
    })
}

/// Entries of a table in handle order; with `fields`, only those whose key has these values in
/// these fields (each checked under P4Runtime's rules).
#[pyfunction]
#[pyo3(signature = (sw, table, fields = None))]
fn p4rt_table_read(
    py: Python<'_>,
    sw: PyRef<'_, PySwitch>,
    table: u32,
    fields: Option<Vec<PyKey>>,
) -> PyResult<Vec<EntryRead>> {
    let fields = fields_of(fields.as_deref().unwrap_or_default())?;
    with_program(py, &sw, |p| {
        let t = TableId(table);
        let entries = p.entries_with(t, &fields)?;
        entries.into_iter().map(|e| view_out(p, t, e)).collect()
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTableWrite>()?;
    m.add_class::<WriteResult>()?;
    m.add_function(wrap_pyfunction!(p4rt_table_write, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_find, m)?)?;
    m.add_function(wrap_pyfunction!(p4rt_table_read, m)?)?;
    Ok(())
}

//! lanes's routing engines behind a C ABI for the OpenSM plugin in `plugin/`: the plugin walks
//! OpenSM's subnet on every heavy sweep, hands it over with `lanes_osm_add_node` and
//! `lanes_osm_connect`, calls `lanes_osm_route`, and copies each switch's table back with
//! `lanes_osm_table`. Every function takes the handle from `lanes_osm_new`; strings are
//! NUL-terminated UTF-8; nothing here panics across the boundary (a panic becomes an error).

mod session;

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use session::{changed_blocks, Session, ENGINES};

/// The handle: a session plus the C strings last handed out (valid until the next call).
pub struct Handle {
    session: Session,
    report: CString,
    error: CString,
}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller passes a NUL-terminated string (documented contract).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn handle<'a>(h: *mut Handle) -> Option<&'a mut Handle> {
    // SAFETY: `h` is null or came from `lanes_osm_new` and was not freed (documented contract).
    unsafe { h.as_mut() }
}

fn set_error(h: &mut Handle, msg: &str) -> c_int {
    h.error = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    -1
}

#[no_mangle]
pub extern "C" fn lanes_osm_new() -> *mut Handle {
    Box::into_raw(Box::new(Handle {
        session: Session::default(),
        report: CString::default(),
        error: CString::default(),
    }))
}

/// # Safety
/// `h` must come from `lanes_osm_new` and not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn lanes_osm_free(h: *mut Handle) {
    if !h.is_null() {
        drop(Box::from_raw(h));
    }
}

#[no_mangle]
pub extern "C" fn lanes_osm_begin(h: *mut Handle) {
    if let Some(h) = handle(h) {
        h.session.begin();
    }
}

/// Adds a switch (`is_switch` != 0) or a CA port; returns its index, or -1.
#[no_mangle]
pub extern "C" fn lanes_osm_add_node(
    h: *mut Handle,
    is_switch: c_int,
    guid: u64,
    nports: u8,
    lid: u16,
    name: *const c_char,
) -> i64 {
    let Some(h) = handle(h) else { return -1 };
    let name = text(name);
    i64::from(h.session.add_node(is_switch != 0, guid, nports, lid, &name))
}

/// Index of the node added with `guid` (a switch's node GUID, a CA's port GUID), or -1.
#[no_mangle]
pub extern "C" fn lanes_osm_node_index(h: *mut Handle, guid: u64) -> i64 {
    handle(h)
        .and_then(|h| h.session.node_index(guid))
        .map_or(-1, i64::from)
}

/// Links port `pa` of node `a` with port `pb` of node `b` (once or from both ends). 0 or -1.
#[no_mangle]
pub extern "C" fn lanes_osm_connect(h: *mut Handle, a: u32, pa: u8, b: u32, pb: u8) -> c_int {
    let Some(h) = handle(h) else { return -1 };
    match h.session.connect(a, pa, b, pb) {
        Ok(()) => 0,
        Err(e) => set_error(h, &e.0),
    }
}

/// Routes with `engine` (ftree, slimupdate, subtree, vswitch); `opts` is JSON or empty. 0 or -1
/// (the message from `lanes_osm_error`).
#[no_mangle]
pub extern "C" fn lanes_osm_route(
    h: *mut Handle,
    engine: *const c_char,
    opts: *const c_char,
) -> c_int {
    let Some(h) = handle(h) else { return -1 };
    let engine = text(engine);
    let opts = text(opts);
    let opts: serde_json::Value = if opts.trim().is_empty() {
        serde_json::json!({})
    } else {
        match serde_json::from_str(&opts) {
            Ok(v) => v,
            Err(e) => return set_error(h, &format!("bad options: {e}")),
        }
    };
    let session = &mut h.session;
    match catch_unwind(AssertUnwindSafe(|| session.route(&engine, &opts))) {
        Ok(Ok(())) => {
            h.report = CString::new(h.session.report.clone()).unwrap_or_default();
            0
        }
        Ok(Err(e)) => set_error(h, &e.0),
        Err(_) => set_error(h, "lanes engine failed (internal error)"),
    }
}

/// Copies the new table of switch `guid` (entries for LIDs 0..len) into `out`. 0, or -1 when
/// lanes routed no such switch.
/// # Safety
/// `out` must be writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn lanes_osm_table(
    h: *mut Handle,
    guid: u64,
    out: *mut u8,
    len: usize,
) -> c_int {
    let Some(h) = handle(h) else { return -1 };
    if out.is_null() {
        return -1;
    }
    // SAFETY: the caller passes a writable buffer of `len` bytes (OpenSM's new_lft).
    let buf = std::slice::from_raw_parts_mut(out, len);
    if h.session.table(guid, buf) {
        0
    } else {
        -1
    }
}

/// Copies the hop counts of switch `guid`'s new routes (LIDs 0..len) into `out`. 0 or -1.
/// # Safety
/// `out` must be writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn lanes_osm_hops(
    h: *mut Handle,
    guid: u64,
    out: *mut u8,
    len: usize,
) -> c_int {
    let Some(h) = handle(h) else { return -1 };
    if out.is_null() {
        return -1;
    }
    // SAFETY: the caller passes a writable buffer of `len` bytes.
    let buf = std::slice::from_raw_parts_mut(out, len);
    if h.session.hops(guid, buf) {
        0
    } else {
        -1
    }
}

/// JSON report of the last routing (engine, times, SMPs, deadlock check); valid until the next call.
#[no_mangle]
pub extern "C" fn lanes_osm_report(h: *mut Handle) -> *const c_char {
    handle(h).map_or(std::ptr::null(), |h| h.report.as_ptr())
}

/// Message of the last error; valid until the next call.
#[no_mangle]
pub extern "C" fn lanes_osm_error(h: *mut Handle) -> *const c_char {
    handle(h).map_or(std::ptr::null(), |h| h.error.as_ptr())
}

//! Bindings for lanes-switch: start a switch on real interfaces (or on pcap files), load a
//! program, run commands, read counters. The data plane runs on its own thread and never takes the GIL;
//! every call here releases the GIL while it waits for the data plane's lock.

use std::path::PathBuf;

use lanes_p4::Program;
use lanes_switch::commands::{answer, execute, stats};
use lanes_switch::{
    BatchWindow, FilePort, FileSwitch, FileSwitchOptions, PortSpec, Switch, SwitchOptions,
    TmDefaults,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::switch_handle::SwitchHandle;

#[pyclass(name = "Switch")]
pub(crate) struct PySwitch {
    pub(crate) inner: SwitchHandle,
}

#[pymethods]
impl PySwitch {
    /// ports: list of (port number, interface name, line rate in bits/s or None). With
    /// `use_files_wait_s` the names are file names instead (bmv2's --use-files): NAME_in.pcap is
    /// read after that many seconds, NAME_out.pcap written. `batch_ns` None: each port its own
    /// batch window (four full frames at its rate, 250 to 500 us).
    #[allow(clippy::too_many_arguments)] // mirrors the Python keyword arguments
    #[new]
    #[pyo3(signature = (ports, rate_bps = 10e9, scheduler = "strict", queues = 8, depth_pkts = 64,
                        buffer_bytes = None, pcap_dir = None, cpu_port = None,
                        batch_ns = None, drop = "tail",
                        use_files_wait_s = None, rx_mode = "packet", poll_ns = 0, tm_model = "lanes",
                        wake_top_class = false, reply_poll_ns = lanes_switch::DEFAULT_REPLY_POLL_NS,
                        wake_after_turn = true))]
    fn new(
        py: Python<'_>,
        ports: Vec<(u32, String, Option<f64>)>,
        rate_bps: f64,
        scheduler: &str,
        queues: usize,
        depth_pkts: u32,
        buffer_bytes: Option<u64>,
        pcap_dir: Option<PathBuf>,
        cpu_port: Option<u32>,
        batch_ns: Option<u64>,
        drop: &str,
        use_files_wait_s: Option<u64>,
        rx_mode: &str,
        poll_ns: u64,
        tm_model: &str,
        wake_top_class: bool,
        reply_poll_ns: u64,
        wake_after_turn: bool,
    ) -> PyResult<Self> {
        let model = tm_model
            .parse()
            .map_err(|e: lanes_tm::ConfigError| PyValueError::new_err(e.0))?;
        let rx_mode: lanes_switch::RxMode = rx_mode.parse().map_err(PyValueError::new_err)?;
        let scheduler = scheduler
            .parse()
            .map_err(|e: lanes_tm::ConfigError| PyValueError::new_err(e.0))?;
        let drop = drop
            .parse()
            .map_err(|e: lanes_tm::ConfigError| PyValueError::new_err(e.0))?;
        let tm = TmDefaults {
            rate_bps,
            scheduler,
            queues,
            depth_pkts,
            buffer_bytes,
            drop,
            model,
            ..TmDefaults::default()
        };
        if let Some(wait_s) = use_files_wait_s {
            let opts = FileSwitchOptions {
                ports: ports
                    .into_iter()
                    .map(|(num, name, _)| FilePort { num, name })
                    .collect(),
                cpu_port,
                tm,
                wait: std::time::Duration::from_secs(wait_s),
            };
            let inner = py
                .allow_threads(|| FileSwitch::start(opts))
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            return Ok(PySwitch {
                inner: SwitchHandle::Files(inner),
            });
        }
        let ports = ports
            .into_iter()
            .map(|(num, ifname, rate_bps)| PortSpec {
                num,
                ifname,
                rate_bps,
            })
            .collect();
        let opts = SwitchOptions {
            ports,
            cpu_port,
            tm,
            pcap_dir,
            batch: batch_ns.map_or(BatchWindow::PerPort, BatchWindow::Fixed),
            rx_mode,
            poll_ns,
            reply_poll_ns,
            wake_top_class,
            wake_after_turn,
        };
        let inner = py
            .allow_threads(|| Switch::start(opts))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(PySwitch {
            inner: SwitchHandle::Live(inner),
        })
    }

    /// Load a bmv2 JSON program (replaces the running one). ValueError names what is wrong.
    fn load_program(&self, py: Python<'_>, json_text: &str) -> PyResult<()> {
        let program = py
            .allow_threads(|| Program::load(json_text))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        py.allow_threads(|| self.inner.with(|dp| dp.set_program(program)));
        Ok(())
    }

    /// bmv2's log: `level` "info" (the programs' `log_msg` lines), "debug" or "trace" (the
    /// per-packet lines too) turns it on (stdout with `console`, appended to `file`), anything
    /// else turns it off. RuntimeError if the file cannot be opened.
    #[pyo3(signature = (level, console = false, file = None))]
    fn set_trace_log(
        &self,
        py: Python<'_>,
        level: &str,
        console: bool,
        file: Option<PathBuf>,
    ) -> PyResult<()> {
        let log = match lanes_p4::LogLevel::from_name(level) {
            Some(l) => Some(
                lanes_switch::TraceLog::open(console, file.as_deref(), l)
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
            ),
            None => None,
        };
        py.allow_threads(|| self.inner.with(|dp| dp.set_trace_log(log)));
        Ok(())
    }

    fn has_program(&self, py: Python<'_>) -> bool {
        py.allow_threads(|| self.inner.with(|dp| dp.program().is_some()))
    }

    /// One simple_switch_CLI-style command; returns its output, ValueError with one line on error.
    fn command(&self, py: Python<'_>, line: &str) -> PyResult<String> {
        py.allow_threads(|| self.inner.with(|dp| execute(dp, line)))
            .map_err(PyValueError::new_err)
    }

    /// The same as `command`, with the handle of the entry, member, group or node the command
    /// created (None if it created none): (output, handle).
    fn command_answer(&self, py: Python<'_>, line: &str) -> PyResult<(String, Option<u32>)> {
        py.allow_threads(|| self.inner.with(|dp| answer(dp, line)))
            .map(|a| (a.text, a.handle))
            .map_err(PyValueError::new_err)
    }

    /// Frames the program sent to the CPU port since the last call (P4Runtime PacketIn),
    /// waiting up to `timeout_ms` for the first one.
    fn wait_packet_ins(&self, py: Python<'_>, timeout_ms: u64) -> Vec<Vec<u8>> {
        py.allow_threads(|| {
            self.inner
                .wait_packet_ins(std::time::Duration::from_millis(timeout_ms))
        })
    }

    /// Digests ingress generated since the last call, as (learn list index, field values),
    /// waiting up to `timeout_ms` for the first one.
    fn wait_digests(&self, py: Python<'_>, timeout_ms: u64) -> Vec<(u32, Vec<Vec<u8>>)> {
        py.allow_threads(|| {
            self.inner
                .wait_digests(std::time::Duration::from_millis(timeout_ms))
                .into_iter()
                .map(|d| (d.list, d.fields))
                .collect()
        })
    }

    /// Inject a frame on the CPU port (P4Runtime PacketOut). ValueError if there is none.
    fn inject(&self, py: Python<'_>, frame: Vec<u8>) -> PyResult<()> {
        py.allow_threads(|| {
            self.inner
                .with(|dp| dp.inject(&frame, lanes_switch::dataplane_now_ns()))
        })
        .map_err(PyValueError::new_err)
    }

    /// Start taking frames: a file switch (use_files_wait_s) reads its inputs only from this
    /// call on, so the program and its first entries are in place before the first frame.
    fn start_ports(&self) {
        self.inner.start_ports();
    }

    fn is_running(&self) -> bool {
        self.inner.is_running()
    }

    /// Stop the data plane thread (idempotent). RuntimeError if the loop had failed.
    fn stop(&mut self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.stop())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// Counters of ports, queues and drops as a JSON string: the command port's `stats_json`.
    fn stats_json(&self, py: Python<'_>) -> PyResult<String> {
        // Serialising these structs cannot fail (string keys only, floats written as null when
        // not finite); should that change, the caller gets an exception, not a broken document.
        py.allow_threads(|| {
            self.inner
                .with(|dp| serde_json::to_string(&stats(dp, false)))
        })
        .map_err(|e| PyRuntimeError::new_err(format!("stats_json: {e}")))
    }
}

/// A rate like `100Mbps`, `1Gbps`, `2.5e9` in bits per second: the command port's parser, so
/// `lanes switch --port-rate` and `set_port_rate` read rates alike.
#[pyfunction]
fn parse_rate_bps(text: &str) -> PyResult<f64> {
    lanes_switch::commands::parse_rate_bps(text).map_err(PyValueError::new_err)
}

/// The token bucket (bytes) a queue limited to `rate_bytes_per_s` gets when none is given: the
/// traffic manager's own default, so the lab's kernel peer can be shaped alike.
#[pyfunction]
fn default_burst_bytes(rate_bytes_per_s: f64) -> u64 {
    lanes_tm::default_burst_bytes(rate_bytes_per_s)
}

/// The smallest delay (ns) in bucket `i` of the switch's queueing delay histograms, whose raw
/// buckets `show_delay` prints; None past the last bucket.
#[pyfunction]
fn delay_bucket_lower(i: usize) -> Option<u64> {
    (i < lanes_switch::delay::BUCKETS).then(|| lanes_switch::delay::lower(i))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySwitch>()?;
    m.add_function(wrap_pyfunction!(delay_bucket_lower, m)?)?;
    m.add_function(wrap_pyfunction!(default_burst_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_bps, m)?)?;
    Ok(())
}

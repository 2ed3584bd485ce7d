//! bmv2's log for the data plane (`-L info`: the programs' `log_msg` lines; `-L debug`/`-L trace`:
//! the per-packet lines too): where it goes (stdout with --log-console, FILE.txt with
//! --log-file FILE, both as bmv2) and its level. The data plane
//! keeps it so that each program it installs (command line, P4Runtime) logs the same way.
use super::Dataplane;
use lanes_p4::LogLevel;
use std::fs::OpenOptions;
use std::io::{self, LineWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The log's destinations, shared by the programs installed one after the other.
#[derive(Clone)]
pub struct TraceLog {
    sinks: Arc<Mutex<Vec<Box<dyn Write + Send>>>>,
    level: LogLevel,
}

impl TraceLog {
    /// `console`: stdout (bmv2's --log-console); `file`: appended to, a line at a time.
    pub fn open(console: bool, file: Option<&Path>, level: LogLevel) -> io::Result<TraceLog> {
        let mut sinks: Vec<Box<dyn Write + Send>> = Vec::new();
        if console {
            sinks.push(Box::new(io::stdout()));
        }
        if let Some(f) = file {
            let f = OpenOptions::new().create(true).append(true).open(f)?;
            sinks.push(Box::new(LineWriter::new(f)));
        }
        Ok(TraceLog {
            sinks: Arc::new(Mutex::new(sinks)),
            level,
        })
    }
}

/// One program's handle on the shared destinations.
struct SharedSink(Arc<Mutex<Vec<Box<dyn Write + Send>>>>);

impl Write for SharedSink {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let mut sinks = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for s in sinks.iter_mut() {
            s.write_all(b)?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut sinks = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for s in sinks.iter_mut() {
            s.flush()?;
        }
        Ok(())
    }
}

impl Dataplane {
    /// Starts (Some) or stops (None) the per-packet log, for this program and the next ones.
    pub fn set_trace_log(&mut self, log: Option<TraceLog>) {
        self.trace_log = log;
        self.apply_trace_log();
    }

    /// Gives the loaded program the data plane's log setting.
    pub(super) fn apply_trace_log(&mut self) {
        let Some(p) = self.program.as_mut() else {
            return;
        };
        match &self.trace_log {
            Some(l) => p.set_trace(Some(Box::new(SharedSink(l.sinks.clone()))), l.level),
            None => p.set_trace(None, LogLevel::Info),
        }
    }
}

//! bmv2's per-packet debug log (`simple_switch -L debug`): one line per event (packet received,
//! parser states and extracts, table hits and misses, actions with their data, conditions,
//! deparser, transmit), worded and ordered as bmv2 writes them so that what people grep for in
//! bmv2's log matches ours. The pipeline calls these methods only when a `Tracer` is set: off,
//! each event point is one untaken branch on an `Option`.
use crate::json;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// `[file:line]` of a JSON object's `source_info`, or "" when it has none; the fragment too.
fn source_of(v: &Value) -> (String, String) {
    let Some(si) = v.get("source_info") else {
        return (String::new(), String::new());
    };
    let file = si.get("filename").and_then(Value::as_str).unwrap_or("");
    let line = si.get("line").and_then(Value::as_u64).unwrap_or(0);
    let frag = si
        .get("source_fragment")
        .and_then(Value::as_str)
        .unwrap_or("");
    let file = file.rsplit('/').next().unwrap_or(file);
    (format!("[{file}:{line}] "), frag.to_string())
}

/// A parser state's name, location and the headers its extracts name, in order.
#[derive(Debug, Default, Clone)]
struct StateNames {
    name: String,
    extracts: Vec<String>,
}

/// A conditional's name, location and source text.
#[derive(Debug, Default, Clone)]
struct CondNames {
    name: String,
    at: String,
    fragment: String,
}

/// The names the log prints, in the order the loader indexes them.
#[derive(Debug, Default, Clone)]
pub struct TraceNames {
    parser: String,
    deparser: String,
    states: Vec<StateNames>,
    /// Conditionals and table locations per pipeline name.
    conds: HashMap<String, Vec<CondNames>>,
    table_at: HashMap<String, String>,
    /// Primitive locations per action name, in op order.
    primitives: HashMap<String, Vec<(String, String)>>,
    deparse: Vec<String>,
}

impl TraceNames {
    /// Reads the names from the program's JSON (already checked by the loader).
    pub fn from_json(root: &Value) -> TraceNames {
        let mut n = TraceNames::default();
        let arr = |v: &Value, k: &str| -> Vec<Value> {
            json::arr_or_empty(v, k, "")
                .map(|a| a.to_vec())
                .unwrap_or_default()
        };
        let name = |v: &Value| {
            v.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if let Some(p) = arr(root, "parsers").first() {
            n.parser = name(p);
            for s in arr(p, "parse_states") {
                let extracts = arr(&s, "parser_ops")
                    .iter()
                    .filter(|o| o.get("op").and_then(Value::as_str) == Some("extract"))
                    .filter_map(|o| o.pointer("/parameters/0/value").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect();
                n.states.push(StateNames {
                    name: name(&s),
                    extracts,
                });
            }
        }
        if let Some(d) = arr(root, "deparsers").first() {
            n.deparser = name(d);
            n.deparse = arr(d, "order")
                .iter()
                .filter_map(|h| h.as_str().map(str::to_string))
                .collect();
        }
        for p in arr(root, "pipelines") {
            let conds = arr(&p, "conditionals")
                .iter()
                .map(|c| {
                    let (at, fragment) = source_of(c);
                    CondNames {
                        name: name(c),
                        at,
                        fragment,
                    }
                })
                .collect();
            n.conds.insert(name(&p), conds);
            for t in arr(&p, "tables") {
                n.table_at.insert(name(&t), source_of(&t).0);
            }
        }
        for a in arr(root, "actions") {
            let prims = arr(&a, "primitives").iter().map(source_of).collect();
            n.primitives.insert(name(&a), prims);
        }
        n
    }

    /// The headers the deparser emits, in order (JSON names).
    pub fn deparse_order(&self) -> &[String] {
        &self.deparse
    }
}

/// bmv2's log levels that write something while packets run: `Info` only the program's
/// `log_msg` lines, `Debug` also the per-packet lines, `Trace` also the actions' primitives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    /// bmv2's name of the level (`-L NAME`); None for the levels that write none of it.
    pub fn from_name(name: &str) -> Option<LogLevel> {
        match name {
            "info" => Some(LogLevel::Info),
            "debug" => Some(LogLevel::Debug),
            "trace" => Some(LogLevel::Trace),
            _ => None,
        }
    }
}

/// Where the log goes (stderr, a file, a test's buffer) and the packet id counter.
pub struct Tracer {
    sink: Box<dyn Write + Send>,
    names: TraceNames,
    next_id: u64,
    thread: u32,
    level: LogLevel,
}

/// `HH:MM:SS.mmm` of the wall clock (UTC), as bmv2 stamps its lines.
fn clock() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let s = d.as_secs() % 86400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        d.subsec_millis()
    )
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tracer")
    }
}

impl Tracer {
    pub fn new(names: TraceNames, sink: Box<dyn Write + Send>, level: LogLevel) -> Tracer {
        Tracer {
            sink,
            names,
            next_id: 0,
            thread: std::process::id(),
            level,
        }
    }

    /// Whether the per-packet lines are written (debug and trace).
    fn packets(&self) -> bool {
        self.level >= LogLevel::Debug
    }

    /// A `log_msg` line: info level, without a packet's context (as bmv2's logger writes it).
    #[cold]
    #[inline(never)]
    pub fn log_msg(&mut self, msg: &str) {
        let t = clock();
        let _ = writeln!(self.sink, "[{t}] [bmv2] [I] [thread {}] {msg}", self.thread);
    }

    fn line(&mut self, id: u64, level: char, msg: &str) {
        let t = clock();
        // a failed write (closed stderr, full disk) must not stop the switch
        let _ = writeln!(
            self.sink,
            "[{t}] [bmv2] [{level}] [thread {}] [{id}.0] [cxt 0] {msg}",
            self.thread
        );
    }

    fn debug(&mut self, id: u64, msg: &str) {
        self.line(id, 'D', msg);
    }

    pub fn flush(&mut self) {
        let _ = self.sink.flush();
    }

    /// A new packet: returns its id for the packet's later lines.
    #[cold]
    #[inline(never)]
    pub fn received(&mut self, port: u32, len: usize) -> u64 {
        if !self.packets() {
            return 0;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.debug(id, &format!("Processing packet received on port {port}"));
        let _ = len;
        let p = self.names.parser.clone();
        self.debug(id, &format!("Parser '{p}': start"));
        id
    }

    #[cold]
    #[inline(never)]
    pub fn parse_state(&mut self, id: u64, state: usize) {
        if !self.packets() {
            return;
        }
        let Some(s) = self.names.states.get(state).cloned() else {
            return;
        };
        let p = self.names.parser.clone();
        self.debug(id, &format!("Parser '{p}' entering state '{}'", s.name));
        for h in &s.extracts {
            self.debug(id, &format!("Extracting header '{h}'"));
        }
    }

    #[cold]
    #[inline(never)]
    pub fn parse_done(&mut self, id: u64, bytes: u32, error: Option<&str>) {
        if !self.packets() {
            return;
        }
        if let Some(e) = error {
            self.debug(id, &format!("Exception while parsing: {e}"));
        }
        self.debug(id, &format!("Bytes parsed: {bytes}"));
        let p = self.names.parser.clone();
        self.debug(id, &format!("Parser '{p}': end"));
    }

    #[cold]
    #[inline(never)]
    pub fn pipeline(&mut self, id: u64, name: &str, start: bool) {
        if !self.packets() {
            return;
        }
        let what = if start { "start" } else { "end" };
        self.debug(id, &format!("Pipeline '{name}': {what}"));
    }

    #[cold]
    #[inline(never)]
    pub fn condition(&mut self, id: u64, control: &str, cond: usize, value: bool) {
        if !self.packets() {
            return;
        }
        let c = self
            .names
            .conds
            .get(control)
            .and_then(|v| v.get(cond))
            .cloned()
            .unwrap_or_default();
        let msg = format!(
            "{}Condition \"{}\" ({}) is {value}",
            c.at, c.fragment, c.name
        );
        self.debug(id, &msg);
    }

    /// A table lookup's result and the action it runs with its data (one hex value per word).
    #[cold]
    #[inline(never)]
    /// A table applied: its key (name and bytes per field, as bmv2's "Looking up key"), the
    /// entry hit or the miss, and the action run.
    pub fn table(
        &mut self,
        id: u64,
        table: &str,
        key: &[(&str, &[u8])],
        hit: Option<u32>,
        action: &str,
        data: &[u64],
    ) {
        if !self.packets() {
            return;
        }
        let at = self.names.table_at.get(table).cloned().unwrap_or_default();
        self.debug(id, &format!("{at}Applying table '{table}'"));
        if !key.is_empty() {
            self.debug(id, &key_lines(key));
        }
        match hit {
            Some(h) => self.debug(id, &format!("Table '{table}': hit with handle {h}")),
            None => self.debug(id, &format!("Table '{table}': miss")),
        }
        self.debug(
            id,
            &format!("Action entry is {}", action_entry(action, data)),
        );
        self.action(id, action);
    }

    fn action(&mut self, id: u64, action: &str) {
        self.debug(id, &format!("Action {action}"));
        if self.level < LogLevel::Trace {
            return;
        }
        let prims = self
            .names
            .primitives
            .get(action)
            .cloned()
            .unwrap_or_default();
        for (at, frag) in prims {
            self.line(id, 'T', &format!("{at}Primitive {frag}"));
        }
    }

    #[cold]
    #[inline(never)]
    pub fn egress_port(&mut self, id: u64, port: Option<u32>) {
        if !self.packets() {
            return;
        }
        match port {
            Some(p) => self.debug(id, &format!("Egress port is {p}")),
            None => self.debug(id, "Dropping packet at the end of ingress"),
        }
    }

    #[cold]
    #[inline(never)]
    pub fn deparse(&mut self, id: u64, valid: impl Fn(usize) -> bool) {
        if !self.packets() {
            return;
        }
        let d = self.names.deparser.clone();
        self.debug(id, &format!("Deparser '{d}': start"));
        for (i, h) in self.names.deparse.clone().iter().enumerate() {
            if valid(i) {
                self.debug(id, &format!("Deparsing header '{h}'"));
            }
        }
        self.debug(id, &format!("Deparser '{d}': end"));
    }

    #[cold]
    #[inline(never)]
    pub fn transmit(&mut self, id: u64, len: usize, port: u32) {
        if !self.packets() {
            return;
        }
        self.debug(
            id,
            &format!("Transmitting packet of size {len} out of port {port}"),
        );
    }

    #[cold]
    #[inline(never)]
    pub fn dropped_in_egress(&mut self, id: u64) {
        if !self.packets() {
            return;
        }
        self.debug(id, "Dropping packet at the end of egress");
    }
}

/// bmv2's "Action entry is NAME - V1,V2," (each value hex without leading zeros).
pub fn action_entry(action: &str, data: &[u64]) -> String {
    let mut s = format!("{action} - ");
    for w in data {
        s.push_str(&format!("{w:x},"));
    }
    s
}

/// bmv2's key dump: one "* name: hex" line per field, names padded to at least 20 characters.
fn key_lines(key: &[(&str, &[u8])]) -> String {
    let w = key.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(20);
    use std::fmt::Write as _;
    let mut out = String::from("Looking up key:\n");
    for (name, bytes) in key {
        let _ = write!(out, "* {name:<w$}: ");
        for b in *bytes {
            let _ = write!(out, "{b:02x}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn names() -> TraceNames {
        TraceNames::from_json(&serde_json::json!({
            "parsers": [{"name": "parser", "parse_states": [
                {"name": "start", "parser_ops": [
                    {"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}]}]}],
            "deparsers": [{"name": "deparser", "order": ["ethernet"]}],
            "pipelines": [{"name": "ingress",
                "tables": [{"name": "MyIngress.ipv4_lpm",
                    "source_info": {"filename": "p4/basic.p4", "line": 12, "column": 10,
                                    "source_fragment": "ipv4_lpm"}}],
                "conditionals": [{"name": "node_2",
                    "source_info": {"filename": "basic.p4", "line": 30, "column": 12,
                                    "source_fragment": "hdr.ipv4.isValid()"}}]}],
            "actions": [{"name": "MyIngress.ipv4_forward", "primitives": [
                {"op": "assign", "source_info": {"filename": "basic.p4", "line": 7,
                    "column": 8, "source_fragment": "standard_metadata.egress_spec = port"}}]}]
        }))
    }

    fn messages(buf: &Buf) -> Vec<String> {
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| l.split("[cxt 0] ").nth(1).unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_packet_is_logged_in_bmv2s_order_and_words() {
        let buf = Buf::default();
        let mut t = Tracer::new(names(), Box::new(buf.clone()), LogLevel::Trace);
        let id = t.received(1, 60);
        t.parse_state(id, 0);
        t.parse_done(id, 14, None);
        t.pipeline(id, "ingress", true);
        t.condition(id, "ingress", 0, true);
        t.table(
            id,
            "MyIngress.ipv4_lpm",
            &[],
            Some(3),
            "MyIngress.ipv4_forward",
            &[0x0a0b, 2],
        );
        t.pipeline(id, "ingress", false);
        t.egress_port(id, Some(2));
        t.deparse(id, |_| true);
        t.transmit(id, 60, 2);
        assert_eq!(
            messages(&buf),
            [
                "Processing packet received on port 1",
                "Parser 'parser': start",
                "Parser 'parser' entering state 'start'",
                "Extracting header 'ethernet'",
                "Bytes parsed: 14",
                "Parser 'parser': end",
                "Pipeline 'ingress': start",
                "[basic.p4:30] Condition \"hdr.ipv4.isValid()\" (node_2) is true",
                "[basic.p4:12] Applying table 'MyIngress.ipv4_lpm'",
                "Table 'MyIngress.ipv4_lpm': hit with handle 3",
                "Action entry is MyIngress.ipv4_forward - a0b,2,",
                "Action MyIngress.ipv4_forward",
                "[basic.p4:7] Primitive standard_metadata.egress_spec = port",
                "Pipeline 'ingress': end",
                "Egress port is 2",
                "Deparser 'deparser': start",
                "Deparsing header 'ethernet'",
                "Deparser 'deparser': end",
                "Transmitting packet of size 60 out of port 2",
            ]
        );
    }

    #[test]
    fn lines_carry_bmv2s_prefix_and_a_miss_names_the_default_action() {
        let buf = Buf::default();
        let mut t = Tracer::new(names(), Box::new(buf.clone()), LogLevel::Debug);
        t.received(0, 60);
        let id = t.received(0, 60);
        t.table(id, "MyIngress.ipv4_lpm", &[], None, "MyIngress.drop", &[]);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let last: Vec<&str> = text.lines().collect();
        // two lines per arrival ("Processing packet ...", "Parser ...: start"), then the table's
        assert!(last[4].contains("] [bmv2] [D] [thread "), "{}", last[4]);
        let applying = "] [1.0] [cxt 0] [basic.p4:12] Applying table 'MyIngress.ipv4_lpm'";
        assert!(last[4].ends_with(applying), "{}", last[4]);
        assert!(last[5].ends_with("Table 'MyIngress.ipv4_lpm': miss"));
        assert!(last[6].ends_with("Action entry is MyIngress.drop - "));
        // at debug level the primitives (trace level) are not printed
        assert_eq!(last.len(), 8);
    }

    #[test]
    fn a_tables_key_is_dumped_as_bmv2_dumps_it() {
        let buf = Buf::default();
        let mut t = Tracer::new(names(), Box::new(buf.clone()), LogLevel::Debug);
        let id = t.received(0, 60);
        let key: [(&str, &[u8]); 2] = [
            ("hdr.ipv4.dstAddr", &[10, 0, 1, 2]),
            ("hdr.ipv4.$valid$", &[1]),
        ];
        t.table(
            id,
            "MyIngress.ipv4_lpm",
            &key,
            Some(0),
            "MyIngress.drop",
            &[],
        );
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let at = text.find("Looking up key:\n").expect("no key dump");
        assert!(text[at..].starts_with(
            "Looking up key:\n* hdr.ipv4.dstAddr    : 0a000102\n* hdr.ipv4.$valid$    : 01\n\n"
        ));
        assert!(text[at..].contains("Table 'MyIngress.ipv4_lpm': hit with handle 0"));
    }
}

//! The scenario file: TOML in, validated ports and flows out. Every problem is reported in one
//! line that names the offending field.

use std::fmt;

use lanes_tm::{PortConfig, QueueConfig, Scheduler, TmModel};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub duration_s: f64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Length of the `intervals` buckets in the output.
    #[serde(default = "default_interval")]
    pub interval_s: f64,
    #[serde(rename = "port")]
    pub ports: Vec<PortSpec>,
    #[serde(rename = "flow", default)]
    pub flows: Vec<FlowSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    pub name: String,
    pub rate_bps: f64,
    pub scheduler: String,
    #[serde(default = "default_queues")]
    pub queues: usize,
    pub buffer_bytes: Option<u64>,
    #[serde(default)]
    pub overhead_bytes: u32,
    /// Depth of every queue not configured otherwise (bmv2's default is 64 packets).
    #[serde(default = "default_depth")]
    pub default_depth_pkts: u32,
    /// The port's TM: "lanes" (paced, the default) or "bmv2" (the model of bmv2's TM).
    pub tm_model: Option<String>,
    /// The bmv2 model's output buffer in packets (128, as bmv2's).
    pub output_buffer_pkts: Option<u32>,
    #[serde(rename = "queue", default)]
    pub queue: Vec<QueueSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct QueueSpec {
    pub index: usize,
    pub rate_Bps: Option<f64>,
    /// Token bucket size of the rate limit, bytes (default: 1 ms of the rate + 1514).
    pub burst_bytes: Option<u64>,
    pub quantum: Option<u32>,
    pub depth_pkts: Option<u32>,
    pub depth_bytes: Option<u64>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub enum PacketBytes {
    One(u32),
    Mix(Vec<u32>),
}

impl PacketBytes {
    pub fn sizes(&self) -> Vec<u32> {
        match self {
            PacketBytes::One(b) => vec![*b],
            PacketBytes::Mix(v) => v.clone(),
        }
    }
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Cbr,
    Poisson,
    Onoff,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    pub port: String,
    pub queue: usize,
    pub rate_bps: f64,
    pub packet_bytes: PacketBytes,
    #[serde(default = "default_pattern")]
    pub pattern: Pattern,
    pub on_s: Option<f64>,
    pub off_s: Option<f64>,
    #[serde(default)]
    pub start_s: f64,
    pub stop_s: Option<f64>,
}

fn default_seed() -> u64 {
    1
}
fn default_interval() -> f64 {
    0.1
}
fn default_queues() -> usize {
    8
}
fn default_depth() -> u32 {
    64
}
fn default_pattern() -> Pattern {
    Pattern::Cbr
}

/// A scenario that cannot run, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScenarioError {}

fn err<T>(msg: String) -> Result<T, ScenarioError> {
    Err(ScenarioError(msg))
}

fn positive(what: &str, v: f64) -> Result<(), ScenarioError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        err(format!("{what} must be a positive number, got {v}"))
    }
}

impl Scenario {
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|sp| text[..sp.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().trim().replace('\n', " ");
            match line {
                Some(l) => ScenarioError(format!("scenario line {l}: {msg}")),
                None => ScenarioError(format!("scenario: {msg}")),
            }
        })?;
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        positive("duration_s", self.duration_s)?;
        positive("interval_s", self.interval_s)?;
        if self.ports.is_empty() {
            return err("scenario has no [[port]]".into());
        }
        for (i, p) in self.ports.iter().enumerate() {
            if self.ports[..i].iter().any(|o| o.name == p.name) {
                return err(format!("port '{}': name used twice", p.name));
            }
            self.port_config(i)?;
            self.port_model(i)?;
        }
        for (i, f) in self.flows.iter().enumerate() {
            let ctx = format!("flow '{}'", f.name);
            if self.flows[..i].iter().any(|o| o.name == f.name) {
                return err(format!("{ctx}: name used twice"));
            }
            let Some(port) = self.ports.iter().find(|p| p.name == f.port) else {
                return err(format!("{ctx}: port '{}' does not exist", f.port));
            };
            if f.queue >= port.queues {
                return err(format!(
                    "{ctx}: queue {} out of range (port '{}' has {} queues)",
                    f.queue, port.name, port.queues
                ));
            }
            positive(&format!("{ctx}: rate_bps"), f.rate_bps)?;
            let sizes = f.packet_bytes.sizes();
            if sizes.is_empty() || sizes.iter().any(|&b| !(14..=65535).contains(&b)) {
                return err(format!(
                    "{ctx}: packet_bytes must be sizes from 14 to 65535 bytes, got {sizes:?}"
                ));
            }
            if !(f.start_s.is_finite() && f.start_s >= 0.0) {
                return err(format!("{ctx}: start_s must be >= 0, got {}", f.start_s));
            }
            if let Some(stop) = f.stop_s {
                if !(stop.is_finite() && stop > f.start_s) {
                    return err(format!("{ctx}: stop_s must be after start_s, got {stop}"));
                }
            }
            match (f.pattern, f.on_s, f.off_s) {
                (Pattern::Onoff, Some(on), Some(off)) => {
                    positive(&format!("{ctx}: on_s"), on)?;
                    positive(&format!("{ctx}: off_s"), off)?;
                }
                (Pattern::Onoff, _, _) => {
                    return err(format!("{ctx}: pattern 'onoff' needs on_s and off_s"))
                }
                (_, None, None) => {}
                _ => return err(format!("{ctx}: on_s/off_s apply only to pattern 'onoff'")),
            }
        }
        Ok(())
    }

    /// The TM configuration of port `i`.
    pub fn port_config(&self, i: usize) -> Result<PortConfig, ScenarioError> {
        let p = &self.ports[i];
        let ctx = format!("port '{}'", p.name);
        let scheduler: Scheduler = p
            .scheduler
            .parse()
            .map_err(|e| ScenarioError(format!("{ctx}: scheduler: {e}")))?;
        if p.queues == 0 || p.queues > lanes_tm::MAX_QUEUES {
            return err(format!(
                "{ctx}: queues must be 1 to {}, got {}",
                lanes_tm::MAX_QUEUES,
                p.queues
            ));
        }
        let mut cfg = PortConfig::new(p.rate_bps, scheduler, p.queues);
        for q in &mut cfg.queues {
            *q = QueueConfig {
                depth_pkts: Some(p.default_depth_pkts),
                ..QueueConfig::default()
            };
        }
        cfg.buffer_bytes = p.buffer_bytes;
        cfg.overhead_bytes = p.overhead_bytes;
        for qs in &p.queue {
            let Some(q) = cfg.queues.get_mut(qs.index) else {
                return err(format!(
                    "{ctx}: queue index {} out of range (port has {} queues)",
                    qs.index, p.queues
                ));
            };
            if qs.rate_Bps.is_some() {
                q.rate_bytes_per_s = qs.rate_Bps;
            }
            if qs.burst_bytes.is_some() {
                q.burst_bytes = qs.burst_bytes;
            }
            if let Some(quantum) = qs.quantum {
                q.quantum = quantum;
            }
            if qs.depth_pkts.is_some() || qs.depth_bytes.is_some() {
                q.depth_pkts = qs.depth_pkts;
                q.depth_bytes = qs.depth_bytes;
            }
        }
        cfg.validate()
            .map_err(|e| ScenarioError(format!("{ctx}: {e}")))?;
        Ok(cfg)
    }

    /// The TM model of port `i`.
    pub fn port_model(&self, i: usize) -> Result<TmModel, ScenarioError> {
        let p = &self.ports[i];
        let ctx = format!("port '{}'", p.name);
        let model: TmModel = match &p.tm_model {
            Some(m) => m
                .parse()
                .map_err(|e| ScenarioError(format!("{ctx}: tm_model: {e}")))?,
            None => TmModel::Paced,
        };
        match (model, p.output_buffer_pkts) {
            (TmModel::Paced, Some(_)) => err(format!(
                "{ctx}: output_buffer_pkts applies only to tm_model 'bmv2'"
            )),
            (TmModel::Bmv2 { .. }, Some(0)) => {
                err(format!("{ctx}: output_buffer_pkts must be at least 1"))
            }
            (TmModel::Bmv2 { .. }, Some(n)) => Ok(TmModel::Bmv2 { output_pkts: n }),
            (m, None) => Ok(m),
        }
    }

    pub fn flow_window(&self, f: &FlowSpec) -> (f64, f64) {
        let stop = f.stop_s.unwrap_or(self.duration_s).min(self.duration_s);
        (f.start_s.min(stop), stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
duration_s = 1.0
[[port]]
name = "p1"
rate_bps = 100e6
scheduler = "rlsp-drr"
  [[port.queue]]
  index = 7
  rate_Bps = 7.5e6
[[flow]]
name = "hp"
port = "p1"
queue = 7
rate_bps = 50e6
packet_bytes = [64, 1500]
"#;

    #[test]
    fn parses_the_documented_format() {
        let s = Scenario::from_toml(OK).unwrap();
        assert_eq!(s.flows[0].packet_bytes.sizes(), vec![64, 1500]);
        let c = s.port_config(0).unwrap();
        assert_eq!(c.queues[7].rate_bytes_per_s, Some(7.5e6));
        assert_eq!(c.queues[7].effective_burst_bytes(), 7500 + 1514);
        let c = Scenario::from_toml(&OK.replace(
            "rate_Bps = 7.5e6",
            "rate_Bps = 7.5e6\n  burst_bytes = 20000",
        ))
        .unwrap()
        .port_config(0)
        .unwrap();
        assert_eq!(c.queues[7].effective_burst_bytes(), 20000);
        assert_eq!(c.queues[0].depth_pkts, Some(64));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (
                OK.replace("rate_bps = 50e6", "rat_bps = 50e6"),
                "unknown field `rat_bps`",
            ),
            (
                OK.replace("queue = 7", "queue = 9"),
                "flow 'hp': queue 9 out of range",
            ),
            (
                OK.replace("port = \"p1\"", "port = \"p2\""),
                "flow 'hp': port 'p2' does not exist",
            ),
            (
                OK.replace("\"rlsp-drr\"", "\"wfq\""),
                "port 'p1': scheduler: unknown scheduler 'wfq'",
            ),
            (
                OK.replace("rate_Bps = 7.5e6", "rate_Bps = -1"),
                "port 'p1': queue 7: queue rate must be",
            ),
            (
                OK.replace("duration_s = 1.0", "duration_s = 0"),
                "duration_s must be a positive number",
            ),
            (
                OK.replace("[64, 1500]", "[]"),
                "flow 'hp': packet_bytes must be",
            ),
            (
                OK.replace("rate_Bps = 7.5e6", "rate_Bps = 7.5e6\nburst_bytes = 0"),
                "port 'p1': queue 7: queue burst must be at least 1 byte",
            ),
            (
                OK.replace("index = 7", "index = 8"),
                "port 'p1': queue index 8 out of range",
            ),
            (
                OK.replace("rate_bps = 50e6", "rate_bps = \"fast\""),
                "scenario line",
            ),
            (
                OK.replace(
                    "scheduler = \"rlsp-drr\"",
                    "scheduler = \"rlsp-drr\"\ntm_model = \"bmv3\"",
                ),
                "port 'p1': tm_model: unknown TM model 'bmv3'",
            ),
            (
                OK.replace(
                    "scheduler = \"rlsp-drr\"",
                    "scheduler = \"rlsp-drr\"\noutput_buffer_pkts = 64",
                ),
                "port 'p1': output_buffer_pkts applies only to tm_model 'bmv2'",
            ),
        ];
        for (text, want) in cases {
            let e = Scenario::from_toml(&text).unwrap_err().0;
            assert!(e.contains(want), "got '{e}', want '{want}'");
            assert!(!e.contains('\n'), "multi-line error: {e}");
        }
    }
}

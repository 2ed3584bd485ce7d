//! Counters, registers and meters (indexed arrays; direct ones live in table entries).

use crate::json::{self, err, label, R};
use crate::layout::{FieldRef, Layout};
use serde_json::Value;
use std::collections::HashMap;

/// Packet and byte count of one counter cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterValue {
    pub packets: u64,
    pub bytes: u64,
}

impl CounterValue {
    #[inline]
    pub fn hit(&mut self, bytes: u64) {
        self.packets = self.packets.wrapping_add(1);
        self.bytes = self.bytes.wrapping_add(bytes);
    }
}

/// Meter colours as bmv2 writes them.
pub const GREEN: u64 = 0;
pub const YELLOW: u64 = 1;
pub const RED: u64 = 2;

/// Two-rate three-colour meter (RFC 2698, colour-blind), as bmv2's meters with two rates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Meter {
    /// Committed and peak rates in units (bytes or packets) per second; burst sizes in units.
    pub cir: f64,
    pub cbs: f64,
    pub pir: f64,
    pub pbs: f64,
    tc: f64,
    tp: f64,
    last: u64,
    configured: bool,
}

/// Rates of one meter cell: (units per second, burst units) for committed then peak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeterRates {
    pub cir: f64,
    pub cbs: u64,
    pub pir: f64,
    pub pbs: u64,
}

impl MeterRates {
    /// bmv2's rule for a meter's rates, the one check every control plane's write goes
    /// through: no rate negative (nor NaN), the committed rate not above the peak.
    pub fn check(&self) -> Result<(), crate::ApiError> {
        let bad = |why: &str| Err(crate::ApiError::BadMeterRates(why.to_string()));
        if !(self.cir >= 0.0 && self.pir >= 0.0) {
            return bad("a rate is negative");
        }
        if self.cir > self.pir {
            return bad("the committed rate is above the peak rate");
        }
        Ok(())
    }
}

impl Meter {
    pub fn configure(&mut self, r: MeterRates) {
        self.cir = r.cir.max(0.0);
        self.cbs = r.cbs as f64;
        self.pir = r.pir.max(0.0);
        self.pbs = r.pbs as f64;
        self.tc = self.cbs;
        self.tp = self.pbs;
        self.configured = true;
        self.last = 0;
    }

    pub fn rates(&self) -> Option<MeterRates> {
        self.configured.then_some(MeterRates {
            cir: self.cir,
            cbs: self.cbs as u64,
            pir: self.pir,
            pbs: self.pbs as u64,
        })
    }

    /// Colour for `units` arriving at `now` (ns). Unconfigured meters return GREEN, as bmv2.
    pub fn execute(&mut self, units: u64, now: u64) -> u64 {
        if !self.configured {
            return GREEN;
        }
        if self.last != 0 && now > self.last {
            let dt = (now - self.last) as f64 * 1e-9;
            self.tc = (self.tc + dt * self.cir).min(self.cbs);
            self.tp = (self.tp + dt * self.pir).min(self.pbs);
        }
        if now > self.last || self.last == 0 {
            self.last = now.max(1);
        }
        let b = units as f64;
        if self.tp < b {
            RED
        } else if self.tc < b {
            self.tp -= b;
            YELLOW
        } else {
            self.tp -= b;
            self.tc -= b;
            GREEN
        }
    }
}

#[derive(Debug, Clone)]
pub struct CounterArray {
    pub name: String,
    pub is_direct: bool,
    pub binding: Option<String>,
    pub cells: Vec<CounterValue>,
}

#[derive(Debug, Clone)]
pub struct RegisterArray {
    pub name: String,
    pub width: u32,
    pub cells: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct MeterArray {
    pub name: String,
    pub is_direct: bool,
    pub binding: Option<String>,
    pub packets: bool,
    pub result_target: Option<FieldRef>,
    pub cells: Vec<Meter>,
}

#[derive(Debug, Clone, Default)]
pub struct Externs {
    pub counters: Vec<CounterArray>,
    pub registers: Vec<RegisterArray>,
    pub meters: Vec<MeterArray>,
    pub counter_by_name: HashMap<String, u32>,
    pub register_by_name: HashMap<String, u32>,
    pub meter_by_name: HashMap<String, u32>,
    /// State of the generator behind `random` (xorshift64; 0: not started).
    pub rng: u64,
}

// bounds memory a JSON file can make us allocate per array (64 MiB of counters)
const MAX_CELLS: u64 = 1 << 22;

fn size(v: &Value, ctx: &str, direct: bool) -> R<usize> {
    if direct {
        return Ok(0);
    }
    let n = json::u64_(v, "size", ctx)?;
    if n > MAX_CELLS {
        return err(ctx, format!("size {n} too large"));
    }
    Ok(n as usize)
}

impl Externs {
    /// The next number of the generator behind `random`: xorshift64, fixed seed, so a run
    /// repeats (bmv2 seeds its own; a program may not count on either sequence).
    pub fn next_random(&mut self) -> u64 {
        let mut r = if self.rng == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            self.rng
        };
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        self.rng = r;
        r
    }

    pub fn load(root: &Value, layout: &Layout) -> R<Externs> {
        let mut x = Externs::default();
        for (i, c) in json::arr_or_empty(root, "counter_arrays", "top level")?
            .iter()
            .enumerate()
        {
            let ctx = label("counter_arrays", i, c);
            let name = json::str_(c, "name", &ctx)?.to_string();
            let is_direct = json::bool_or(c, "is_direct", false, &ctx)?;
            let binding = json::opt_str(c, "binding", &ctx)?.map(str::to_string);
            if is_direct && binding.is_none() {
                return err(&ctx, "direct counter without \"binding\"");
            }
            x.counter_by_name
                .insert(name.clone(), x.counters.len() as u32);
            x.counters.push(CounterArray {
                name,
                is_direct,
                binding,
                cells: vec![CounterValue::default(); size(c, &ctx, is_direct)?],
            });
        }
        for (i, r) in json::arr_or_empty(root, "register_arrays", "top level")?
            .iter()
            .enumerate()
        {
            let ctx = label("register_arrays", i, r);
            let name = json::str_(r, "name", &ctx)?.to_string();
            let width = json::u64_(r, "bitwidth", &ctx)?;
            if width == 0 || width > 64 {
                return err(
                    &ctx,
                    format!("register bitwidth {width} not supported (1..64)"),
                );
            }
            x.register_by_name
                .insert(name.clone(), x.registers.len() as u32);
            x.registers.push(RegisterArray {
                name,
                width: width as u32,
                cells: vec![0; size(r, &ctx, false)?],
            });
        }
        for (i, m) in json::arr_or_empty(root, "meter_arrays", "top level")?
            .iter()
            .enumerate()
        {
            let ctx = label("meter_arrays", i, m);
            let name = json::str_(m, "name", &ctx)?.to_string();
            let is_direct = json::bool_or(m, "is_direct", false, &ctx)?;
            let rate_count = json::opt(m, "rate_count")
                .and_then(Value::as_u64)
                .unwrap_or(2);
            if rate_count != 2 {
                return err(
                    &ctx,
                    format!("meters with {rate_count} rates not supported (trTCM only)"),
                );
            }
            let packets = match json::str_(m, "type", &ctx)? {
                "bytes" => false,
                "packets" => true,
                t => return err(&ctx, format!("meter type \"{t}\" not supported")),
            };
            let binding = json::opt_str(m, "binding", &ctx)?.map(str::to_string);
            let result_target = match json::opt(m, "result_target") {
                Some(t) => Some(layout.resolve_field(t, &ctx)?),
                None => None,
            };
            if is_direct && (binding.is_none() || result_target.is_none()) {
                return err(&ctx, "direct meter needs \"binding\" and \"result_target\"");
            }
            x.meter_by_name.insert(name.clone(), x.meters.len() as u32);
            x.meters.push(MeterArray {
                name,
                is_direct,
                binding,
                packets,
                result_target,
                cells: vec![Meter::default(); size(m, &ctx, is_direct)?],
            });
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trtcm_colours() {
        let mut m = Meter::default();
        assert_eq!(m.execute(1500, 1), GREEN);
        // 1000 B/s committed with 1000 B burst, 2000 B/s peak with 2000 B burst
        m.configure(MeterRates {
            cir: 1000.0,
            cbs: 1000,
            pir: 2000.0,
            pbs: 2000,
        });
        assert_eq!(m.execute(800, 1_000), GREEN);
        assert_eq!(m.execute(800, 1_000), YELLOW);
        assert_eq!(m.execute(800, 1_000), RED);
        // after one second both buckets refill (capped at burst)
        assert_eq!(m.execute(800, 1_000_001_000), GREEN);
    }
}

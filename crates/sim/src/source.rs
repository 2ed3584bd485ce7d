//! Traffic sources: constant bit rate, Poisson and on/off, with a packet size or a uniform mix.

use crate::rng::Rng;
use crate::scenario::{FlowSpec, Pattern, Scenario};

pub struct Source {
    pub port: usize,
    pub queue: usize,
    sizes: Vec<u32>,
    ns_per_byte: f64,
    pattern: Pattern,
    on_ns: f64,
    period_ns: f64,
    start_ns: f64,
    pub stop_ns: f64,
    /// Time of the next packet, kept fractional so rates stay exact over long runs.
    pub next_ns: f64,
    rng: Rng,
}

impl Source {
    pub fn new(s: &Scenario, f: &FlowSpec, index: usize, port: usize) -> Self {
        let (start, stop) = s.flow_window(f);
        let on_ns = f.on_s.unwrap_or(0.0) * 1e9;
        let mut rng = Rng::new(s.seed.wrapping_mul(1_000_003).wrapping_add(index as u64));
        let ns_per_byte = 8e9 / f.rate_bps;
        let mut first = start * 1e9;
        if f.pattern == Pattern::Poisson {
            first += rng.exp1() * mean(&f.packet_bytes.sizes()) * ns_per_byte;
        }
        Source {
            port,
            queue: f.queue,
            sizes: f.packet_bytes.sizes(),
            ns_per_byte,
            pattern: f.pattern,
            on_ns,
            period_ns: on_ns + f.off_s.unwrap_or(0.0) * 1e9,
            start_ns: start * 1e9,
            stop_ns: stop * 1e9,
            next_ns: first,
            rng,
        }
    }

    pub fn active(&self) -> bool {
        self.next_ns < self.stop_ns
    }

    /// Size of the packet sent now; moves `next_ns` to the following packet.
    pub fn emit(&mut self) -> u32 {
        let size = if self.sizes.len() == 1 {
            self.sizes[0]
        } else {
            self.sizes[self.rng.below(self.sizes.len())]
        };
        let gap = f64::from(size) * self.ns_per_byte;
        self.next_ns += match self.pattern {
            Pattern::Poisson => gap * self.rng.exp1(),
            Pattern::Cbr | Pattern::Onoff => gap,
        };
        if self.pattern == Pattern::Onoff {
            let phase = (self.next_ns - self.start_ns) % self.period_ns;
            if phase >= self.on_ns {
                self.next_ns += self.period_ns - phase;
            }
        }
        size
    }
}

fn mean(v: &[u32]) -> f64 {
    v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64
}

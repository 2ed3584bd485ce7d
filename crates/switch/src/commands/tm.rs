//! Traffic manager commands on the command port: queue rates, bursts, quanta and depths, port
//! rates and schedulers, and the views of queues, ports and queueing delay.

use std::fmt::Write;

use lanes_tm::{QuantilePoint, QueueConfig, Scheduler};

use super::args::{num, num_u32};
use crate::dataplane::{Dataplane, PPS_FRAME_BYTES};

type R = Result<String, String>;

pub(crate) const HELP: &str = "set_queue_rate PPS [PORT [QUEUE]] | set_queue_rate_bytes BYTES_PER_S [PORT [QUEUE]] | set_queue_burst BYTES [PORT [QUEUE]] | \
set_queue_quantum BYTES [PORT [QUEUE]] | \
set_queue_depth PKTS [PORT [QUEUE]] | set_port_rate PORT RATE | set_scheduler NAME [PORT] | show_queues [PORT] | show_delay [PORT] [reset] | show_ports | show_rx [reset]";

/// Runs a traffic manager command; None if `cmd` is not one.
pub(crate) fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    Some(match cmd {
        "set_queue_rate" => set_queue(dp, args, |q, v| {
            q.rate_bytes_per_s = Some(v * PPS_FRAME_BYTES)
        }),
        "set_queue_rate_bytes" => set_queue(dp, args, |q, v| q.rate_bytes_per_s = Some(v)),
        "set_queue_burst" => set_queue(dp, args, |q, v| q.burst_bytes = Some(v as u64)),
        "set_queue_quantum" => set_queue(dp, args, |q, v| q.quantum = v as u32),
        "set_queue_depth" => set_queue(dp, args, |q, v| q.depth_pkts = Some(v as u32)),
        "set_port_rate" => set_port_rate(dp, args),
        "set_scheduler" => set_scheduler(dp, args),
        "show_queues" => show_queues(dp, args),
        "show_ports" => Ok(show_ports(dp)),
        "show_delay" => show_delay(dp, args),
        "show_rx" => show_rx(dp, args),
        _ => return None,
    })
}

/// The ports a TM command applies to: the one named, or all.
fn port_nums(dp: &Dataplane, arg: Option<&&str>) -> Result<Vec<u32>, String> {
    match arg {
        Some(p) => {
            let n = num_u32(p)?;
            dp.port(n)
                .map(|_| vec![n])
                .ok_or_else(|| format!("no port {n}"))
        }
        None => Ok(dp.ports.iter().map(|p| p.num).collect()),
    }
}

fn set_queue(dp: &mut Dataplane, args: &[&str], f: impl Fn(&mut QueueConfig, f64)) -> R {
    let value: f64 = args
        .first()
        .ok_or("missing value")?
        .parse()
        .map_err(|_| format!("'{}' is not a number", args[0]))?;
    if !(value.is_finite() && value > 0.0) {
        return Err(format!("value must be positive, got {value}"));
    }
    let port = args.get(1).map(|p| num_u32(p)).transpose()?;
    let queue = args.get(2).map(|q| num(q)).transpose()?;
    dp.update_queues(port, queue.map(|q| q as usize), |q| f(q, value))?;
    Ok(String::new())
}

/// A rate like `100Mbps`, `1Gbps`, `2.5e9` (bits per second).
pub fn parse_rate_bps(s: &str) -> Result<f64, String> {
    let lower = s.to_ascii_lowercase();
    let (digits, mult) = [
        ("gbps", 1e9),
        ("mbps", 1e6),
        ("kbps", 1e3),
        ("bps", 1.0),
        ("g", 1e9),
        ("m", 1e6),
        ("k", 1e3),
    ]
    .iter()
    .find_map(|(suffix, m)| lower.strip_suffix(suffix).map(|d| (d.to_string(), *m)))
    .unwrap_or((lower.clone(), 1.0));
    match digits.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * mult),
        _ => Err(format!("'{s}' is not a rate (e.g. 100Mbps, 1Gbps, 2.5e9)")),
    }
}

fn set_port_rate(dp: &mut Dataplane, args: &[&str]) -> R {
    let [port, rate] = args else {
        return Err("set_port_rate PORT RATE".into());
    };
    let rate = parse_rate_bps(rate)?;
    let n = num_u32(port)?;
    dp.port_mut(n)
        .ok_or_else(|| format!("no port {n}"))?
        .tm
        .set_rate_bps(rate)
        .map_err(|e| e.0)?;
    Ok(String::new())
}

fn set_scheduler(dp: &mut Dataplane, args: &[&str]) -> R {
    let name = args.first().ok_or("set_scheduler NAME [PORT]")?;
    let s: Scheduler = name.parse().map_err(|e: lanes_tm::ConfigError| e.0)?;
    for n in port_nums(dp, args.get(1))? {
        dp.port_mut(n).expect("port exists").tm.set_scheduler(s);
    }
    Ok(String::new())
}

fn show_queues(dp: &mut Dataplane, args: &[&str]) -> R {
    let mut out = String::from(
        "port queue depth_pkts depth_bytes rate_Bps quantum limit_pkts enq_pkts deq_pkts drops burst_bytes\n",
    );
    for n in port_nums(dp, args.first())? {
        let tm = &dp.port(n).expect("port exists").tm;
        let _ = writeln!(
            out,
            "# port {n}: {} at {} bps",
            tm.scheduler(),
            tm.rate_bps()
        );
        for q in 0..tm.num_queues() {
            let s = tm.queue_status(q).expect("queue exists");
            let rate = s
                .config
                .rate_bytes_per_s
                .map_or("-".into(), |r| format!("{r:.0}"));
            let limit = s.config.depth_pkts.map_or("-".into(), |d| d.to_string());
            let burst = match s.config.rate_bytes_per_s {
                Some(_) => s.config.effective_burst_bytes().to_string(),
                None => "-".into(),
            };
            let _ = writeln!(
                out,
                "{n} {q} {} {} {rate} {} {limit} {} {} {} {burst}",
                s.depth_pkts,
                s.depth_bytes,
                s.config.quantum,
                s.counters.enq_pkts,
                s.counters.deq_pkts,
                s.counters.drop_pkts()
            );
        }
    }
    Ok(out.trim_end().to_string())
}

/// Queueing delay per queue since the last reset, measured at dequeue: quantiles, and the raw
/// histogram buckets (index:count, bounds in lanes_switch::delay) for callers that merge them.
fn show_delay(dp: &mut Dataplane, args: &[&str]) -> R {
    let (port_arg, reset) = match args {
        [] => (None, false),
        ["reset"] => (None, true),
        [p] => (Some(p), false),
        [p, "reset"] => (Some(p), true),
        _ => return Err("usage: show_delay [PORT] [reset]".into()),
    };
    let mut out = String::from("port queue pkts p50_ns p99_ns max_ns sum_ns buckets\n");
    for n in port_nums(dp, port_arg)? {
        let port = dp.port_mut(n).expect("port exists");
        for (q, h) in port.delay.iter_mut().enumerate() {
            if h.count() == 0 {
                continue;
            }
            let buckets: Vec<String> = h.nonempty().map(|(i, c)| format!("{i}:{c}")).collect();
            let _ = writeln!(
                out,
                "{n} {q} {} {} {} {} {} {}",
                h.count(),
                h.quantile(0.5, QuantilePoint::Middle),
                h.quantile(0.99, QuantilePoint::Middle),
                h.max(),
                h.sum(),
                buckets.join(",")
            );
            if reset {
                h.reset();
            }
        }
    }
    Ok(out.trim_end().to_string())
}

/// Per port: frames received and the most frames found waiting in its receive ring at once
/// (since the last reset), i.e. the input side's occupancy.
fn show_rx(dp: &mut Dataplane, args: &[&str]) -> R {
    let reset = match args {
        [] => false,
        ["reset"] => true,
        _ => return Err("usage: show_rx [reset]".into()),
    };
    let mut out = String::from("port rx_pkts rx_backlog_max");
    for p in &mut dp.ports {
        let _ = write!(
            out,
            "\n{} {} {}",
            p.num, p.counters.rx_pkts, p.counters.rx_backlog_max
        );
        if reset {
            p.counters.rx_backlog_max = 0;
        }
    }
    Ok(out)
}

fn show_ports(dp: &Dataplane) -> String {
    let mut out =
        String::from("port rate_bps scheduler rx_pkts rx_bytes tx_pkts tx_bytes tx_errors");
    for p in &dp.ports {
        let c = p.counters;
        let _ = write!(
            out,
            "\n{} {} {} {} {} {} {} {}",
            p.num,
            p.tm.rate_bps(),
            p.tm.scheduler(),
            c.rx_pkts,
            c.rx_bytes,
            c.tx_pkts,
            c.tx_bytes,
            c.tx_errors
        );
    }
    let d = dp.drops;
    let _ = write!(
        out,
        "\ndrops: no_program={} oversize={} parser={} ingress={} egress={} unknown_port={} queue_full={} buffer_full={} no_buffer={} no_mirror_session={} clone_depth={} no_multicast_group={} pass_limit={} digests={}",
        d.no_program, d.oversize, d.parser, d.ingress, d.egress, d.unknown_port, d.queue_full, d.buffer_full, d.no_buffer,
        d.no_mirror_session, d.clone_depth, d.no_multicast_group, d.pass_limit, d.digests
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_in_cli_syntax() {
        assert_eq!(parse_rate_bps("100Mbps").unwrap(), 100e6);
        assert_eq!(parse_rate_bps("2.5e9").unwrap(), 2.5e9);
        assert!(parse_rate_bps("fast").is_err());
    }

    #[test]
    fn rx_backlog_keeps_the_largest_run_until_reset() {
        let mut dp = Dataplane::new(Default::default());
        dp.add_port(1, Some(100e6)).unwrap();
        dp.add_port(2, Some(100e6)).unwrap();
        dp.note_rx_backlog(1, 3);
        dp.note_rx_backlog(1, 40);
        dp.note_rx_backlog(1, 7);
        dp.note_rx_backlog(9, 5); // no such port: ignored
        let shown = show_rx(&mut dp, &["reset"]).unwrap();
        assert_eq!(shown, "port rx_pkts rx_backlog_max\n1 0 40\n2 0 0");
        assert_eq!(
            show_rx(&mut dp, &[]).unwrap(),
            "port rx_pkts rx_backlog_max\n1 0 0\n2 0 0"
        );
        assert!(show_rx(&mut dp, &["now"]).is_err());
    }
}

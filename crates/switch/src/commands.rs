//! simple_switch_CLI-style commands on a running data plane: tables, counters, registers and
//! the traffic manager. One command per line; the answer is text, an error is one line.
//! Used by `--commands FILE` at start-up and by `lanes ctl`.

use std::fmt::Write;
use std::sync::Arc;

use lanes_p4::p4info::{P4Names, TableInfo};
use lanes_p4::{EntryHandle, MatchKey, MatchKind, Program};
use lanes_tm::{QueueConfig, Scheduler};

use crate::dataplane::{Dataplane, MirrorSession};

type R = Result<String, String>;

/// Bytes a rate in packets per second stands for, as bmv2's pps queue rates assume MTU frames.
const PPS_FRAME_BYTES: f64 = 1500.0;

/// Run one command line on the data plane: its text answer, or a one-line error.
pub fn execute(dp: &mut Dataplane, line: &str) -> R {
    let line = line.split('#').next().unwrap_or("").trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&cmd, args)) = words.split_first() else {
        return Ok(String::new());
    };
    match cmd {
        "table_add" => table_add(dp, args),
        "table_modify" => table_modify(dp, args),
        "table_delete" => with_table(dp, args, 2, |p, t, a| {
            p.delete_entry(t.table, EntryHandle(num(a[1])? as u32))
                .map_err(|e| e.to_string())?;
            Ok(String::new())
        }),
        "table_clear" => with_table(dp, args, 1, |p, t, _| {
            p.clear_table(t.table).map_err(|e| e.to_string())?;
            Ok(String::new())
        }),
        "table_num_entries" => with_table(dp, args, 1, |p, t, _| {
            Ok(p.entry_count(t.table)
                .map_err(|e| e.to_string())?
                .to_string())
        }),
        "table_dump" => with_table(dp, args, 1, |p, t, _| table_dump(p, t)),
        "table_set_default" => table_set_default(dp, args),
        "counter_read" => crate::extern_commands::counter_read(dp, args),
        "meter_set_rates" => crate::extern_commands::meter_set_rates(dp, args),
        "meter_get_rates" => crate::extern_commands::meter_get_rates(dp, args),
        "counter_reset" => counter_reset(dp, args),
        "register_read" => register_read(dp, args),
        "register_write" => register_write(dp, args),
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
        "mirroring_add" => mirroring_add(dp, args),
        "mirroring_delete" => mirroring_delete(dp, args),
        "mirroring_get" => mirroring_get(dp, args),
        "mirroring_add_mc" => mirroring_add_mc(dp, args),
        "help" => Ok(format!(
            "{HELP} | {} | {}",
            crate::pre_commands::HELP,
            crate::profile_commands::HELP
        )),
        other => crate::pre_commands::execute(dp, other, args)
            .or_else(|| crate::profile_commands::execute(dp, other, args))
            .unwrap_or_else(|| Err(format!("unknown command '{other}' (try 'help')"))),
    }
}

const HELP: &str = "table_add TABLE ACTION KEY... => PARAM... [PRIORITY] | table_modify TABLE ACTION HANDLE => PARAM... | \
table_delete TABLE HANDLE | table_clear TABLE | table_dump TABLE | table_num_entries TABLE | table_set_default TABLE ACTION PARAM... | \
counter_read NAME INDEX|HANDLE | counter_reset NAME | meter_set_rates NAME INDEX|HANDLE RATE:BURST RATE:BURST | meter_get_rates NAME INDEX|HANDLE | register_read NAME INDEX | register_write NAME INDEX VALUE | \
set_queue_rate PPS [PORT [QUEUE]] | set_queue_rate_bytes BYTES_PER_S [PORT [QUEUE]] | set_queue_burst BYTES [PORT [QUEUE]] | \
set_queue_quantum BYTES [PORT [QUEUE]] | \
set_queue_depth PKTS [PORT [QUEUE]] | set_port_rate PORT RATE | set_scheduler NAME [PORT] | show_queues [PORT] | show_delay [PORT] [reset] | show_ports | \
mirroring_add SESSION PORT [TRUNCATE_BYTES] | mirroring_add_mc SESSION MGID | mirroring_delete SESSION | mirroring_get SESSION";

pub(crate) fn program(dp: &mut Dataplane) -> Result<&mut Program, String> {
    dp.program_mut()
        .ok_or_else(|| "no P4 program loaded".to_string())
}

/// The loaded program's names (built once per program, not per command).
pub(crate) fn names(dp: &Dataplane) -> Result<Arc<P4Names>, String> {
    dp.names().ok_or_else(|| "no P4 program loaded".to_string())
}

pub(crate) fn find_table(names: &P4Names, name: &str) -> Result<TableInfo, String> {
    lanes_p4::names::resolve(names.tables.iter().map(|t| t.name.as_str()), name)
        .map(|i| names.tables[i].clone())
        .ok_or_else(|| format!("no table named '{name}' (or the name is ambiguous)"))
}

fn with_table(
    dp: &mut Dataplane,
    args: &[&str],
    n: usize,
    f: impl FnOnce(&mut Program, &TableInfo, &[&str]) -> R,
) -> R {
    if args.len() != n {
        return Err(format!("expected {n} argument(s), got {}", args.len()));
    }
    let t = find_table(&*names(dp)?, args[0])?;
    f(program(dp)?, &t, args)
}

pub(crate) fn num(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

/// A value in simple_switch_CLI syntax (decimal, 0x hex, dotted IPv4, colon MAC) as the
/// big-endian bytes of a `width`-bit field.
pub fn parse_value(s: &str, width: u32) -> Result<Vec<u8>, String> {
    let nbytes = width.div_ceil(8) as usize;
    let raw: Vec<u8> = if s.contains('.') && s.split('.').count() == 4 {
        s.split('.')
            .map(|o| {
                o.parse::<u8>()
                    .map_err(|_| format!("'{s}' is not an IPv4 address"))
            })
            .collect::<Result<_, _>>()?
    } else if s.contains(':') {
        s.split(':')
            .map(|o| u8::from_str_radix(o, 16).map_err(|_| format!("'{s}' is not a MAC address")))
            .collect::<Result<_, _>>()?
    } else if let Some(h) = s.strip_prefix("0x") {
        let h = if h.len() % 2 == 1 {
            format!("0{h}")
        } else {
            h.to_string()
        };
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).map_err(|_| format!("'{s}' is not hex")))
            .collect::<Result<_, _>>()?
    } else {
        let v: u128 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
        v.to_be_bytes().to_vec()
    };
    let first = raw.iter().position(|&b| b != 0).unwrap_or(raw.len());
    let significant = &raw[first..];
    let fits = significant.len() < nbytes
        || (significant.len() == nbytes
            && (width.is_multiple_of(8) || significant[0] >> (width % 8) == 0));
    if !fits {
        return Err(format!("value '{s}' does not fit in {width} bits"));
    }
    let mut out = vec![0; nbytes - significant.len()];
    out.extend_from_slice(significant);
    Ok(out)
}

fn parse_key(s: &str, kind: MatchKind, width: u32) -> Result<MatchKey, String> {
    Ok(match kind {
        MatchKind::Exact => MatchKey::Exact(parse_value(s, width)?),
        MatchKind::Lpm => {
            let (v, len) = s
                .split_once('/')
                .ok_or_else(|| format!("lpm key '{s}' needs VALUE/LENGTH"))?;
            MatchKey::Lpm(parse_value(v, width)?, num(len)? as u32)
        }
        MatchKind::Ternary => {
            let (v, m) = s
                .split_once("&&&")
                .ok_or_else(|| format!("ternary key '{s}' needs VALUE&&&MASK"))?;
            MatchKey::Ternary(parse_value(v, width)?, parse_value(m, width)?)
        }
        MatchKind::Range => {
            let (lo, hi) = s
                .split_once("->")
                .ok_or_else(|| format!("range key '{s}' needs LOW->HIGH"))?;
            MatchKey::Range(parse_value(lo, width)?, parse_value(hi, width)?)
        }
        MatchKind::Optional => {
            if s == "*" {
                MatchKey::Optional(None)
            } else {
                MatchKey::Optional(Some(parse_value(s, width)?))
            }
        }
    })
}

fn action_params(
    names: &P4Names,
    t: &TableInfo,
    action: &str,
    values: &[&str],
) -> Result<(String, Vec<Vec<u8>>), String> {
    let mine: Vec<_> = names
        .actions
        .iter()
        .filter(|a| t.action_ids.contains(&a.id))
        .collect();
    let info = lanes_p4::names::resolve(mine.iter().map(|a| a.name.as_str()), action)
        .map(|i| mine[i])
        .ok_or_else(|| format!("table {} has no action '{action}'", t.name))?;
    Ok((info.name.clone(), values_for(names, &info.name, values)?))
}

/// Parameter values of the action with this full name, parsed to its widths.
pub(crate) fn values_for(
    names: &P4Names,
    action: &str,
    values: &[&str],
) -> Result<Vec<Vec<u8>>, String> {
    let info = names
        .action(action)
        .ok_or_else(|| format!("no action named '{action}'"))?;
    if values.len() != info.params.len() {
        return Err(format!(
            "action {} takes {} parameter(s), got {}",
            info.name,
            info.params.len(),
            values.len()
        ));
    }
    values
        .iter()
        .zip(&info.params)
        .map(|(v, p)| parse_value(v, p.bitwidth))
        .collect()
}

fn table_add(dp: &mut Dataplane, args: &[&str]) -> R {
    let [table, action, rest @ ..] = args else {
        return Err(TABLE_ADD.into());
    };
    let names = names(dp)?;
    // the key parser sees `TABLE KEY... => ...` without the action
    let mut without_action = vec![*table];
    without_action.extend_from_slice(rest);
    let e = entry_keys(&names, &without_action, TABLE_ADD)?;
    let (action_name, params) = action_params(&names, &e.table, action, &e.values)?;
    let p = program(dp)?;
    let a = p
        .action_id(e.table.table, &action_name)
        .ok_or_else(|| format!("no action {action_name}"))?;
    let h = p
        .add_entry(e.table.table, e.keys, a, params, e.priority)
        .map_err(|e| e.to_string())?;
    Ok(format!("Entry has been added with handle {}", h.0))
}

const TABLE_ADD: &str = "table_add TABLE ACTION KEY... => PARAM... [PRIORITY]";

/// `TABLE KEY... => VALUE... [PRIORITY]` parsed: the table, its keys, the values after `=>`
/// and the priority (the last value, for a table with ternary, range or optional keys).
pub(crate) struct EntryArgs<'a> {
    pub table: TableInfo,
    pub keys: Vec<MatchKey>,
    pub values: Vec<&'a str>,
    pub priority: i32,
}

pub(crate) fn entry_keys<'a>(
    names: &P4Names,
    args: &[&'a str],
    usage: &str,
) -> Result<EntryArgs<'a>, String> {
    let arrow = args
        .iter()
        .position(|&a| a == "=>")
        .ok_or_else(|| format!("{usage}: '=>' is missing"))?;
    let (head, tail) = (&args[..arrow], &args[arrow + 1..]);
    let [table, keys @ ..] = head else {
        return Err(usage.into());
    };
    let t = find_table(names, table)?;
    if keys.len() != t.keys.len() {
        return Err(format!(
            "table {} has {} key field(s), got {}",
            t.name,
            t.keys.len(),
            keys.len()
        ));
    }
    let keys: Vec<MatchKey> = keys
        .iter()
        .zip(&t.keys)
        .map(|(k, i)| parse_key(k, i.match_kind, i.bitwidth))
        .collect::<Result<_, _>>()?;
    let needs_priority = t.keys.iter().any(|k| {
        matches!(
            k.match_kind,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
    });
    let (values, priority) = if needs_priority {
        let (last, rest) = tail
            .split_last()
            .ok_or("this table needs a priority after the parameters")?;
        (rest, bmv2_priority(last)?)
    } else {
        (tail, 0)
    };
    Ok(EntryArgs {
        table: t,
        keys,
        values: values.to_vec(),
        priority,
    })
}

/// A priority as simple_switch_CLI takes it (the lowest value wins) as the table's (the highest
/// wins, as P4Runtime), the mapping the loader applies to a bmv2 JSON's const entries.
fn bmv2_priority(s: &str) -> Result<i32, String> {
    let p = num(s)?;
    i32::try_from(p)
        .map(|p| i32::MAX - p)
        .map_err(|_| format!("priority {s} out of range (0-{})", i32::MAX))
}

/// An entry's priority as table_add took it (bmv2's: lowest wins); 0 where it has none.
fn shown_priority(t: &TableInfo, p: i32) -> i32 {
    let ternary = t.keys.iter().any(|k| {
        matches!(
            k.match_kind,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
    });
    if ternary {
        i32::MAX - p
    } else {
        p
    }
}

fn table_modify(dp: &mut Dataplane, args: &[&str]) -> R {
    let [table, action, handle, "=>", values @ ..] = args else {
        return Err("table_modify TABLE ACTION HANDLE => PARAM...".into());
    };
    let names = names(dp)?;
    let p = program(dp)?;
    let t = find_table(&names, table)?;
    let (action_name, params) = action_params(&names, &t, action, values)?;
    let a = p
        .action_id(t.table, &action_name)
        .ok_or_else(|| format!("no action {action_name}"))?;
    p.modify_entry(t.table, EntryHandle(num(handle)? as u32), a, params)
        .map_err(|e| e.to_string())?;
    Ok(String::new())
}

fn table_set_default(dp: &mut Dataplane, args: &[&str]) -> R {
    let [table, action, values @ ..] = args else {
        return Err("table_set_default TABLE ACTION PARAM...".into());
    };
    let names = names(dp)?;
    let p = program(dp)?;
    let t = find_table(&names, table)?;
    let (action_name, params) = action_params(&names, &t, action, values)?;
    let a = p
        .action_id(t.table, &action_name)
        .ok_or_else(|| format!("no action {action_name}"))?;
    p.set_default(t.table, a, params)
        .map_err(|e| e.to_string())?;
    Ok(String::new())
}

pub(crate) fn hex(b: &[u8]) -> String {
    let mut s = String::from("0x");
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

fn table_dump(p: &mut Program, t: &TableInfo) -> R {
    let mut out = format!("table {}:\n", t.name);
    for e in p.entries(t.table).map_err(|e| e.to_string())? {
        let keys: Vec<String> = e
            .keys
            .iter()
            .map(|k| match k {
                MatchKey::Exact(v) => hex(v),
                MatchKey::Lpm(v, l) => format!("{}/{l}", hex(v)),
                MatchKey::Ternary(v, m) => format!("{}&&&{}", hex(v), hex(m)),
                MatchKey::Range(a, b) => format!("{}->{}", hex(a), hex(b)),
                MatchKey::Optional(None) => "*".into(),
                MatchKey::Optional(Some(v)) => hex(v),
            })
            .collect();
        let params: Vec<String> = e.params.iter().map(|v| hex(v)).collect();
        let action = match e.target {
            Some(r) => crate::profile_commands::target_text(r),
            None => e.action_name,
        };
        let _ = writeln!(
            out,
            "  {:>4}: {} => {} {} (priority {}, {} pkts, {} bytes)",
            e.handle.0,
            keys.join(" "),
            action,
            params.join(" "),
            shown_priority(t, e.priority),
            e.counter.packets,
            e.counter.bytes
        );
    }
    if let Ok(Some(r)) = p.default_target(t.table) {
        let _ = writeln!(
            out,
            "  default: {}",
            crate::profile_commands::target_text(r)
        );
    } else if let Ok(Some((a, params))) = p.default_entry(t.table) {
        let params: Vec<String> = params.iter().map(|v| hex(v)).collect();
        let _ = writeln!(
            out,
            "  default: {} {}",
            p.action_name(a).unwrap_or("?"),
            params.join(" ")
        );
    }
    Ok(out.trim_end().to_string())
}

/// A counter, register or meter by full name or unique suffix (`port_counter` for
/// `MyIngress.port_counter`), as simple_switch_CLI resolves names.
pub(crate) fn extern_name(p: &Program, name: &str) -> Result<String, String> {
    if p.extern_size(name).is_ok() {
        return Ok(name.to_string());
    }
    let n = P4Names::from_program(p);
    let all: Vec<&str> = [&n.counters, &n.registers, &n.meters]
        .into_iter()
        .flatten()
        .map(|x| x.name.as_str())
        .collect();
    lanes_p4::names::resolve(all.iter().copied(), name)
        .map(|i| all[i].to_string())
        .ok_or_else(|| format!("no counter, register or meter named '{name}' (or it is ambiguous)"))
}

pub(crate) fn counter_read_indexed(dp: &mut Dataplane, args: &[&str]) -> R {
    let [name, index] = args else {
        return Err("counter_read NAME INDEX".into());
    };
    let p = program(dp)?;
    let name = &extern_name(p, name)?;
    let c = p
        .counter_read(name, num(index)?)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{name}[{index}]= (packets={}, bytes={})",
        c.packets, c.bytes
    ))
}

fn counter_reset(dp: &mut Dataplane, args: &[&str]) -> R {
    let [name] = args else {
        return Err("counter_reset NAME".into());
    };
    let p = program(dp)?;
    let name = &extern_name(p, name)?;
    let size = p.extern_size(name).map_err(|e| e.to_string())?;
    for i in 0..size {
        p.counter_write(name, i, Default::default())
            .map_err(|e| e.to_string())?;
    }
    Ok(String::new())
}

fn register_read(dp: &mut Dataplane, args: &[&str]) -> R {
    let [name, index] = args else {
        return Err("register_read NAME INDEX".into());
    };
    let p = program(dp)?;
    let name = &extern_name(p, name)?;
    let v = p
        .register_read(name, num(index)?)
        .map_err(|e| e.to_string())?;
    Ok(format!("{name}[{index}]= {v}"))
}

fn register_write(dp: &mut Dataplane, args: &[&str]) -> R {
    let [name, index, value] = args else {
        return Err("register_write NAME INDEX VALUE".into());
    };
    let p = program(dp)?;
    let name = &extern_name(p, name)?;
    p.register_write(name, num(index)?, num(value)?)
        .map_err(|e| e.to_string())?;
    Ok(String::new())
}

/// The ports a TM command applies to: the one named, or all.
fn port_nums(dp: &Dataplane, arg: Option<&&str>) -> Result<Vec<u32>, String> {
    match arg {
        Some(p) => {
            let n = num(p)? as u32;
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
    for n in port_nums(dp, args.get(1))? {
        let tm = &mut dp.port_mut(n).expect("port exists").tm;
        let queues: Vec<usize> = match args.get(2) {
            Some(q) => vec![num(q)? as usize],
            None => (0..tm.num_queues()).collect(),
        };
        for q in queues {
            let mut cfg = tm
                .queue_config(q)
                .ok_or_else(|| format!("port {n} has no queue {q}"))?
                .clone();
            f(&mut cfg, value);
            tm.set_queue_config(q, cfg).map_err(|e| e.0)?;
        }
    }
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
    let n = num(port)? as u32;
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
                h.quantile_ns(0.5),
                h.quantile_ns(0.99),
                h.max_ns(),
                h.sum_ns(),
                buckets.join(",")
            );
            if reset {
                h.reset();
            }
        }
    }
    Ok(out.trim_end().to_string())
}

fn session_arg(s: &str) -> Result<u32, String> {
    let n = num(s).map_err(|_| format!("mirror session '{s}' is not a number"))?;
    u32::try_from(n)
        .ok()
        .filter(|n| *n <= crate::dataplane::MAX_MIRROR_SESSION)
        .ok_or_else(|| {
            format!(
                "mirror session {n} out of range (0-{})",
                crate::dataplane::MAX_MIRROR_SESSION
            )
        })
}

/// simple_switch_CLI's `mirroring_add SESSION PORT`; lanes also takes a truncation length
/// (bytes; 0 or none: whole packets), which P4Runtime clone sessions have.
fn mirroring_add(dp: &mut Dataplane, args: &[&str]) -> R {
    let (session, port, truncate) = match args {
        [s, p] => (s, p, None),
        [s, p, t] => (s, p, Some(t)),
        _ => return Err("mirroring_add SESSION PORT [TRUNCATE_BYTES]".into()),
    };
    let session = session_arg(session)?;
    let port = num(port)
        .ok()
        .and_then(|p| u32::try_from(p).ok())
        .ok_or_else(|| format!("port '{port}' is not a number"))?;
    let truncate = match truncate {
        None => None,
        Some(t) => Some(
            num(t)
                .ok()
                .and_then(|t| u32::try_from(t).ok())
                .ok_or_else(|| format!("truncation length '{t}' is not a number of bytes"))?,
        ),
    };
    let mgid = dp.mirror(session).and_then(|m| m.mgid);
    let port = Some(port);
    dp.mirror_add(
        session,
        MirrorSession {
            port,
            mgid,
            truncate,
        },
    )?;
    Ok(String::new())
}

/// `mirroring_add_mc SESSION MGID`: copies of the session also go to a multicast group (a port
/// the session has stays).
fn mirroring_add_mc(dp: &mut Dataplane, args: &[&str]) -> R {
    let [session, mgid] = args else {
        return Err("mirroring_add_mc SESSION MGID".into());
    };
    let session = session_arg(session)?;
    let mgid = num(mgid)
        .ok()
        .and_then(|g| u32::try_from(g).ok())
        .ok_or_else(|| format!("multicast group '{mgid}' is not a number"))?;
    let old = dp.mirror(session);
    let m = MirrorSession {
        port: old.and_then(|m| m.port),
        mgid: Some(mgid),
        truncate: old.and_then(|m| m.truncate),
    };
    dp.mirror_add(session, m)?;
    Ok(String::new())
}

fn mirroring_delete(dp: &mut Dataplane, args: &[&str]) -> R {
    let [session] = args else {
        return Err("mirroring_delete SESSION".into());
    };
    dp.mirror_delete(session_arg(session)?)?;
    Ok(String::new())
}

fn mirroring_get(dp: &mut Dataplane, args: &[&str]) -> R {
    let [session] = args else {
        return Err("mirroring_get SESSION".into());
    };
    let session = session_arg(session)?;
    let m = dp
        .mirror(session)
        .ok_or_else(|| format!("no mirror session {session}"))?;
    let mut out = format!("session {session}:");
    if let Some(p) = m.port {
        let _ = write!(out, " port {p}");
    }
    if let Some(g) = m.mgid {
        let _ = write!(out, " mgid {g}");
    }
    if let Some(t) = m.truncate {
        let _ = write!(out, " truncate {t}");
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
    fn values_in_cli_syntax() {
        assert_eq!(parse_value("10.0.1.1", 32).unwrap(), vec![10, 0, 1, 1]);
        assert_eq!(
            parse_value("00:00:00:00:01:01", 48).unwrap(),
            vec![0, 0, 0, 0, 1, 1]
        );
        assert_eq!(parse_value("3", 9).unwrap(), vec![0, 3]);
        assert_eq!(parse_value("0x1ff", 9).unwrap(), vec![1, 0xff]);
        assert!(parse_value("512", 9).is_err());
        assert!(parse_value("256", 8).is_err());
        assert!(parse_value("1.2.3.400", 32).is_err());
        assert_eq!(parse_rate_bps("100Mbps").unwrap(), 100e6);
        assert_eq!(parse_rate_bps("2.5e9").unwrap(), 2.5e9);
        assert!(parse_rate_bps("fast").is_err());
    }

    #[test]
    fn extern_names_by_unique_suffix() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/p4rt_test.json");
        let mut dp = Dataplane::new(Default::default());
        dp.set_program(Program::load(&std::fs::read_to_string(path).unwrap()).unwrap());
        execute(&mut dp, "register_write last_len 3 77").unwrap();
        assert_eq!(
            execute(&mut dp, "register_read MyIngress.last_len 3").unwrap(),
            "MyIngress.last_len[3]= 77"
        );
        assert_eq!(
            execute(&mut dp, "counter_read port_counter 1").unwrap(),
            "MyIngress.port_counter[1]= (packets=0, bytes=0)"
        );
        execute(&mut dp, "counter_reset port_counter").unwrap();
        assert!(execute(&mut dp, "counter_read nothing 1")
            .unwrap_err()
            .contains("no counter, register or meter named 'nothing'"));
    }
}

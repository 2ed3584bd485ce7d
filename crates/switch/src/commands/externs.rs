//! simple_switch_CLI's counter, meter and register commands. A counter or meter name may be a
//! direct one (bound to a table; the index is then an entry handle): `counter_read`,
//! `meter_set_rates`, `meter_get_rates`; `counter_reset`, `register_read` and
//! `register_write` take indexed externs. Rates are bmv2's: units (bytes or packets, as the
//! meter counts) per microsecond, bursts in units.

use std::fmt::Write;

use lanes_p4::p4info::{ExternInfo, P4Names};
use lanes_p4::{EntryHandle, MeterRates, Program, TableId};

use super::args::{num, program};
use crate::dataplane::Dataplane;

type R = Result<String, String>;

pub(crate) const HELP: &str = "counter_read NAME INDEX|HANDLE | counter_reset NAME | meter_set_rates NAME INDEX|HANDLE RATE:BURST RATE:BURST | \
meter_get_rates NAME INDEX|HANDLE | register_read NAME INDEX | register_write NAME INDEX VALUE";

/// Runs a counter, meter or register command; None if `cmd` is not one.
pub(crate) fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    Some(match cmd {
        "counter_read" => counter_read(dp, args),
        "meter_set_rates" => meter_set_rates(dp, args),
        "meter_get_rates" => meter_get_rates(dp, args),
        "counter_reset" => counter_reset(dp, args),
        "register_read" => register_read(dp, args),
        "register_write" => register_write(dp, args),
        _ => return None,
    })
}

/// A direct counter or meter by full name or unique suffix: (its name, its table).
fn direct<'a>(list: &'a [ExternInfo], name: &str) -> Option<(&'a str, &'a str)> {
    let suffix = format!(".{name}");
    let hits: Vec<&ExternInfo> = list
        .iter()
        .filter(|x| x.name == name || x.name.ends_with(&suffix))
        .collect();
    match hits.as_slice() {
        [one] => Some((one.name.as_str(), one.table.as_deref()?)),
        _ => None,
    }
}

fn table_of(p: &Program, table: &str) -> Result<TableId, String> {
    p.table_id(table)
        .ok_or_else(|| format!("no table named '{table}'"))
}

fn handle(s: &str) -> Result<EntryHandle, String> {
    let n = num(s)?;
    u32::try_from(n)
        .map(EntryHandle)
        .map_err(|_| format!("entry handle '{s}' out of range"))
}

/// `counter_read NAME INDEX`; for a direct counter INDEX is the entry handle.
fn counter_read(dp: &mut Dataplane, args: &[&str]) -> R {
    let [name, index] = args else {
        return Err("counter_read NAME INDEX (for a direct counter: NAME HANDLE)".into());
    };
    let names = dp.names().ok_or("no P4 program loaded")?;
    let Some((full, table)) = direct(&names.direct_counters, name) else {
        return counter_read_indexed(dp, args);
    };
    let p = program(dp)?;
    let t = table_of(p, table)?;
    let c = p
        .direct_counter_read(t, handle(index)?)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{full}[{index}]= (packets={}, bytes={})",
        c.packets, c.bytes
    ))
}

fn rate_pair(s: &str) -> Result<(f64, u64), String> {
    let err = || format!("'{s}' is not RATE:BURST (units per microsecond : units)");
    let (r, b) = s.split_once(':').ok_or_else(err)?;
    let r: f64 = r.parse().map_err(|_| err())?;
    let b: u64 = b.parse().map_err(|_| err())?;
    if !(r.is_finite() && r >= 0.0) {
        return Err(err());
    }
    Ok((r, b))
}

/// `meter_set_rates NAME INDEX CIR:CBS PIR:PBS` (direct meters: INDEX is the entry handle).
fn meter_set_rates(dp: &mut Dataplane, args: &[&str]) -> R {
    let [name, index, committed, peak] = args else {
        return Err(
            "meter_set_rates NAME INDEX RATE:BURST RATE:BURST (committed, then peak)".into(),
        );
    };
    // the rates' rule (none negative, committed not above peak) is MeterRates::check's
    let (c, p) = (rate_pair(committed)?, rate_pair(peak)?);
    let rates = MeterRates {
        cir: c.0 * 1e6,
        cbs: c.1,
        pir: p.0 * 1e6,
        pbs: p.1,
    };
    let names = dp.names().ok_or("no P4 program loaded")?;
    let d = direct(&names.direct_meters, name).map(|(_, t)| t.to_string());
    let prog = program(dp)?;
    match d {
        Some(table) => {
            let t = table_of(prog, &table)?;
            prog.direct_meter_set(t, handle(index)?, rates)
        }
        None => {
            let full = extern_name(prog, name)?;
            prog.meter_set(&full, num(index)?, rates)
        }
    }
    .map_err(|e| e.to_string())?;
    Ok(String::new())
}

/// `meter_get_rates NAME INDEX`: one line per rate, as simple_switch_CLI prints them.
fn meter_get_rates(dp: &mut Dataplane, args: &[&str]) -> R {
    let [name, index] = args else {
        return Err("meter_get_rates NAME INDEX".into());
    };
    let names = dp.names().ok_or("no P4 program loaded")?;
    let d = direct(&names.direct_meters, name).map(|(_, t)| t.to_string());
    let prog = program(dp)?;
    let rates = match d {
        Some(table) => {
            let t = table_of(prog, &table)?;
            prog.direct_meter_get(t, handle(index)?)
        }
        None => {
            let full = extern_name(prog, name)?;
            prog.meter_get(&full, num(index)?)
        }
    }
    .map_err(|e| e.to_string())?;
    let Some(r) = rates else {
        return Ok("not configured (every packet is green)".into());
    };
    let mut out = String::new();
    for (i, (rate, burst)) in [(r.cir, r.cbs), (r.pir, r.pbs)].into_iter().enumerate() {
        let _ = writeln!(out, "{i}: info rate = {}, burst size = {burst}", rate / 1e6);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::execute;

    fn p4rt_test() -> Dataplane {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/p4rt_test.json");
        let mut dp = Dataplane::new(Default::default());
        dp.set_program(Program::load(&std::fs::read_to_string(path).unwrap()).unwrap());
        dp
    }

    #[test]
    fn direct_counter_by_handle_and_meters() {
        let mut dp = p4rt_test();
        let out = execute(&mut dp, "table_add acl drop 0x0800&&&0xffff 0->5 => 3").unwrap();
        assert_eq!(out, "Entry has been added with handle 0");
        assert_eq!(
            execute(&mut dp, "counter_read acl_counter 0").unwrap(),
            "MyIngress.acl_counter[0]= (packets=0, bytes=0)"
        );
        assert!(execute(&mut dp, "counter_read acl_counter 9")
            .unwrap_err()
            .contains('9'));
        execute(&mut dp, "meter_set_rates port_meter 2 0.5:10 1:20").unwrap();
        assert_eq!(
            execute(&mut dp, "meter_get_rates port_meter 2").unwrap(),
            "0: info rate = 0.5, burst size = 10\n1: info rate = 1, burst size = 20"
        );
        execute(&mut dp, "meter_set_rates acl_meter 0 0.25:100 2:200").unwrap();
        assert_eq!(
            execute(&mut dp, "meter_get_rates MyIngress.acl_meter 0").unwrap(),
            "0: info rate = 0.25, burst size = 100\n1: info rate = 2, burst size = 200"
        );
        assert!(execute(&mut dp, "meter_set_rates port_meter 2 2:10 1:20").is_err());
        assert!(execute(&mut dp, "meter_set_rates port_meter 2 fast 1:20").is_err());
    }

    #[test]
    fn table_add_priorities_run_the_bmv2_way() {
        let mut dp = p4rt_test();
        execute(&mut dp, "table_add acl drop 0x0800&&&0xff00 0->511 => 10").unwrap();
        execute(
            &mut dp,
            "table_add acl set_port 0x0800&&&0xffff 0->511 => 2 1",
        )
        .unwrap();
        // the table lets the highest of its own priorities win: the CLI's 1 must beat its 10
        let p = dp.program_mut().unwrap();
        let t = p.table_id("MyIngress.acl").unwrap();
        let prio: Vec<i32> = p.entries(t).unwrap().iter().map(|e| e.priority).collect();
        assert!(prio[1] > prio[0], "{prio:?}");
        let dump = execute(&mut dp, "table_dump acl").unwrap();
        assert!(
            dump.contains("(priority 10,") && dump.contains("(priority 1,"),
            "{dump}"
        );
        assert!(execute(&mut dp, "table_add acl drop 1&&&1 0->1 => 2147483648").is_err());
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

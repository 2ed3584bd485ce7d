//! simple_switch_CLI's table commands: `table_add`, `table_modify`, `table_delete`,
//! `table_clear`, `table_num_entries`, `table_dump`, `table_set_default`, and the parsing of
//! keys, values and priorities in its syntax (shared with the action profile commands).

use std::fmt::Write;

use lanes_p4::p4info::{P4Names, TableInfo};
use lanes_p4::{
    ActionId, EntryHandle, FieldMatch, KeyRules, MatchKey, MatchKind, Program, TableWrite,
    WriteKind,
};

use super::args::{find_table, hex, names, num, num_u32, program};
use super::{Answer, AnswerR};
use crate::dataplane::Dataplane;

type R = Result<String, String>;

pub(crate) const HELP: &str = "table_add TABLE ACTION KEY... => PARAM... [PRIORITY] | table_modify TABLE ACTION HANDLE => PARAM... | \
table_delete TABLE HANDLE | table_clear TABLE | table_dump TABLE | table_num_entries TABLE | table_set_default TABLE ACTION PARAM...";

/// Runs a table command; None if `cmd` is not one.
pub(crate) fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<AnswerR> {
    if cmd == "table_add" {
        return Some(table_add(dp, args));
    }
    edit(dp, cmd, args).map(|r| r.map(Answer::from))
}

/// The table commands that create nothing.
fn edit(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    Some(match cmd {
        "table_modify" => table_modify(dp, args),
        "table_delete" => with_table(dp, args, 2, |p, t, a| {
            p.delete_entry(t.table, EntryHandle(num_u32(a[1])?))
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
        _ => return None,
    })
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
        // octets as written: more than the field has bytes is refused even if the extra are
        // zeros (bmv2's CLI wants exactly six for a MAC)
        if s.split(':').count() > nbytes {
            return Err(format!("'{s}' has more octets than {width} bits"));
        }
        s.split(':')
            .map(|o| u8::from_str_radix(o, 16).map_err(|_| format!("'{s}' is not a MAC address")))
            .collect::<Result<_, _>>()?
    } else if let Some(h) = s.strip_prefix("0x") {
        // whole hex digits only: the pairs below are sliced by byte
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("'{s}' is not hex"));
        }
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
            MatchKey::Lpm(parse_value(v, width)?, num_u32(len)?)
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

fn table_add(dp: &mut Dataplane, args: &[&str]) -> AnswerR {
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
    // the same write P4Runtime and bmv2's Thrift API make, under bmv2's key rules
    let keys = e.keys.into_iter().enumerate();
    let w = TableWrite {
        keys: keys
            .map(|(i, key)| FieldMatch {
                field: i as u32,
                key,
            })
            .collect(),
        rules: KeyRules::Bmv2,
        priority: e.priority,
        action: Some((a, params)),
        ..TableWrite::new(WriteKind::Insert, e.table.table)
    };
    let h = p
        .apply_write(&w, 0) // no idle timeout: the clock is not read
        .map_err(|e| e.to_string())?
        .ok_or("no entry added")?;
    Ok(Answer::created(
        h.0,
        format!("Entry has been added with handle {}", h.0),
    ))
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
    let (values, priority) = if has_priority(&t) {
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

/// Whether a table's entries carry a priority: it has a ternary, range or optional key.
fn has_priority(t: &TableInfo) -> bool {
    t.keys.iter().any(|k| {
        matches!(
            k.match_kind,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
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
    if has_priority(t) {
        i32::MAX - p
    } else {
        p
    }
}

/// A table, one of its actions by name and that action's parameter values, resolved and parsed.
fn table_action(
    dp: &Dataplane,
    table: &str,
    action: &str,
    values: &[&str],
) -> Result<(TableInfo, ActionId, Vec<Vec<u8>>), String> {
    let names = names(dp)?;
    let t = find_table(&names, table)?;
    let (action_name, params) = action_params(&names, &t, action, values)?;
    let a = dp
        .program()
        .and_then(|p| p.action_id(t.table, &action_name))
        .ok_or_else(|| format!("no action {action_name}"))?;
    Ok((t, a, params))
}

fn table_modify(dp: &mut Dataplane, args: &[&str]) -> R {
    let [table, action, handle, "=>", values @ ..] = args else {
        return Err("table_modify TABLE ACTION HANDLE => PARAM...".into());
    };
    let (t, a, params) = table_action(dp, table, action, values)?;
    let p = program(dp)?;
    p.modify_entry(t.table, EntryHandle(num_u32(handle)?), a, params)
        .map_err(|e| e.to_string())?;
    Ok(String::new())
}

fn table_set_default(dp: &mut Dataplane, args: &[&str]) -> R {
    let [table, action, values @ ..] = args else {
        return Err("table_set_default TABLE ACTION PARAM...".into());
    };
    let (t, a, params) = table_action(dp, table, action, values)?;
    let p = program(dp)?;
    p.set_default(t.table, a, params)
        .map_err(|e| e.to_string())?;
    Ok(String::new())
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
            Some(r) => super::profile::target_text(r),
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
        let _ = writeln!(out, "  default: {}", super::profile::target_text(r));
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
    }

    #[test]
    fn values_that_are_not_numbers_are_refused_in_one_line() {
        // a non-ASCII digit after 0x once cut a character in two (a panic)
        for bad in [
            "0xé1", "0x", "0x 1", "0x-1", "0x1g", "０１", "1e3", "-1", "::",
        ] {
            let e = parse_value(bad, 48).unwrap_err();
            assert!(!e.contains('\n') && e.contains(bad), "{bad}: {e}");
        }
    }
}

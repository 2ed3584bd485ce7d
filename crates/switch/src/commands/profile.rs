//! Action profile commands on the command port, in simple_switch_CLI's grammar:
//! `act_prof_create_member PROFILE ACTION PARAM...`, `act_prof_create_group PROFILE`,
//! `act_prof_add_member_to_group PROFILE MEMBER GROUP`, `table_indirect_add TABLE KEY... =>
//! MEMBER [PRIORITY]`, `table_indirect_add_with_group ...`, dumps and deletes.

use lanes_p4::{EntryHandle, ProfileId, ProfileRef, Program};

use super::args::{find_table, hex, names, num, program};
use super::table::{entry_keys, values_for};
use super::{Answer, AnswerR};
use crate::dataplane::Dataplane;

type R = Result<String, String>;

pub const HELP: &str = "act_prof_create_member PROFILE ACTION PARAM... | act_prof_modify_member PROFILE ACTION MEMBER PARAM... | \
act_prof_delete_member PROFILE MEMBER | act_prof_create_group PROFILE | act_prof_delete_group PROFILE GROUP | \
act_prof_add_member_to_group PROFILE MEMBER GROUP | act_prof_remove_member_from_group PROFILE MEMBER GROUP | act_prof_dump PROFILE | \
table_indirect_add TABLE KEY... => MEMBER [PRIORITY] | table_indirect_add_with_group TABLE KEY... => GROUP [PRIORITY] | \
table_indirect_delete TABLE HANDLE | table_indirect_set_default TABLE MEMBER | table_indirect_set_default_with_group TABLE GROUP | \
table_indirect_reset_default TABLE";

/// Run an action profile command; None if `cmd` is not one.
pub fn execute(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<AnswerR> {
    Some(match cmd {
        "act_prof_create_member" => member(dp, args, false),
        "act_prof_modify_member" => member(dp, args, true),
        "act_prof_create_group" => with_profile(dp, args, 1, |p, ap, _| {
            let h = p.create_group(ap, None, 0)?;
            Ok(Answer::created(
                h,
                format!("Group has been created with handle {h}"),
            ))
        }),
        "table_indirect_add" => indirect_add(dp, args, false),
        "table_indirect_add_with_group" => indirect_add(dp, args, true),
        _ => return edit(dp, cmd, args).map(|r| r.map(Answer::from)),
    })
}

/// The action profile commands that create nothing.
fn edit(dp: &mut Dataplane, cmd: &str, args: &[&str]) -> Option<R> {
    let r = match cmd {
        "act_prof_delete_member" => with_profile(dp, args, 2, |p, ap, a| {
            p.delete_member(ap, handle(a[1])?)?;
            Ok(String::new())
        }),
        "act_prof_delete_group" => with_profile(dp, args, 2, |p, ap, a| {
            p.delete_group(ap, handle(a[1])?)?;
            Ok(String::new())
        }),
        "act_prof_add_member_to_group" => with_profile(dp, args, 3, |p, ap, a| {
            p.add_member_to_group(ap, handle(a[1])?, handle(a[2])?)?;
            Ok(String::new())
        }),
        "act_prof_remove_member_from_group" => with_profile(dp, args, 3, |p, ap, a| {
            p.remove_member_from_group(ap, handle(a[1])?, handle(a[2])?)?;
            Ok(String::new())
        }),
        "act_prof_dump" => with_profile(dp, args, 1, |p, ap, _| dump(p, ap)),
        "table_indirect_delete" => indirect(dp, args, 2, |p, t, a| {
            p.delete_entry(t, EntryHandle(handle(a[1])?))
        }),
        "table_indirect_set_default" => indirect(dp, args, 2, |p, t, a| {
            p.set_default_target(t, Some(ProfileRef::Member(handle(a[1])?)))
        }),
        "table_indirect_set_default_with_group" => indirect(dp, args, 2, |p, t, a| {
            p.set_default_target(t, Some(ProfileRef::Group(handle(a[1])?)))
        }),
        "table_indirect_reset_default" => {
            indirect(dp, args, 1, |p, t, _| p.set_default_target(t, None))
        }
        _ => return None,
    };
    Some(r)
}

fn handle(s: &str) -> Result<u32, lanes_p4::ApiError> {
    num(s)
        .ok()
        .and_then(|h| u32::try_from(h).ok())
        .ok_or_else(|| lanes_p4::ApiError::Invalid(format!("bad handle '{s}'")))
}

fn with_profile<T>(
    dp: &mut Dataplane,
    args: &[&str],
    n: usize,
    f: impl FnOnce(&mut Program, ProfileId, &[&str]) -> Result<T, lanes_p4::ApiError>,
) -> Result<T, String> {
    if args.len() != n {
        return Err(format!("expected {n} argument(s), got {}", args.len()));
    }
    let p = program(dp)?;
    let ap = p
        .profile_id(args[0])
        .ok_or_else(|| format!("no action profile named '{}'", args[0]))?;
    f(p, ap, args).map_err(|e| e.to_string())
}

/// `act_prof_create_member PROFILE ACTION PARAM...` or
/// `act_prof_modify_member PROFILE ACTION MEMBER PARAM...`.
fn member(dp: &mut Dataplane, args: &[&str], modify: bool) -> AnswerR {
    let usage = if modify {
        "act_prof_modify_member PROFILE ACTION MEMBER PARAM..."
    } else {
        "act_prof_create_member PROFILE ACTION PARAM..."
    };
    let (prof, action, rest) = match args {
        [prof, action, rest @ ..] if !modify || !rest.is_empty() => (*prof, *action, rest),
        _ => return Err(usage.into()),
    };
    let names = names(dp)?;
    let p = program(dp)?;
    let ap = p
        .profile_id(prof)
        .ok_or_else(|| format!("no action profile named '{prof}'"))?;
    let a = p
        .profile_action_id(ap, action)
        .ok_or_else(|| format!("action profile '{prof}' has no action '{action}'"))?;
    let full = p.action_name(a).unwrap_or_default().to_string();
    let (values, h) = if modify {
        (
            &rest[1..],
            Some(handle(rest[0]).map_err(|e| e.to_string())?),
        )
    } else {
        (rest, None)
    };
    let params = values_for(&names, &full, values)?;
    match h {
        Some(h) => {
            p.modify_member(ap, h, a, &params)
                .map_err(|e| e.to_string())?;
            Ok(Answer::from(String::new()))
        }
        None => {
            let h = p
                .add_member(ap, None, a, &params)
                .map_err(|e| e.to_string())?;
            Ok(Answer::created(
                h,
                format!("Member has been created with handle {h}"),
            ))
        }
    }
}

fn indirect_add(dp: &mut Dataplane, args: &[&str], group: bool) -> AnswerR {
    let names = names(dp)?;
    let e = entry_keys(
        &names,
        args,
        "table_indirect_add TABLE KEY... => HANDLE [PRIORITY]",
    )?;
    let [h] = e.values.as_slice() else {
        return Err("give one member or group handle after '=>'".into());
    };
    let h = handle(h).map_err(|e| e.to_string())?;
    let target = if group {
        ProfileRef::Group(h)
    } else {
        ProfileRef::Member(h)
    };
    let h = program(dp)?
        .add_indirect_entry(e.table.table, e.keys, target, e.priority)
        .map_err(|e| e.to_string())?;
    Ok(Answer::created(
        h.0,
        format!("Entry has been added with handle {}", h.0),
    ))
}

fn indirect(
    dp: &mut Dataplane,
    args: &[&str],
    n: usize,
    f: impl FnOnce(&mut Program, lanes_p4::TableId, &[&str]) -> Result<(), lanes_p4::ApiError>,
) -> R {
    if args.len() != n {
        return Err(format!("expected {n} argument(s), got {}", args.len()));
    }
    let t = find_table(&*names(dp)?, args[0])?;
    let p = program(dp)?;
    // as bmv2's indirect calls on a direct table: refused, the table left alone (a
    // table_indirect_delete once deleted a direct table's entry)
    if p.table_profile(t.table)
        .map_err(|e| e.to_string())?
        .is_none()
    {
        return Err(format!(
            "table {} has no action profile (not an indirect table)",
            t.name
        ));
    }
    f(p, t.table, args).map_err(|e| e.to_string())?;
    Ok(String::new())
}

fn dump(p: &mut Program, ap: ProfileId) -> Result<String, lanes_p4::ApiError> {
    let mut out = String::from("members:");
    for m in p.members(ap)? {
        let params: Vec<String> = m.params.iter().map(|v| hex(v)).collect();
        out += &format!(
            "\n  {:>4}: {} {}",
            m.handle,
            m.action_name,
            params.join(" ")
        );
    }
    if p.profile_info(ap)?.with_selector {
        out += "\ngroups:";
        for g in p.groups(ap)? {
            let ms: Vec<String> = g
                .members
                .iter()
                .map(|(m, w)| {
                    if *w == 1 {
                        m.to_string()
                    } else {
                        format!("{m}x{w}")
                    }
                })
                .collect();
            out += &format!("\n  {:>4}: [{}]", g.handle, ms.join(", "));
        }
    }
    Ok(out)
}

/// How an indirect entry shows in `table_dump`.
pub fn target_text(r: ProfileRef) -> String {
    match r {
        ProfileRef::Member(h) => format!("member({h})"),
        ProfileRef::Group(h) => format!("group({h})"),
    }
}

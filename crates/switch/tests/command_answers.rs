//! The handle a command answers with beside its text: the number the text names, the one the
//! next command acts on, and none for a command that creates nothing. A program client (the
//! lab) takes it from the reply instead of reading the text.

use lanes_p4::testprog::{load, profile_program};
use lanes_p4::Program;
use lanes_switch::commands::{answer, Answer};
use lanes_switch::{Dataplane, TmDefaults};

fn ok(dp: &mut Dataplane, line: &str) -> Answer {
    answer(dp, line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// The handle, after checking that the text names the same number last.
fn created(dp: &mut Dataplane, line: &str) -> u32 {
    let a = ok(dp, line);
    let h = a
        .handle
        .unwrap_or_else(|| panic!("{line}: no handle in {a:?}"));
    assert!(a.text.ends_with(&format!("handle {h}")), "{line}: {a:?}");
    h
}

#[test]
fn table_add_answers_the_handle_that_table_delete_then_removes() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/p4rt_test.json");
    let mut dp = Dataplane::new(TmDefaults::default());
    dp.set_program(Program::load(&std::fs::read_to_string(path).unwrap()).unwrap());
    let first = created(&mut dp, "table_add l2_fwd set_port 00:00:00:00:00:05 => 2");
    let second = created(&mut dp, "table_add l2_fwd set_port 00:00:00:00:00:06 => 3");
    assert_ne!(first, second);
    assert_eq!(
        ok(&mut dp, &format!("table_delete l2_fwd {first}")).handle,
        None
    );
    let dump = ok(&mut dp, "table_dump l2_fwd").text;
    assert!(!dump.contains("0x000000000005"), "{dump}");
    assert!(dump.contains("0x000000000006"), "{dump}");
    // a refused add answers an error, not a handle
    assert!(answer(&mut dp, "table_add l2_fwd set_port 00:00:00:00:00:06 => 3").is_err());
}

#[test]
fn members_groups_and_indirect_entries_answer_their_handles() {
    let mut dp = Dataplane::new(TmDefaults::default());
    dp.set_program(load(&profile_program(true)));
    let m0 = created(&mut dp, "act_prof_create_member ap fwd 2");
    let m1 = created(&mut dp, "act_prof_create_member ap fwd 3");
    let g = created(&mut dp, "act_prof_create_group ap");
    let added = ok(
        &mut dp,
        &format!("act_prof_add_member_to_group ap {m1} {g}"),
    );
    assert_eq!(added.handle, None);
    let e = created(
        &mut dp,
        &format!("table_indirect_add_with_group t 0x0800 => {g}"),
    );
    let f = created(&mut dp, &format!("table_indirect_add t 0x86dd => {m0}"));
    assert_ne!(e, f);
    assert_eq!(
        ok(&mut dp, "act_prof_dump ap").text,
        "members:\n     0: fwd 0x0002\n     1: fwd 0x0003\ngroups:\n     0: [1]"
    );
    let modified = ok(&mut dp, &format!("act_prof_modify_member ap fwd {m0} 4"));
    assert_eq!(modified.handle, None);
}

#[test]
fn multicast_groups_and_nodes_answer_their_handles() {
    let mut dp = Dataplane::new(TmDefaults::default());
    let g = created(&mut dp, "mc_mgrp_create 7");
    let n = created(&mut dp, "mc_node_create 0 1 2");
    let associated = ok(&mut dp, &format!("mc_node_associate 7 {n}"));
    assert_eq!(associated.handle, None);
    assert_eq!(g, 7, "a group's handle is its id");
    let dump = ok(&mut dp, "mc_dump").text;
    assert!(dump.contains(&format!("L1h={n}")), "{dump}");
}

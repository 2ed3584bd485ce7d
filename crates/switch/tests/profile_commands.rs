//! Action profile commands on the command port (simple_switch_CLI's grammar): members,
//! groups, indirect entries and defaults, their dumps and errors, and the packet path.

use lanes_p4::testprog::{load, profile_program};
use lanes_switch::commands::execute;
use lanes_switch::{Dataplane, TmDefaults};

fn ok(dp: &mut Dataplane, line: &str) -> String {
    execute(dp, line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn members_groups_and_indirect_entries_from_commands() {
    let mut dp = Dataplane::new(TmDefaults::default());
    dp.set_program(load(&profile_program(true)));
    assert_eq!(
        ok(&mut dp, "act_prof_create_member ap fwd 2"),
        "Member has been created with handle 0"
    );
    ok(&mut dp, "act_prof_create_member ingress.ap fwd 3");
    assert_eq!(
        ok(&mut dp, "act_prof_create_group ap"),
        "Group has been created with handle 0"
    );
    ok(&mut dp, "act_prof_add_member_to_group ap 0 0");
    ok(&mut dp, "act_prof_add_member_to_group ap 1 0");
    assert_eq!(
        ok(&mut dp, "table_indirect_add_with_group t 0x0800 => 0"),
        "Entry has been added with handle 0"
    );
    ok(&mut dp, "table_indirect_add t 0x86dd => 1");
    ok(&mut dp, "table_indirect_set_default t 0");
    let dump = ok(&mut dp, "table_dump t");
    assert!(dump.contains("0x0800 => group(0)"), "{dump}");
    assert!(dump.contains("0x86dd => member(1)"), "{dump}");
    assert!(dump.contains("default: member(0)"), "{dump}");
    assert_eq!(
        ok(&mut dp, "act_prof_dump ap"),
        "members:\n     0: fwd 0x0002\n     1: fwd 0x0003\ngroups:\n     0: [0, 1]"
    );
    ok(&mut dp, "act_prof_modify_member ap fwd 1 5");
    assert!(ok(&mut dp, "act_prof_dump ap").contains("1: fwd 0x0005"));
    // what is refused, in one line each
    for (line, want) in [
        ("act_prof_delete_member ap 1", "used by"),
        ("act_prof_delete_group ap 0", "used by"),
        ("act_prof_create_member ap nope 1", "has no action 'nope'"),
        ("act_prof_create_member ap fwd 1 2", "takes 1 parameter(s)"),
        ("act_prof_dump other", "no action profile named 'other'"),
        ("table_indirect_add t 0x0801 => 9", "has no member 9"),
        ("table_add t fwd 0x0801 => 1", "is indirect"),
    ] {
        let e = execute(&mut dp, line).unwrap_err();
        assert!(e.contains(want) && !e.contains('\n'), "{line}: {e}");
    }
    ok(&mut dp, "table_indirect_delete t 1");
    ok(&mut dp, "table_indirect_reset_default t");
    ok(&mut dp, "act_prof_remove_member_from_group ap 1 0");
    ok(&mut dp, "act_prof_delete_member ap 1");
    assert_eq!(
        ok(&mut dp, "act_prof_dump ap"),
        "members:\n     0: fwd 0x0002\ngroups:\n     0: [0]"
    );
}

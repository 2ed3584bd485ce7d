//! Arguments of the command port that name nothing: handles and ports past 32 bits, values that
//! are not numbers. Each is refused in one line and changes nothing (findings of
//! bench/fuzz_textport.py, kept as tests).

use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::{Dataplane, TmDefaults};

fn p4rt_test() -> Dataplane {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/p4rt_test.json");
    let mut dp = Dataplane::new(TmDefaults::default());
    dp.set_program(Program::load(&std::fs::read_to_string(path).unwrap()).unwrap());
    dp.add_port(1, Some(100e6)).unwrap();
    dp.add_port(3, Some(100e6)).unwrap();
    dp
}

fn refused(dp: &mut Dataplane, line: &str) -> String {
    let e = execute(dp, line).expect_err(line);
    assert!(!e.is_empty() && !e.contains('\n'), "{line}: {e:?}");
    e
}

#[test]
fn a_handle_past_32_bits_is_not_the_handle_modulo_2_to_the_32() {
    let mut dp = p4rt_test();
    let added = execute(&mut dp, "table_add l2_fwd set_port 00:00:00:00:00:05 => 2").unwrap();
    assert_eq!(added, "Entry has been added with handle 0");
    refused(&mut dp, "table_delete l2_fwd 4294967296");
    refused(&mut dp, "table_delete l2_fwd 18446744073709551616");
    refused(&mut dp, "table_modify l2_fwd drop 4294967296 =>");
    let dump = execute(&mut dp, "table_dump l2_fwd").unwrap();
    assert!(
        dump.contains("0x000000000005 => MyIngress.set_port 0x0002"),
        "{dump}"
    );
    assert_eq!(execute(&mut dp, "table_num_entries l2_fwd").unwrap(), "1");
}

#[test]
fn a_port_past_32_bits_is_no_port() {
    let mut dp = p4rt_test();
    let before = execute(&mut dp, "show_queues 3").unwrap();
    refused(&mut dp, "set_port_rate 4294967299 1Mbps");
    refused(&mut dp, "set_queue_depth 5 4294967299 0");
    refused(&mut dp, "set_scheduler drr 4294967299");
    refused(&mut dp, "show_queues 4294967299");
    assert_eq!(execute(&mut dp, "show_queues 3").unwrap(), before);
}

#[test]
fn a_key_that_is_not_a_number_is_refused_not_a_panic() {
    let mut dp = p4rt_test();
    // "0xé1" once sliced the 'é' in two: the command port's thread panicked and its client got
    // no answer
    for key in ["0xé1", "0x", "0x€", "0xg1", "０１"] {
        let e = refused(&mut dp, &format!("table_add l2_fwd drop {key} =>"));
        assert!(e.contains(key), "{key}: {e}");
    }
    assert_eq!(execute(&mut dp, "table_num_entries l2_fwd").unwrap(), "0");
}

#[test]
fn indirect_commands_on_a_direct_table_change_nothing() {
    let mut dp = p4rt_test();
    execute(&mut dp, "table_add l2_fwd set_port 00:00:00:00:00:05 => 2").unwrap();
    let before = execute(&mut dp, "table_dump l2_fwd").unwrap();
    for line in [
        "table_indirect_delete l2_fwd 0",
        "table_indirect_set_default l2_fwd 0",
        "table_indirect_set_default_with_group l2_fwd 0",
        "table_indirect_reset_default l2_fwd",
    ] {
        let e = refused(&mut dp, line);
        assert!(e.contains("no action profile"), "{line}: {e}");
    }
    assert_eq!(execute(&mut dp, "table_dump l2_fwd").unwrap(), before);
}

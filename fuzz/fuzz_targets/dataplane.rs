//! The switch data plane without sockets: frames into Dataplane::ingress (TM enqueue), time
//! advancing, Dataplane::service handing frames to a closure (that may refuse them), for
//! tm_basic with routes and priorities set up by simple_switch_CLI commands.
//! Input: ops [op][...]: 0 = receive frame [port][len hi][len lo][bytes], 1 = advance time and
//! serve, 2 = serve with a failing transmitter.
#![no_main]

use lanes_fuzz::{Input, TM_BASIC};
use lanes_p4::Program;
use lanes_switch::dataplane::MAX_FRAME;
use lanes_switch::{commands, Dataplane, TmDefaults};
use libfuzzer_sys::fuzz_target;

const SETUP: &[&str] = &[
    "table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 00:00:00:00:01:01 1",
    "table_add ipv4_lpm ipv4_forward 10.0.2.0/24 => 00:00:00:00:02:02 2",
    "table_add ipv4_lpm ipv4_forward 0.0.0.0/0 => 00:00:00:00:03:03 3",
    "table_add src_ip_prio set_priority 10.0.1.1/32 => 7 7500000 7000",
    "table_add src_ip_prio set_priority 10.0.0.0/8 => 1 1000000 1500",
    "set_scheduler rlsp-drr",
];

fn setup(program: Program) -> Dataplane {
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 100e6,
        ..TmDefaults::default()
    });
    for port in 1..=4 {
        dp.add_port(port, None).unwrap();
    }
    dp.set_program(program);
    for line in SETUP {
        commands::execute(&mut dp, line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
    dp
}

fuzz_target!(|data: &[u8]| {
    // a fresh data plane per input, so a failure reproduces from its input alone
    let mut dp = setup(Program::load(TM_BASIC).unwrap());
    let dp = &mut dp;
    let mut inp = Input::new(data);
    let mut now = 1_000_000_000u64;
    let mut sent = 0usize;
    let mut check = |_port: u32, f: &[u8]| -> bool {
        assert!(f.len() <= MAX_FRAME + 64, "frame of {} bytes sent", f.len());
        sent += 1;
        true
    };
    for _ in 0..64 {
        if inp.is_empty() {
            break;
        }
        match inp.u8() % 3 {
            0 => {
                let port = u32::from(inp.u8() % 6);
                let len = inp.u16() as usize % (MAX_FRAME + 100);
                let bytes = inp.take(len);
                let Some(slot) = dp.take_slot() else { break };
                let buf = dp.slot_buf(slot);
                let n = bytes.len().min(buf.len());
                buf[..n].copy_from_slice(&bytes[..n]);
                // a length past the bytes received (ring says more than the buffer) is refused
                dp.ingress(slot, if len > MAX_FRAME { len } else { n }, port, now);
            }
            1 => {
                now += u64::from(inp.u16()) * 1000;
                dp.service(now, &mut check);
            }
            _ => dp.service(now, &mut |_, _| false),
        }
    }
    // drain: serve at every deadline the ports announce (pacing spreads a burst out); a
    // queued packet must always have a deadline
    for _ in 0..10_000 {
        let Some(t) = dp.next_deadline(now) else {
            break;
        };
        now = now.max(t);
        dp.service(now, &mut check);
    }
    assert_eq!(dp.queued_pkts(), 0, "packets left in the TM after draining");
});

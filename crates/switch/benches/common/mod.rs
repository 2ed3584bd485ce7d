//! The pipeline_tm bench's set-up, shared with the `pipeline_count` example: tm_basic with three
//! sources in three classes, ports at 1 Tb/s, and its IPv4/UDP frames.

use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::{Dataplane, TmDefaults, TxOutcome};
use lanes_tm::Scheduler;

pub fn udp_frame(src_host: u8, frame_len: usize) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 1, src_host, 0x08, 0x00];
    let ip_len = (frame_len - 14) as u16;
    f.extend_from_slice(&[
        0x45,
        0,
        (ip_len >> 8) as u8,
        ip_len as u8,
        0,
        0,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 0, 1, src_host, 10, 0, 1, 4]);
    f.resize(frame_len, 0xab);
    f
}

pub fn dataplane(scheduler: Scheduler) -> Dataplane {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/tm_basic.json");
    let text = std::fs::read_to_string(path).expect("p4/tm_basic.json");
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 1e12,
        scheduler,
        ..TmDefaults::default()
    });
    for port in 1..=4 {
        dp.add_port(port, None).unwrap();
    }
    dp.set_program(Program::load(&text).unwrap());
    for cmd in [
        "table_add ipv4_lpm ipv4_forward 10.0.1.4/32 => 00:00:00:00:01:04 4",
        "table_add src_ip_prio set_priority 10.0.1.1/32 => 7 100000000000 7000",
        "table_add src_ip_prio set_priority 10.0.1.2/32 => 6 2500000 7000",
        "table_add src_ip_prio set_priority 10.0.1.3/32 => 5 2500000 7000",
    ] {
        execute(&mut dp, cmd).unwrap();
    }
    dp
}

/// One batch: `frames` received at `now` + 1 us on ports 1-3 in turn, then drained in virtual
/// time (the high class's shaper spaces its packets out); `sent` adds the bytes that left.
pub fn batch(dp: &mut Dataplane, frames: &[Vec<u8>], now: &mut u64, sent: &mut u64) {
    *now += 1_000;
    for (i, f) in frames.iter().enumerate() {
        let slot = dp.take_slot().expect("slot pool drained");
        dp.slot_buf(slot)[..f.len()].copy_from_slice(f);
        dp.ingress(slot, f.len(), 1 + (i % 3) as u32, *now);
    }
    while let Some(t) = dp.next_deadline(*now) {
        *now = t;
        dp.service(*now, &mut |_, frame| {
            *sent += frame.len() as u64;
            TxOutcome::Sent
        });
    }
}

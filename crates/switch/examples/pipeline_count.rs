//! Fixed work for counting instructions (repeatable on a noisy machine, unlike time): 20000
//! batches of 32 frames (64 B) through tm_basic and rlsp-drr, as the pipeline_tm bench does.
//!
//!     cargo build --release -p lanes-switch --example pipeline_count
//!     valgrind --tool=callgrind target/release/examples/pipeline_count
use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::{Dataplane, TmDefaults};
use lanes_tm::Scheduler;

fn udp_frame(src_host: u8, frame_len: usize) -> Vec<u8> {
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

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../p4/tm_basic.json");
    let text = std::fs::read_to_string(path).unwrap();
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 1e12,
        scheduler: Scheduler::RlspDrr,
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
    let frames: Vec<Vec<u8>> = (0..32).map(|i| udp_frame(1 + (i % 3) as u8, 64)).collect();
    let mut now = 0u64;
    let mut sent = 0u64;
    for _ in 0..20000 {
        now += 1_000;
        for (i, f) in frames.iter().enumerate() {
            let slot = dp.take_slot().unwrap();
            dp.slot_buf(slot)[..f.len()].copy_from_slice(f);
            dp.ingress(slot, f.len(), 1 + (i % 3) as u32, now);
        }
        while let Some(t) = dp.next_deadline(now) {
            now = t;
            dp.service(now, &mut |_, frame| {
                sent += frame.len() as u64;
                true
            });
        }
    }
    println!("sent {sent}");
}

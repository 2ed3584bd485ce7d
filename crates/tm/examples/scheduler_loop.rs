//! The scheduler bench's loop (benches/schedulers.rs) run a given number of times, for an
//! instruction count that does not depend on the machine's load:
//! `valgrind --tool=callgrind target/release/examples/scheduler_loop SCHEDULER PACKETS`;
//! the count per packet is the difference between two packet counts over their difference.

use std::hint::black_box;
use std::process::ExitCode;

use lanes_tm::{Port, PortConfig, Scheduler};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(s), Some(n)) = (args.first(), args.get(1)) else {
        eprintln!("usage: scheduler_loop SCHEDULER PACKETS");
        return ExitCode::FAILURE;
    };
    let scheduler = match s.parse::<Scheduler>() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let Ok(packets) = n.parse::<u64>() else {
        eprintln!("PACKETS must be a whole number, got '{n}'");
        return ExitCode::FAILURE;
    };
    // the bench's port: 8 backlogged queues at 100 Gb/s, the high one limited to 60 %
    let mut c = PortConfig::new(100e9, scheduler, 8);
    c.queues[7].rate_bytes_per_s = Some(0.6 * 100e9 / 8.0);
    for q in &mut c.queues {
        q.depth_pkts = Some(1024);
        q.quantum = 1500;
    }
    let mut port: Port<u64> = Port::new(c).expect("the bench's settings are valid");
    for i in 0..8 * 64u64 {
        port.enqueue(0, (i % 8) as usize, 1500, i);
    }
    let sizes = [64u32, 1500, 576, 1500, 1024, 1500, 128, 1500];
    let mut now = 0u64;
    for i in 1..=packets {
        port.enqueue(now, (i % 8) as usize, sizes[(i % 8) as usize], i);
        now = port.next_event_ns(now).expect("the port stays backlogged");
        black_box(port.dequeue(now));
    }
    println!("{} packets, virtual time {now} ns", packets);
    ExitCode::SUCCESS
}

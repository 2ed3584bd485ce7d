//! Fixed work for counting instructions (repeatable on a noisy machine, unlike time): 20000
//! batches of 32 frames (64 B) through tm_basic and rlsp-drr, as the pipeline_tm bench does.
//!
//!     cargo build --release -p lanes-switch --example pipeline_count
//!     valgrind --tool=callgrind target/release/examples/pipeline_count
//!
//! With `--log FILE [info|debug|trace]` (debug when not given) the log is on and written to
//! FILE (/dev/null counts what making the lines costs): what tracing costs when on.
#[path = "../benches/common/mod.rs"]
mod common;

use common::{batch, dataplane, udp_frame};
use lanes_p4::LogLevel;
use lanes_switch::TraceLog;
use lanes_tm::Scheduler;

fn main() {
    let mut dp = dataplane(Scheduler::RlspDrr);
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, file, rest @ ..] = args.as_slice() {
        if flag == "--log" {
            let level = rest
                .first()
                .and_then(|l| LogLevel::from_name(l))
                .unwrap_or(LogLevel::Debug);
            match TraceLog::open(false, Some(std::path::Path::new(file)), level) {
                Ok(log) => dp.set_trace_log(Some(log)),
                Err(e) => {
                    eprintln!("pipeline_count: cannot open {file}: {e}");
                    std::process::exit(2);
                }
            }
        }
    }
    let frames: Vec<Vec<u8>> = (0..32).map(|i| udp_frame(1 + (i % 3) as u8, 64)).collect();
    let mut now = 0u64;
    let mut sent = 0u64;
    for _ in 0..20000 {
        batch(&mut dp, &frames, &mut now, &mut sent);
    }
    println!("sent {sent}");
}

//! Fixed work for counting instructions (repeatable on a noisy machine, unlike time): 20000
//! batches of 32 frames (64 B) through tm_basic and rlsp-drr, as the pipeline_tm bench does.
//!
//!     cargo build --release -p lanes-switch --example pipeline_count
//!     valgrind --tool=callgrind target/release/examples/pipeline_count
#[path = "../benches/common/mod.rs"]
mod common;

use common::{batch, dataplane, udp_frame};
use lanes_tm::Scheduler;

fn main() {
    let mut dp = dataplane(Scheduler::RlspDrr);
    let frames: Vec<Vec<u8>> = (0..32).map(|i| udp_frame(1 + (i % 3) as u8, 64)).collect();
    let mut now = 0u64;
    let mut sent = 0u64;
    for _ in 0..20000 {
        batch(&mut dp, &frames, &mut now, &mut sent);
    }
    println!("sent {sent}");
}

//! The packet path of the repo's programs (tm_basic, l3_basic, the feature test program) on
//! arbitrary frames: parser -> ingress -> egress -> deparser, with table entries chosen by the
//! input. Input: [program][entry count][entries...][frames...] (see lanes_fuzz::run_frames).
#![no_main]

use lanes_fuzz::{clear_tables, install_entries, run_frames, Input, PROGRAMS};
use lanes_p4::p4info::P4Names;
use lanes_p4::Program;
use libfuzzer_sys::fuzz_target;
use std::sync::Mutex;

static LOADED: Mutex<Vec<(Program, P4Names)>> = Mutex::new(Vec::new());

fuzz_target!(|data: &[u8]| {
    let mut loaded = LOADED.lock().unwrap();
    if loaded.is_empty() {
        for text in PROGRAMS {
            let p = Program::load(text).expect("repo program loads");
            let n = P4Names::from_program(&p);
            loaded.push((p, n));
        }
    }
    let mut inp = Input::new(data);
    let k = inp.u8() as usize % loaded.len();
    let (prog, names) = &mut loaded[k];
    clear_tables(prog, names);
    let count = inp.u8() as usize % 6;
    install_entries(prog, names, &mut inp, count);
    run_frames(prog, &mut inp, 16);
});

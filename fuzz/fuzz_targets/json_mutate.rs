//! Structure-aware loader fuzzing: the repo's real programs with up to 8 mutations each
//! (replace a node by a number, string, null, bool, another subtree, empty container; remove,
//! duplicate, swap children). A program that loads gets table entries and runs frames.
//! Input: [program][mutation count][mutations...][entry count][entries...][frames...].
#![no_main]

use lanes_fuzz::{
    collect_strings, install_entries, mutate, run_frames, run_samples, Input, PROGRAMS,
};
use lanes_p4::p4info::P4Names;
use lanes_p4::Program;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::sync::OnceLock;

static BASE: OnceLock<Vec<(Value, Vec<String>)>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let base = BASE.get_or_init(|| {
        PROGRAMS
            .iter()
            .map(|t| {
                let v: Value = serde_json::from_str(t).unwrap();
                let mut pool = Vec::new();
                collect_strings(&v, &mut pool);
                (v, pool)
            })
            .collect()
    });
    let mut inp = Input::new(data);
    let (doc, pool) = &base[inp.u8() as usize % base.len()];
    let mut doc = doc.clone();
    for _ in 0..(inp.u8() % 8 + 1) {
        mutate(&mut doc, pool, &mut inp);
    }
    match Program::load_value(&doc) {
        Ok(mut p) => {
            let names = P4Names::from_program(&p);
            let count = inp.u8() as usize % 6;
            install_entries(&mut p, &names, &mut inp, count);
            run_samples(&mut p);
            run_frames(&mut p, &mut inp, 8);
        }
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "load error is not one line: {line}");
        }
    }
});

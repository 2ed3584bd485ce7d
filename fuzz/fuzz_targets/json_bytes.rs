//! The bmv2 JSON loader on arbitrary bytes (seeded with the repo's programs and a JSON
//! dictionary); a program that loads runs sample frames.
#![no_main]

use lanes_fuzz::run_samples;
use lanes_p4::Program;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Program::load(&text) {
        Ok(mut p) => run_samples(&mut p),
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "load error is not one line: {line}");
        }
    }
});

//! Development driver: `cargo run -p lanes-p4c --example p4c -- PROG.p4 [-o OUT.json]
//! [--p4runtime-files OUT.p4info.txtpb] [-I DIR] [-D NAME=VALUE]` (the `lanes p4c` command
//! does the same through the Python CLI).

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut opts = lanes_p4c::Options::default();
    let (mut input, mut out, mut info) = (None, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-o" => out = args.next(),
            "--p4runtime-files" => info = args.next(),
            "-I" => opts.include_dirs.extend(args.next().map(PathBuf::from)),
            "-D" => {
                let d = args.next().unwrap_or_default();
                let (n, v) = d.split_once('=').unwrap_or((&d, "1"));
                opts.defines.push((n.to_string(), v.to_string()));
            }
            _ => input = Some(PathBuf::from(a)),
        }
    }
    let Some(input) = input else {
        eprintln!(
            "usage: p4c PROG.p4 [-o OUT.json] [--p4runtime-files OUT.txtpb] [-I DIR] [-D N=V]"
        );
        std::process::exit(2);
    };
    match lanes_p4c::compile_file(&input, &opts) {
        Ok(o) => {
            let out = out.unwrap_or_else(|| input.with_extension("json").display().to_string());
            if let Err(e) = std::fs::write(&out, o.json) {
                eprintln!("{out}: {e}");
                std::process::exit(1);
            }
            if let Some(i) = info {
                if let Err(e) = std::fs::write(&i, o.p4info) {
                    eprintln!("{i}: {e}");
                    std::process::exit(1);
                }
            }
        }
        Err(d) => {
            eprintln!("{d}");
            std::process::exit(1);
        }
    }
}

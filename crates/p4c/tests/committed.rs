//! The JSON and P4Info committed in p4/ are what lanes p4c makes of the sources beside them
//! (`make p4` regenerates them): a source edited without recompiling fails here.

mod common;
use common::*;

#[test]
fn every_program_in_p4_is_compiled_and_up_to_date() {
    let mut n = 0;
    for entry in std::fs::read_dir(repo_path("p4")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("p4") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let out = compile(&name);
        let committed = std::fs::read_to_string(path.with_extension("json")).unwrap();
        let a: serde_json::Value = serde_json::from_str(&out.json).unwrap();
        let b: serde_json::Value = serde_json::from_str(&committed).unwrap();
        assert!(
            a == b,
            "p4/{name}.json is not what p4/{name}.p4 compiles to: run `make p4`"
        );
        let info = std::fs::read_to_string(repo_path(&format!("p4/{name}.p4info.txtpb"))).unwrap();
        assert!(
            out.p4info == info,
            "p4/{name}.p4info.txtpb is out of date: run `make p4`"
        );
        load(&committed);
        n += 1;
    }
    assert_eq!(n, 5, "programs in p4/");
}

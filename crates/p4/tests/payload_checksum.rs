//! Checksums over the payload (`update_checksum_with_payload`, `verify_checksum_with_payload`;
//! a `payload` input in the JSON calculation): the fields, then the valid headers deparsed after
//! the last field's header, then the packet's payload, as bmv2 computes TCP and UDP checksums.

use lanes_p4::testprog::{load, skeleton};
use lanes_p4::{csum16, Program};
use serde_json::json;

/// Ethernet, then `h` {a: 16, csum: 16} and `t` {x: 8}; checksum `h.csum` = csum16(h.a, the
/// headers after h, payload), verified and updated; ingress sends everything to port 1 and
/// sets `h.a` to 0x1234.
fn program() -> Program {
    let mut j = skeleton(json!([]));
    let types = j["header_types"].as_array_mut().unwrap();
    types.push(json!({"name": "h_t", "id": 3, "fields": [["a", 16, false], ["csum", 16, false]]}));
    types.push(json!({"name": "t_t", "id": 4, "fields": [["x", 8, false]]}));
    let headers = j["headers"].as_array_mut().unwrap();
    headers.push(json!({"name": "h", "id": 3, "header_type": "h_t", "metadata": false}));
    headers.push(json!({"name": "t", "id": 4, "header_type": "t_t", "metadata": false}));
    let extract =
        |h: &str| json!({"op": "extract", "parameters": [{"type": "regular", "value": h}]});
    j["parsers"][0]["parse_states"][0]["parser_ops"] =
        json!([extract("ethernet"), extract("h"), extract("t")]);
    j["deparsers"][0]["order"] = json!(["ethernet", "h", "t"]);
    j["calculations"] = json!([{"name": "c", "id": 0, "algo": "csum16", "input": [
        {"type": "field", "value": ["h", "a"]}, {"type": "payload", "value": null}]}]);
    j["checksums"] = json!([{"name": "cs", "id": 0, "target": ["h", "csum"], "type": "generic",
        "calculation": "c", "update": true, "verify": true, "if_cond": null}]);
    lanes_p4::testprog::run_action(
        &mut j,
        json!([lanes_p4::testprog::action(
            0,
            "a",
            json!([]),
            vec![
                lanes_p4::testprog::assign(
                    lanes_p4::testprog::field("standard_metadata", "egress_spec"),
                    lanes_p4::testprog::hex(1)
                ),
                lanes_p4::testprog::assign(
                    lanes_p4::testprog::field("h", "a"),
                    lanes_p4::testprog::hex(0x1234)
                ),
            ]
        )]),
        0,
    );
    load(&j)
}

#[test]
fn payload_checksum_covers_later_headers_and_payload() {
    let mut p = program();
    let payload = [1u8, 2, 3, 4, 5];
    let sum_over = |a: u16| {
        let mut b = a.to_be_bytes().to_vec();
        b.push(0x77); // t.x
        b.extend_from_slice(&payload);
        csum16(&b)
    };
    let mut f = lanes_p4::testprog::frame(0x88b5, &[]);
    f.extend_from_slice(&0x0abcu16.to_be_bytes()); // h.a
    f.extend_from_slice(&sum_over(0x0abc).to_be_bytes()); // a correct h.csum
    f.push(0x77);
    f.extend_from_slice(&payload);
    let mut st = p.new_state();
    let mut out = Vec::new();
    let (_, eg) = p.process(&mut st, &f, 2, 0, &mut out);
    assert!(eg.drop.is_none());
    assert_eq!(
        p.stats().checksum_errors,
        0,
        "the arriving checksum verifies"
    );
    // egress rewrote h.a: the new checksum covers the new value, t and the payload
    assert_eq!(&out[14..16], &[0x12, 0x34]);
    assert_eq!(&out[16..18], &sum_over(0x1234).to_be_bytes());
    assert_eq!(&out[18..], &f[18..]);
    // a wrong checksum is counted
    f[17] ^= 0xff;
    p.process(&mut st, &f, 2, 0, &mut out);
    assert_eq!(p.stats().checksum_errors, 1);
}

#[test]
fn payload_input_must_come_last_after_a_field() {
    let mut j = skeleton(json!([]));
    j["calculations"] = json!([{"name": "c", "id": 0, "algo": "csum16", "input": [
        {"type": "payload", "value": null}, {"type": "field", "value": ["ethernet", "etherType"]}]}]);
    let m = lanes_p4::testprog::load_err(&j);
    assert!(m.contains("a payload input must come last"), "{m}");
    j["calculations"][0]["input"] = json!([{"type": "payload", "value": null}]);
    let m = lanes_p4::testprog::load_err(&j);
    assert!(m.contains("needs a header field before it"), "{m}");
}

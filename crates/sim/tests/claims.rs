//! The simulator's claims, checked on the repo's scenarios and on generated ones against
//! analytical shares and delay bounds.

use serde_json::Value;

fn run_file(name: &str) -> Value {
    let path = format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    lanes_sim::run_toml(&text, None).unwrap()
}

fn run(text: &str) -> Value {
    lanes_sim::run_toml(text, None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Mean of a flow's throughput (bps) and of a port's utilisation over intervals starting in [a, b).
fn phase(r: &Value, a: f64, b: f64, flow: &str, port: &str) -> (f64, f64) {
    let ivs: Vec<&Value> = r["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|iv| (a..b).contains(&iv["t_s"].as_f64().unwrap()))
        .collect();
    let n = ivs.len() as f64;
    let bw = ivs
        .iter()
        .map(|iv| iv["flows_bps"][flow].as_f64().unwrap())
        .sum::<f64>()
        / n;
    let util = ivs
        .iter()
        .map(|iv| iv["ports_utilisation"][port].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    (bw, util)
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    (got - want).abs() <= tol * want
}

fn check_validation(r: &Value, link: f64, t: f64) {
    // phase 1: low flows only, phase 2: high joins, phase 3: high gone (first interval skipped)
    let skip = t / 10.0;
    for (a, b, want_low, want_high) in [
        (skip, t, 0.5, 0.0),
        (t + skip, 2.0 * t, 0.25, 0.5),
        (2.0 * t + skip, 3.0 * t, 0.5, 0.0),
    ] {
        let (med, util) = phase(r, a, b, "medium", "p1");
        let (low, _) = phase(r, a, b, "low", "p1");
        let (high, _) = phase(r, a, b, "high", "p1");
        assert!(
            close(med, want_low * link, 0.02) && close(low, want_low * link, 0.02),
            "phase {a}: {med} {low}"
        );
        assert!(
            (high - want_high * link).abs() <= 0.01 * link,
            "phase {a}: high {high}"
        );
        assert!(util >= 0.99, "phase {a}: utilisation {util}");
    }
    assert_eq!(r["flows"]["high"]["loss_pct"].as_f64().unwrap(), 0.0);
}

#[test]
fn validation_case_at_100m_and_100g() {
    check_validation(&run_file("validation_100m.toml"), 100e6, 1.0);
    check_validation(&run_file("validation_100g.toml"), 100e9, 0.01);
}

#[test]
fn strict_with_static_rates_underuses_the_link() {
    let r = run_file("strict_static_100m.toml");
    let (_, util_without_high) = phase(&r, 0.1, 1.0, "low", "p1");
    assert!(close(util_without_high, 0.4, 0.01), "{util_without_high}");
    let total = r["ports"]["p1"]["utilisation"].as_f64().unwrap();
    assert!(total < 0.6, "{total}");
}

fn check_latency(r: &Value, link: f64) {
    let mtu_ns = 1500.0 * 8.0 / link * 1e9;
    for tag in ["strict", "rlspdrr"] {
        let f = &r["flows"][format!("high_{tag}")];
        let p99 = f["delay_ns"]["p99"].as_f64().unwrap();
        assert!(
            p99 <= mtu_ns + 1000.0,
            "{tag}: p99 {p99} ns > {mtu_ns} + 1 us"
        );
        assert_eq!(f["loss_pct"].as_f64().unwrap(), 0.0);
    }
    let fifo = r["flows"]["high_fifo"]["delay_ns"]["p50"].as_f64().unwrap();
    assert!(
        fifo > 20.0 * mtu_ns,
        "fifo p50 {fifo} should be a buffer's worth"
    );
    for port in ["fifo", "strict", "rlspdrr"] {
        assert!(r["ports"][port]["utilisation"].as_f64().unwrap() > 0.995);
    }
}

#[test]
fn high_class_delay_is_one_packet_under_strict_and_rlsp_drr() {
    check_latency(&run_file("hp_latency_100m.toml"), 100e6);
    check_latency(&run_file("hp_latency_100g.toml"), 100e9);
}

#[test]
fn fifo_delay_grows_with_the_buffer() {
    let text = std::fs::read_to_string(format!(
        "{}/../../scenarios/hp_latency_100m.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let p50 = |depth: u32| {
        let t = text.replace(
            "scheduler = \"fifo\"",
            &format!("scheduler = \"fifo\"\ndefault_depth_pkts = {depth}"),
        );
        run(&t)["flows"]["high_fifo"]["delay_ns"]["p50"]
            .as_f64()
            .unwrap()
    };
    let (small, large) = (p50(32), p50(128));
    assert!(close(large / small, 4.0, 0.15), "{small} -> {large}");
}

/// Generated rlsp-drr scenarios: k low classes with unequal quanta and a size mix, all
/// saturated, a high class within its rate. Analytical share of low class i:
/// (C - high) * quantum_i / sum(quanta).
#[test]
fn generated_rlsp_drr_shares_match_analysis() {
    let cases = [
        (2usize, 1e9, 0.3, 1u64),
        (4, 10e9, 0.5, 2),
        (7, 40e6, 0.2, 3),
        (3, 100e9, 0.6, 4),
    ];
    for (k, link, high_frac, seed) in cases {
        let dur = 20_000.0 * 1500.0 * 8.0 / link; // ~20k MTU times
        let mut t = format!(
            "duration_s = {dur}\nseed = {seed}\ninterval_s = {}\n[[port]]\nname = \"p\"\nrate_bps = {link}\nscheduler = \"rlsp-drr\"\n",
            dur / 10.0
        );
        t += &format!(
            "[[port.queue]]\nindex = 7\ndepth_pkts = 2000\nrate_Bps = {}\n",
            high_frac * 1.2 * link / 8.0
        );
        let quanta: Vec<u32> = (0..k).map(|i| 1500 + 1000 * i as u32).collect();
        for (i, q) in quanta.iter().enumerate() {
            t += &format!("[[port.queue]]\nindex = {i}\nquantum = {q}\ndepth_pkts = 200\n");
        }
        t += &format!("[[flow]]\nname = \"high\"\nport = \"p\"\nqueue = 7\nrate_bps = {}\npacket_bytes = [64, 1500]\npattern = \"poisson\"\n", high_frac * link);
        for i in 0..k {
            t += &format!("[[flow]]\nname = \"low{i}\"\nport = \"p\"\nqueue = {i}\nrate_bps = {link}\npacket_bytes = [64, 576, 1500]\n");
        }
        let r = run(&t);
        let high = r["flows"]["high"]["throughput_bps"].as_f64().unwrap();
        assert!(close(high, high_frac * link, 0.03), "k={k}: high {high}");
        assert_eq!(
            r["flows"]["high"]["loss_pct"].as_f64().unwrap(),
            0.0,
            "k={k}"
        );
        let rest = link - high;
        let sum_q: u32 = quanta.iter().sum();
        for (i, q) in quanta.iter().enumerate() {
            let got = r["flows"][format!("low{i}")]["throughput_bps"]
                .as_f64()
                .unwrap();
            let want = rest * f64::from(*q) / f64::from(sum_q);
            assert!(close(got, want, 0.03), "k={k} low{i}: {got} vs {want}");
        }
        assert!(r["ports"]["p"]["utilisation"].as_f64().unwrap() > 0.995);
    }
}

/// With only the high class active, rlsp-drr holds it to its rate; rlsp-drr-borrow lets it
/// take the idle link.
#[test]
fn borrow_fills_the_link_that_rlsp_drr_leaves_idle() {
    let t = |s: &str| {
        format!(
            "duration_s = 0.5\n[[port]]\nname = \"p\"\nrate_bps = 1e9\nscheduler = \"{s}\"\n[[port.queue]]\nindex = 7\nrate_Bps = 50e6\n\
             [[flow]]\nname = \"high\"\nport = \"p\"\nqueue = 7\nrate_bps = 2e9\npacket_bytes = 1500\n"
        )
    };
    let held = run(&t("rlsp-drr"))["flows"]["high"]["throughput_bps"]
        .as_f64()
        .unwrap();
    let borrowed = run(&t("rlsp-drr-borrow"))["flows"]["high"]["throughput_bps"]
        .as_f64()
        .unwrap();
    assert!(close(held, 400e6, 0.01), "{held}");
    assert!(close(borrowed, 1e9, 0.01), "{borrowed}");
}

#[test]
fn same_seed_same_result() {
    let a = run_file("hp_latency_100m.toml");
    let b = run_file("hp_latency_100m.toml");
    assert_eq!(a["flows"], b["flows"]);
}

/// scenarios/onoff_bucket_100m.toml: a bursty source that conforms to the high queue's (burst,
/// rate) sees no shaper delay (p99 within one 1500 B frame time at 100 Mb/s + 1 us, the low frame
/// on the wire), the default bucket absorbs most of each burst, and a bucket of one frame makes
/// every burst wait for the rate (the limiter without a bucket: > 1 ms), under strict and
/// rlsp-drr alike. Every variant delivers the source's 51 Mb/s in full.
#[test]
fn token_bucket_removes_shaper_delay_for_a_conforming_bursty_source() {
    let r = run_file("onoff_bucket_100m.toml");
    let p99 = |f: &str| r["flows"][f]["delay_ns"]["p99"].as_f64().unwrap();
    let frame_ns = 1500.0 * 8.0 / 100e6 * 1e9;
    assert!(p99("high_rlsp_conforming") <= frame_ns + 1000.0);
    assert!(p99("high_rlsp_default") < 0.5 * p99("high_rlsp_nobucket"));
    assert!(p99("high_rlsp_default") > p99("high_rlsp_conforming"));
    for f in ["high_rlsp_nobucket", "high_strict_nobucket"] {
        assert!(p99(f) > 1e6, "{f}: {}", p99(f));
    }
    for f in [
        "high_rlsp_conforming",
        "high_rlsp_default",
        "high_rlsp_nobucket",
        "high_strict_nobucket",
    ] {
        let bps = r["flows"][f]["throughput_bps"].as_f64().unwrap();
        assert!(close(bps, 51e6, 0.02), "{f}: {bps}");
        assert_eq!(r["flows"][f]["loss_pct"].as_f64().unwrap(), 0.0, "{f}");
    }
}

#[test]
fn strict_priority_starves_without_rates_and_when_rates_overbook_the_link() {
    let r = run_file("starvation_80m.toml");
    // while the high class sends (1-2 s, the first interval skipped)
    let mbps = |flow: &str, port: &str| phase(&r, 1.1, 2.0, flow, port).0 / 1e6;
    // no rates: the high class takes the whole link, both lower classes get nothing
    assert!(close(mbps("high-a", "strict-no-rates"), 80.0, 0.01));
    assert!(mbps("medium-a", "strict-no-rates") < 0.1 && mbps("low-a", "strict-no-rates") < 0.1);
    // 80/20/20 % = 120 %: the middle class keeps its 20 %, only the lowest starves
    assert!(close(mbps("high-b", "strict-120pct"), 64.0, 0.01));
    assert!(close(mbps("medium-b", "strict-120pct"), 16.0, 0.01));
    assert!(mbps("low-b", "strict-120pct") < 0.1);
    // RL-SP-DRR: the high class at its 60 %, the other two share the rest equally
    assert!(close(mbps("high-c", "rlsp-drr"), 48.0, 0.01));
    assert!(close(mbps("medium-c", "rlsp-drr"), 16.0, 0.02));
    assert!(close(mbps("low-c", "rlsp-drr"), 16.0, 0.02));
    // before the high class starts, every port is full with the two lower classes
    for port in ["strict-no-rates", "rlsp-drr"] {
        assert!(phase(&r, 0.1, 1.0, "low-a", port).1 > 0.99, "{port}");
    }
}

#[test]
fn drr_gives_the_high_class_round_delays_that_rlsp_drr_does_not() {
    let r = run_file("drr_round_delay_80m.toml");
    let delay = |flow: &str, q: &str| r["flows"][flow]["delay_ns"][q].as_f64().unwrap();
    // both send the high class's whole offer (40 % of the link)
    for flow in ["high-drr", "high-rlsp"] {
        assert!(
            r["flows"][flow]["loss_pct"].as_f64().unwrap() == 0.0,
            "{flow}"
        );
    }
    // a larger quantum is not priority: under DRR a high packet waits for the others' turns
    assert!(delay("high-drr", "p50") > 2.0 * delay("high-rlsp", "p50"));
    assert!(delay("high-drr", "p99") > 2.0 * delay("high-rlsp", "p99"));
}

/// scenarios/fifo_phase_10m.toml: equal constant-rate senders into a full tail-drop FIFO share it
/// by phase (one may get nothing), Poisson senders about equally; what the lab's best-effort runs
/// on the trees show in part (iperf's senders are close to constant-rate).
#[test]
fn constant_rate_senders_share_a_tail_drop_fifo_by_phase() {
    let r = run_file("fifo_phase_10m.toml");
    // after the third sender starts (10 s; the first interval skipped)
    let mbps = |flow: &str, port: &str| phase(&r, 11.0, 20.0, flow, port).0 / 1e6;
    let cbr: Vec<f64> = ["a-cbr", "b-cbr", "c-cbr"]
        .iter()
        .map(|f| mbps(f, "fifo-cbr"))
        .collect();
    let poisson: Vec<f64> = ["a-poisson", "b-poisson", "c-poisson"]
        .iter()
        .map(|f| mbps(f, "fifo-poisson"))
        .collect();
    let fair = 10.0 / 3.0;
    let (lo, hi) = (
        cbr.iter().cloned().fold(f64::INFINITY, f64::min),
        cbr.iter().cloned().fold(0.0, f64::max),
    );
    assert!(hi > 1.5 * fair && lo < 0.5 * fair, "{cbr:?}");
    assert!(poisson.iter().all(|&x| close(x, fair, 0.1)), "{poisson:?}");
    // the port is full either way: the unevenness is not lost capacity
    assert!(
        close(cbr.iter().sum::<f64>(), 10.0, 0.01)
            && close(poisson.iter().sum::<f64>(), 10.0, 0.02)
    );
}

#[test]
fn bmv2s_output_buffer_makes_the_rlsp_drr_high_class_wait_and_pacing_does_not() {
    // scenarios/bmv2_model_topo3_10m.toml: the thesis's failure. Under bmv2's model the DRR
    // queues fill the 128-packet output buffer (128 x 1.21 ms = 155 ms at 10 Mb/s) and the high
    // class waits behind it; under strict the lower classes' rates keep it short; lanes's paced
    // TM gives the high class the same few ms under both schedulers.
    let r = run_file("bmv2_model_topo3_10m.toml");
    let mean_ms = |flow: &str| r["flows"][flow]["delay_ns"]["mean"].as_f64().unwrap() / 1e6;
    let buffer_ms = 128.0 * 1512.0 * 8.0 / 10e6 * 1e3;
    let bmv2_rlsp = mean_ms("high_bmv2_rlspdrr");
    assert!(
        (buffer_ms..buffer_ms + 10.0).contains(&bmv2_rlsp),
        "bmv2 rlsp-drr high {bmv2_rlsp} ms"
    );
    for flow in [
        "high_bmv2_strict",
        "high_lanes_strict",
        "high_lanes_rlspdrr",
    ] {
        assert!(mean_ms(flow) < 10.0, "{flow}: {} ms", mean_ms(flow));
    }
    for flow in ["high_bmv2_rlspdrr", "high_lanes_rlspdrr"] {
        let f = &r["flows"][flow];
        assert_eq!(f["loss_pct"].as_f64(), Some(0.0), "{flow}");
        assert!(
            close(f["throughput_bps"].as_f64().unwrap(), 5e6, 0.02),
            "{flow}"
        );
    }
}

//! The event loop's timing in virtual time: the data plane, the loop's wake policy and batch
//! window as switch.rs uses them, with arrivals read only when the loop wakes (at a departure,
//! or for an arrival on a port it listens to). Port 4 (100 or 200 Mb/s) is saturated by two low
//! classes from ports 2 and 3; port 1 sends a sparse high class to it, and every high frame is
//! answered from port 4 back to port 1 (idle), as a ping is.

use lanes_p4::Program;
use lanes_switch::commands::execute;
use lanes_switch::wake::WakePolicy;
use lanes_switch::{BatchWindow, Dataplane, TmDefaults, TxOutcome, DEFAULT_BATCH_NS};
use lanes_tm::Scheduler;

const US: u64 = 1_000;
/// How long a 1514 B frame (1500 B of IP) lasts at `mbps`, as the port counts it.
fn frame_ns(mbps: u64) -> u64 {
    1514 * 8 * 1000 / mbps
}
/// Batch windows tried: the shortest, a long one as long as the port's pacing bound (the window
/// must not cost a leading frame its place: the loop wakes the window early), and the switch's
/// default, each port its own (484 us at port 4 at 100 Mb/s, 250 us at the 1 Gb/s ports).
const BATCHES: [BatchWindow; 3] = [
    BatchWindow::Fixed(DEFAULT_BATCH_NS),
    BatchWindow::Fixed(500 * US),
    BatchWindow::PerPort,
];

fn frame(src: u8, dst: u8, payload: usize) -> Vec<u8> {
    let total = (20 + payload) as u16;
    let mut f = vec![0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0xee, 0x08, 0x00];
    f.extend_from_slice(&[
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ]);
    f.extend_from_slice(&[10, 0, 1, src, 10, 0, 1, dst]);
    f.extend(std::iter::repeat_n(0xab, payload));
    f
}

fn switch(mbps: u64) -> Dataplane {
    let text = std::fs::read_to_string(format!(
        "{}/../../p4/tm_basic.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut dp = Dataplane::new(TmDefaults {
        rate_bps: 1e9,
        scheduler: Scheduler::RlspDrr,
        ..TmDefaults::default()
    });
    for port in 1..=3 {
        dp.add_port(port, None).unwrap();
    }
    dp.add_port(4, Some(mbps as f64 * 1e6)).unwrap();
    dp.set_program(Program::load(&text).unwrap());
    for cmd in [
        "table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 00:00:00:00:01:01 1",
        "table_add ipv4_lpm ipv4_forward 10.0.1.4/32 => 00:00:00:00:01:04 4",
        "table_add src_ip_prio set_priority 10.0.1.1/32 => 7 7500000 7000",
        "table_add src_ip_prio set_priority 10.0.1.2/32 => 6 0 7000",
        "table_add src_ip_prio set_priority 10.0.1.3/32 => 5 0 7000",
        "table_add src_ip_prio set_priority 10.0.1.4/32 => 7 7500000 7000",
    ] {
        execute(&mut dp, cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    dp
}

/// A chained ping-pong's two ends: how long port 4's host takes to answer, and h1 to send the
/// next message after an answer reached it.
#[derive(Clone, Copy)]
struct Chain {
    answer_ns: u64,
    think_ns: u64,
}

struct Arrival {
    at: u64,
    port: u32,
    frame: Vec<u8>,
}

/// What the loop handed to the kernel: when, on which port, and the frame.
struct Sent {
    at: u64,
    port: u32,
    frame: Vec<u8>,
}

/// The loop of switch.rs in virtual time, with no cost for a wake-up: sleep as the policy says,
/// take every frame that arrived by the wake-up in arrival order, then send what is due within
/// the batch window. A high frame sent to port 4 is answered by port 4 at once, or with a
/// `chain` its `answer_ns` later, and h1 sends its next high frame `think_ns` after each answer
/// reached it (a chained ping-pong, as MPI's small messages run). Returns what was sent and how
/// many times the loop woke.
fn run_loop(
    dp: &mut Dataplane,
    mut arrivals: Vec<Arrival>,
    until: u64,
    window: BatchWindow,
    chain: Option<Chain>,
) -> (Vec<Sent>, usize) {
    let mut policy = WakePolicy::new(4, window.shortest()).with_longest_window(window.longest());
    let mut wakes = 0;
    let mut sent = vec![];
    let mut now = 0;
    let mut next = 0; // arrivals[..next] have been read
    while now < until {
        arrivals[next..].sort_by_key(|a| a.at);
        let departure = dp.next_departure(now, window);
        if let Some((_, w)) = departure {
            policy.set_window(w);
        }
        let sleep = policy.sleep(now, departure.map(|(t, _)| t), false);
        let timer = sleep.timeout_ns.map_or(u64::MAX, |t| now + t);
        let woken_by = arrivals[next..]
            .iter()
            .find(|a| sleep.all_ports || policy.listened(a.port as usize - 1))
            .map_or(u64::MAX, |a| a.at);
        now = now.max(timer.min(woken_by));
        if now == u64::MAX {
            break;
        }
        wakes += 1;

        while next < arrivals.len() && arrivals[next].at <= now {
            let a = &arrivals[next];
            dp.ingress_frame(&a.frame, a.frame.len(), a.port, now);
            policy.note_frame(a.port as usize - 1, dp.last_rx_leads());
            next += 1;
        }
        let mut replies = vec![];
        dp.service_ahead(now, window, &mut |port, f| {
            if port == 4 && f[14 + 15] == 1 {
                replies.push(Arrival {
                    at: now + chain.map_or(0, |c| c.answer_ns),
                    port: 4,
                    frame: frame(4, 1, 56),
                });
            }
            if let (1, Some(c)) = (port, chain) {
                replies.push(Arrival {
                    at: now + c.think_ns,
                    port: 1,
                    frame: frame(1, 4, 56),
                });
            }
            sent.push(Sent {
                at: now,
                port,
                frame: f.to_vec(),
            });
            TxOutcome::Sent
        });
        if dp.leading_left_queued() | dp.top_class_waiting() {
            policy.note_leading_waiting();
        }
        arrivals.extend(replies);
    }
    (sent, wakes)
}

/// Low classes from ports 2 and 3 at 60 % of `mbps` each into port 4 (`mbps`), a 98 B high
/// frame from port 1 every `gap` ns, offset so that it falls at every phase of the port's frames.
fn load(mbps: u64, until: u64, gap: u64) -> Vec<Arrival> {
    let mut v = vec![];
    let low_gap = 1500 * 8 * 1_000 * 10 / (6 * mbps);
    for (port, phase) in [(2u32, 0), (3, low_gap / 2)] {
        let mut t = phase;
        while t < until {
            v.push(Arrival {
                at: t,
                port,
                frame: frame(port as u8, 4, 1500 - 20),
            });
            t += low_gap;
        }
    }
    let mut t = 3 * US;
    while t < until {
        v.push(Arrival {
            at: t,
            port: 1,
            frame: frame(1, 4, 56),
        });
        t += gap;
    }
    v
}

fn high_times(arrivals: &[Arrival], sent: &[Sent], from: u32, to: u32) -> Vec<(u64, u64)> {
    let src = from as u8;
    let ins: Vec<u64> = arrivals
        .iter()
        .filter(|a| a.port == from)
        .map(|a| a.at)
        .collect();
    let outs: Vec<u64> = sent
        .iter()
        .filter(|s| s.port == to && s.frame[14 + 12 + 3] == src)
        .map(|s| s.at)
        .collect();
    ins.into_iter().zip(outs).collect()
}

/// How long the sparse-ping runs last, and the pings' spacing: 10 ms apart plus 37 us, so the
/// arrivals sweep every phase of the low frames' departures.
const SPARSE_UNTIL: u64 = 200_000 * US;
const PING_GAP: u64 = 10_037 * US;

/// Sparse high pings from port 1 beside the low classes saturating port 4 (`mbps`) for
/// SPARSE_UNTIL: what the loop sent and how many times it woke.
fn sparse_pings(mbps: u64, window: BatchWindow) -> (Vec<Sent>, usize) {
    let mut dp = switch(mbps);
    let arrivals = load(mbps, SPARSE_UNTIL, PING_GAP);
    run_loop(&mut dp, arrivals, SPARSE_UNTIL, window, None)
}

#[test]
fn a_sparse_high_frame_leaves_within_one_frame_time_of_its_arrival_at_a_saturated_port() {
    for (mbps, window) in [100, 200].into_iter().flat_map(|m| BATCHES.map(|b| (m, b))) {
        let until = SPARSE_UNTIL;
        let arrivals = load(mbps, until, PING_GAP);
        let (sent, _) = sparse_pings(mbps, window);
        let pings = high_times(&arrivals, &sent, 1, 4);
        assert!(pings.len() >= 19, "{} pings sent", pings.len());
        for (arrived, left) in &pings {
            assert!(
                left - arrived <= frame_ns(mbps),
                "{mbps} Mb/s, window {window:?}: a high frame waited {} ns, a frame lasts {} ns",
                left - arrived,
                frame_ns(mbps)
            );
        }
        // the port stayed saturated: the pings took no line time from the low classes
        let low = sent.iter().filter(|s| s.port == 4).count() - pings.len();
        assert!(
            low as u64 >= until / frame_ns(mbps) - 20,
            "{low} low frames"
        );
    }
}

#[test]
fn an_answer_to_an_idle_port_leaves_as_it_arrives_while_another_port_is_saturated() {
    for window in BATCHES {
        let (sent, _) = sparse_pings(100, window);
        // every answer from port 4 to port 1 arrived when its ping left, and left then too
        let pings: Vec<u64> = sent
            .iter()
            .filter(|s| s.port == 4 && s.frame[14 + 12 + 3] == 1)
            .map(|s| s.at)
            .collect();
        let answers: Vec<u64> = sent.iter().filter(|s| s.port == 1).map(|s| s.at).collect();
        assert_eq!(pings.len(), answers.len());
        for (p, a) in pings.iter().zip(&answers) {
            assert_eq!(
                p,
                a,
                "the answer waited {} ns for a port with nothing queued",
                a - p
            );
        }
    }
}

#[test]
fn a_saturated_port_costs_one_wake_up_per_batch_window_not_per_frame() {
    for (mbps, window) in [100, 200].into_iter().flat_map(|m| BATCHES.map(|b| (m, b))) {
        let until = SPARSE_UNTIL;
        let (sent, wakes) = sparse_pings(mbps, window);
        // one wake-up per window (or per frame, if a frame lasts longer); at most three per ping
        // (its arrival, its departure if the port was not free within the window, its answer);
        // and one per low-class frame until the loop has seen that those only wait (the first
        // millisecond or two)
        let per_window = until / window.for_rate(mbps as f64 * 1e6).max(frame_ns(mbps));
        let pings = sent.iter().filter(|s| s.port == 1).count() as u64;
        assert!(
            wakes as u64 <= per_window + 3 * pings + 20,
            "{mbps} Mb/s, window {window:?}: {wakes} wake-ups for {} frames, {per_window} windows",
            sent.len()
        );
    }
}

#[test]
fn a_slow_port_beside_fast_ones_wakes_the_loop_once_per_its_own_window() {
    // port 4 at 100 Mb/s beside three 1 Gb/s ports: the window that follows each port's rate
    // gives port 4 four frames' time (484 us), where a window set by the fastest port (250 us)
    // woke the loop once per three frames
    let (sent, per_port) = sparse_pings(100, BatchWindow::PerPort);
    let (_, fastest) = sparse_pings(100, BatchWindow::Fixed(DEFAULT_BATCH_NS));
    let frames = sent.iter().filter(|s| s.port == 4).count();
    eprintln!("{frames} frames to port 4: {per_port} wake-ups per port, {fastest} with 250 us");
    assert!(
        per_port * 4 <= fastest * 3,
        "{per_port} wake-ups with each port's own window against {fastest} with 250 us"
    );
}

#[test]
fn saturating_low_classes_do_not_wake_the_loop_per_frame() {
    // the loop must not listen to ports whose frames only wait behind others
    let until = 50_000 * US;
    let mut dp = switch(100);
    let mut arrivals = load(100, until, u64::MAX / 4);
    arrivals.sort_by_key(|a| a.at);
    let mut policy = WakePolicy::new(4, DEFAULT_BATCH_NS);
    for a in &arrivals {
        dp.service_until(a.at, a.at, &mut |_, _| TxOutcome::Sent);
        dp.ingress_frame(&a.frame, a.frame.len(), a.port, a.at);
        policy.note_frame(a.port as usize - 1, dp.last_rx_leads());
    }
    assert!(!policy.listened(1) && !policy.listened(2));
}

/// Low classes as in [`load`]; the high class from port 1 in bursts of `burst` 98 B frames
/// 5 us apart (a sender that was descheduled and catches up), one burst every `gap` ns: well
/// within the class's rate, so only the port and the loop can hold a frame back.
fn bursty_load(mbps: u64, until: u64, gap: u64, burst: u64) -> Vec<Arrival> {
    let mut v: Vec<Arrival> = load(mbps, until, u64::MAX / 4)
        .into_iter()
        .filter(|a| a.port != 1)
        .collect();
    let mut t = 3 * US;
    while t < until {
        for k in 0..burst {
            v.push(Arrival {
                at: t + k * 5 * US,
                port: 1,
                frame: frame(1, 4, 56),
            });
        }
        t += gap;
    }
    v
}

/// The longest a high frame of a bursty high class waited between its arrival and its
/// departure, with the wake for the top class on or off, and the loop's wake-ups.
fn worst_high_wait(mbps: u64, window: BatchWindow, top_class: bool) -> (u64, usize) {
    let until = 100_000 * US;
    let arrivals = bursty_load(mbps, until, 1_037 * US, 4);
    let mut dp = switch(mbps);
    dp.set_wake_for_top_class(top_class);
    let (sent, wakes) = run_loop(
        &mut dp,
        bursty_load(mbps, until, 1_037 * US, 4),
        until,
        window,
        None,
    );
    let waits: Vec<u64> = high_times(&arrivals, &sent, 1, 4)
        .iter()
        .map(|(a, l)| l - a)
        .collect();
    assert!(waits.len() > 300, "{} high frames sent", waits.len());
    (waits.into_iter().max().unwrap(), wakes)
}

#[test]
fn a_bursty_high_class_waits_for_the_frames_ahead_not_for_the_next_batch_when_the_loop_wakes_for_it(
) {
    for (mbps, window) in [100, 200].into_iter().flat_map(|m| BATCHES.map(|b| (m, b))) {
        let (off, wakes_off) = worst_high_wait(mbps, window, false);
        let (on, wakes_on) = worst_high_wait(mbps, window, true);
        eprintln!(
            "{mbps} Mb/s, window {window:?}: worst high wait off {off} ns ({wakes_off} wake-ups), \
             on {on} ns ({wakes_on} wake-ups)"
        );
        // a high frame waits for the low frame in flight and the burst ahead of it, woken for
        // or not: the frame that led its burst keeps the loop's early wake-up due (before, an
        // arrival that woke the loop first cancelled it, and the burst waited up to a window)
        for (wait, how) in [(on, "on"), (off, "off")] {
            assert!(
                wait <= 2 * frame_ns(mbps),
                "{mbps} Mb/s, window {window:?}, waking for the top class {how}: a high frame waited {wait} ns"
            );
        }
    }
}

/// A chained ping-pong through a port saturated by the low classes, two messages in flight (as
/// MPI's iteration has: two small segments answered together): how many high frames were sent
/// to port 4 by `until`, and their mean wait (two arrive at 3 us; each answer sent to port 1
/// brings the next one `chain.think_ns` later). With one message in flight nothing else wakes
/// the loop early and the old loop's fault does not show.
fn chained_pingpong(mbps: u64, window: BatchWindow, chain: Chain, until: u64) -> (usize, u64) {
    let mut dp = switch(mbps);
    let mut arrivals = load(mbps, until, u64::MAX / 4); // the low classes and a first ping at 3 us
    arrivals.push(Arrival {
        at: 3 * US,
        port: 1,
        frame: frame(1, 4, 56),
    });
    let (sent, _) = run_loop(&mut dp, arrivals, until, window, Some(chain));
    let pings = sent
        .iter()
        .filter(|s| s.port == 4 && s.frame[14 + 12 + 3] == 1);
    let answered = sent
        .iter()
        .filter(|s| s.port == 1)
        .map(|s| s.at + chain.think_ns);
    let arrived = [3 * US, 3 * US].into_iter().chain(answered);
    let waits: Vec<u64> = pings.zip(arrived).map(|(s, a)| s.at - a).collect();
    (
        waits.len(),
        waits.iter().sum::<u64>() / waits.len().max(1) as u64,
    )
}

#[test]
fn a_chained_ping_pong_does_not_pay_for_the_batch_window() {
    // Before the early wake-up stayed due, an arrival that woke the loop first cancelled it:
    // at 100 Mb/s the two chains sent 2,348 high frames in 300 ms with a 250 us window against
    // 4,427 with none.
    let until = 300_000 * US;
    for mbps in [10, 100] {
        // the far end answering at once, or 100 us later as a host's stack and MPI do
        for answer_ns in [0, 100 * US] {
            let chain = Chain {
                answer_ns,
                think_ns: 100 * US,
            };
            let (n0, wait0) = chained_pingpong(mbps, BatchWindow::Fixed(0), chain, until);
            for window in BATCHES {
                let (n, wait) = chained_pingpong(mbps, window, chain, until);
                eprintln!("{mbps} Mb/s, answer {answer_ns} ns, window {window:?}: {n} round trips, mean wait {wait} ns (no window: {n0}, {wait0} ns)");
                assert!(
                    n * 100 >= n0 * 99 && wait <= wait0 + 5 * US,
                    "{mbps} Mb/s, answer {answer_ns} ns, window {window:?}: {n} round trips waiting \
                     {wait} ns on average, against {n0} and {wait0} ns with no window"
                );
            }
        }
    }
}

#[test]
fn a_chain_whose_far_end_takes_time_waits_about_a_low_frame_per_crossing_at_10_mbps() {
    // Work-conserving and not preemptive: once the high frame has left, the next low frame
    // starts before the answer to it is back, and the next high frame waits for all of it,
    // with or without a window (what a real 10 Mb/s port does too).
    let until = 300_000 * US;
    let chain = Chain {
        answer_ns: 100 * US,
        think_ns: 100 * US,
    };
    for window in [BatchWindow::Fixed(0), BatchWindow::Fixed(DEFAULT_BATCH_NS)] {
        let (n, wait) = chained_pingpong(10, window, chain, until);
        let frame = frame_ns(10);
        assert!(
            n > 100 && wait >= frame * 3 / 4 && wait <= frame,
            "window {window:?}: {n} high frames waiting {wait} ns on average; a low frame lasts {frame} ns"
        );
    }
}

#[test]
fn a_top_class_frame_left_queued_after_a_turn_is_reported_and_low_classes_are_not() {
    let mut dp = switch(200);
    let low = frame(2, 4, 1480);
    for _ in 0..20 {
        dp.ingress_frame(&low, low.len(), 2, 0);
    }
    dp.service_until(0, DEFAULT_BATCH_NS, &mut |_, _| TxOutcome::Sent);
    assert!(!dp.top_class_waiting(), "a backlog of low frames only");
    // two high frames behind the low backlog: reported while either is queued
    let high = frame(1, 4, 1480);
    let now = 10 * US;
    for _ in 0..2 {
        dp.ingress_frame(&high, high.len(), 1, now);
    }
    assert!(dp.top_class_waiting());
    let mut sent_high = 0;
    let mut t = now;
    while dp.top_class_waiting() {
        t = dp.next_deadline(t).expect("frames are queued");
        dp.service_until(t, t + DEFAULT_BATCH_NS, &mut |_, f| {
            sent_high += usize::from(f[14 + 12 + 3] == 1);
            TxOutcome::Sent
        });
    }
    assert_eq!(sent_high, 2, "reported until both had left");
}

/// A dense high class, as the lab's star PROACTIVE runs have: full frames from port 1 (source
/// 10.0.1.5, not answered) at half of port 4's rate, the class limited to 60 %, beside the low
/// classes saturating port 4. Every high frame leads its port. Returns what the loop sent, when
/// each high frame arrived, and how many times the loop woke.
fn dense_high(mbps: u64, until: u64) -> (Vec<Sent>, Vec<u64>, usize) {
    let mut dp = switch(mbps);
    let rate = mbps * 600_000;
    let cmd = format!("table_add src_ip_prio set_priority 10.0.1.5/32 => 7 {rate} 7000");
    execute(&mut dp, &cmd).unwrap();
    let mut arrivals: Vec<Arrival> = load(mbps, until, u64::MAX / 4)
        .into_iter()
        .filter(|a| a.port != 1)
        .collect();
    let mut high = vec![];
    let mut t = 3 * US;
    while t < until {
        arrivals.push(Arrival {
            at: t,
            port: 1,
            frame: frame(5, 4, 1500 - 20),
        });
        high.push(t);
        t += 2 * frame_ns(mbps);
    }
    let (sent, wakes) = run_loop(&mut dp, arrivals, until, BatchWindow::PerPort, None);
    (sent, high, wakes)
}

#[test]
fn a_dense_high_class_wakes_the_loop_once_per_frame_and_each_leaves_at_once() {
    for mbps in [100, 200] {
        let until = 200_000 * US;
        let (sent, high, wakes) = dense_high(mbps, until);
        let out: Vec<u64> = sent
            .iter()
            .filter(|s| s.port == 4 && s.frame[14 + 15] == 5)
            .map(|s| s.at)
            .collect();
        assert_eq!(out.len(), high.len(), "{mbps} Mb/s: every high frame sent");
        let waits: Vec<u64> = high.iter().zip(&out).map(|(a, l)| l - a).collect();
        let late = waits.iter().filter(|&&w| w > frame_ns(mbps)).count();
        eprintln!(
            "{mbps} Mb/s: {} high frames, {wakes} wake-ups, {late} waited over a frame time",
            high.len()
        );
        // each arrival wakes the loop and its turn sends the frame with the window behind it: no
        // second turn a frame time later (after every leading frame the loop used to wake again
        // a window before the next departure, to send one low frame); none is held past a frame
        // time but the first, before the loop learns that the low classes' ports only wait
        assert!(
            wakes <= high.len() + high.len() / 20 + 20,
            "{mbps} Mb/s: {wakes} wake-ups for {} high frames",
            high.len()
        );
        assert!(
            late <= 2,
            "{mbps} Mb/s: {late} high frames waited over a frame time"
        );
    }
}

//! The switch process's data plane thread: one epoll loop over the port sockets and an eventfd
//! for control-plane changes. It sleeps (epoll with a nanosecond timeout) until the next moment
//! a port may send; while that moment is close, only arrivals that could leave before it wake
//! it (wake.rs), the others are read at the departure, and the frames due within the batch
//! window leave together, so a saturated port costs one wake-up per batch sent. Arrivals are
//! read from each port's receive ring (ring.rs).

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::batch_window::BatchWindow;
use crate::controller_wait::wait_then_take;
use crate::dataplane::{Dataplane, TmDefaults, TxOutcome, MAX_PORTS};
use crate::pcap::PcapWriter;
use crate::port::{Port, RxMode};
use crate::reply_poll::ReplyPoll;
use crate::sys::{self, Epoll, MsgScratch, Waker};
use crate::wake::WakePolicy;

#[derive(Clone, Debug)]
/// One port to open: its number, interface and line rate.
pub struct PortSpec {
    /// The port number (bmv2's -i NUM@IFACE).
    pub num: u32,
    /// The network interface it sends and receives on.
    pub ifname: String,
    /// Its line rate in bits per second (None: the default).
    pub rate_bps: Option<f64>,
}

#[derive(Clone, Debug, Default)]
/// What `Switch::start` opens and how.
pub struct SwitchOptions {
    /// The ports.
    pub ports: Vec<PortSpec>,
    /// bmv2's --cpu-port: P4Runtime PacketIn/PacketOut go through this port number.
    pub cpu_port: Option<u32>,
    /// TM settings of every port.
    pub tm: TmDefaults,
    /// Write IFACE_in.pcap and IFACE_out.pcap per port here (bmv2's --pcap).
    pub pcap_dir: Option<PathBuf>,
    /// Frames due within a port's batch window of a wake-up leave together with the one due
    /// then (batch_window.rs, [`DEFAULT_BATCH_NS`]).
    pub batch: BatchWindow,
    /// The ports' sockets: AF_PACKET or AF_XDP.
    pub rx_mode: RxMode,
    /// After its last frame the loop looks at the receive rings this long before it sleeps
    /// (0: it sleeps at once); see `WakePolicy::with_poll`.
    pub poll_ns: u64,
    /// With nothing queued, the loop looks at the rings for the answer of a port it has just
    /// sent to, at most this long, where that port answered that quickly before (0: never);
    /// see reply_poll.rs.
    pub reply_poll_ns: u64,
    /// Wake for arrivals of a port's top strict class even behind a few of their class (see
    /// `Dataplane::set_wake_for_top_class`).
    pub wake_top_class: bool,
    /// Wake a window before the next departure while a port's top strict class still holds a
    /// frame after a turn (see `Dataplane::top_class_waiting`); off, only arrivals that lead
    /// their port wake the loop early.
    pub wake_after_turn: bool,
}

struct Shared {
    dp: Mutex<Dataplane>,
    waker: Waker,
    stop: AtomicBool,
    /// Signalled when frames for the CPU port (PacketIn) or digests are waiting.
    to_controller: Condvar,
}

/// A running switch: its ports' sockets and a data plane thread; stopped on drop.
pub struct Switch {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

const WAKER: u64 = u64::MAX;
/// Frames taken from one port's receive ring per loop turn (in arrival order across ports), so
/// one busy port cannot starve the others and a flood cannot keep the loop from sending (nor
/// fill a queue of bmv2's default 64 packets before a frame has left).
const RX_BATCH: usize = 64;
/// The data plane's clock runs this far ahead of the monotonic clock: the loop sleeps until a
/// frame is due minus this much, so a wake-up that comes a little late (the kernel's timer, a
/// busy VM) still sends on time, and one that comes on time sends at most this early. It
/// replaces polling the last microseconds before a departure, which cost a core its frames.
const SEND_AHEAD_NS: u64 = 20_000;
/// The shortest batch window a port gets by default (batch_window.rs), and the one fixed window
/// the tests use. Every wake-up of the data plane thread costs tens of microseconds on a virtual
/// machine (the thread sleeps and is woken, the frames it sends wake their receivers); sending
/// the frames due in the next 250 us together makes a saturated 200 Mb/s port cost one wake-up
/// per five 1500 B frames, at the price of frames leaving up to 250 us early (never late). A
/// frame that leads its port does not wait for the window: its arrival wakes the loop, which
/// then wakes a window early (wake.rs); a frame queued behind another of its class is read only
/// at the next turn, up to a window later.
pub const DEFAULT_BATCH_NS: u64 = crate::batch_window::MIN_WINDOW_NS;

/// The data plane's time: monotonic nanoseconds, [`SEND_AHEAD_NS`] ahead.
pub fn dataplane_now_ns() -> u64 {
    sys::now_ns() + SEND_AHEAD_NS
}

struct Io {
    sockets: Vec<(u32, Port)>,
    by_port: Vec<u16>,
    pcap: Vec<Option<(PcapWriter, PcapWriter)>>,
}

impl Switch {
    /// Open every port (errors name the interface) and start the data plane thread.
    pub fn start(opts: SwitchOptions) -> io::Result<Switch> {
        let mut dp = Dataplane::new(opts.tm.clone());
        let mut io = Io {
            sockets: vec![],
            by_port: vec![u16::MAX; MAX_PORTS],
            pcap: vec![],
        };
        for p in &opts.ports {
            dp.add_port(p.num, p.rate_bps)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.0))?;
            let (sock, how) = Port::open(&p.ifname, opts.rx_mode).map_err(|e| {
                io::Error::new(e.kind(), format!("port {}@{}: {e}", p.num, p.ifname))
            })?;
            if let Some(how) = how {
                eprintln!("lanes switch: port {}@{}: {how}", p.num, p.ifname);
            }
            io.by_port[p.num as usize] = io.sockets.len() as u16;
            io.sockets.push((p.num, sock));
            io.pcap.push(match &opts.pcap_dir {
                Some(dir) => Some((
                    PcapWriter::create(&dir.join(format!("{}_in.pcap", p.ifname)))?,
                    PcapWriter::create(&dir.join(format!("{}_out.pcap", p.ifname)))?,
                )),
                None => None,
            });
        }
        dp.set_wake_for_top_class(opts.wake_top_class);
        if let Some(cpu) = opts.cpu_port {
            dp.set_cpu_port(cpu)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.0))?;
        }
        let shared = Arc::new(Shared {
            dp: Mutex::new(dp),
            waker: Waker::new()?,
            stop: AtomicBool::new(false),
            to_controller: Condvar::new(),
        });
        let s2 = shared.clone();
        let thread = std::thread::Builder::new()
            .name("lanes-dataplane".into())
            .spawn(move || run(&s2, io, &opts))?;
        Ok(Switch {
            shared,
            thread: Some(thread),
        })
    }

    /// Run `f` on the data plane (tables, TM settings, counters), then let the loop re-plan.
    pub fn with<R>(&self, f: impl FnOnce(&mut Dataplane) -> R) -> R {
        let r = f(&mut lock(&self.shared));
        self.shared.waker.wake();
        r
    }

    /// Frames sent to the CPU port, waiting up to `timeout` for the first one. Unlike `with`,
    /// this does not wake the data plane: a controller waiting for PacketIns costs it nothing.
    pub fn wait_packet_ins(&self, timeout: Duration) -> Vec<Vec<u8>> {
        self.wait_for(
            timeout,
            Dataplane::has_packet_ins,
            Dataplane::take_packet_ins,
        )
    }

    /// Digests ingress generated, waiting up to `timeout` for the first one (as
    /// `wait_packet_ins`).
    pub fn wait_digests(&self, timeout: Duration) -> Vec<lanes_p4::Digest> {
        self.wait_for(timeout, Dataplane::has_digests, Dataplane::take_digests)
    }

    fn wait_for<T>(
        &self,
        timeout: Duration,
        ready: fn(&Dataplane) -> bool,
        take: fn(&mut Dataplane) -> Vec<T>,
    ) -> Vec<T> {
        let sh = &self.shared;
        let guard = lock(sh);
        wait_then_take(
            guard,
            &sh.to_controller,
            &sh.stop,
            timeout,
            |d| d,
            ready,
            take,
        )
    }

    /// Whether the data plane thread is still running.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stop the loop and join it; returns the loop's error if it failed.
    pub fn stop(&mut self) -> io::Result<()> {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.waker.wake();
        self.shared.to_controller.notify_all();
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("data plane thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, Dataplane> {
    // a panic elsewhere must not take the data plane down with it
    shared.dp.lock().unwrap_or_else(|e| e.into_inner())
}

fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Looks at the receive rings (memory shared with the kernel: no system call) until a frame is
/// in one or the monotonic clock passes `until`. Whether a frame came.
fn poll_rings(io: &mut Io, until: u64) -> bool {
    loop {
        if io
            .sockets
            .iter_mut()
            .any(|(_, s)| s.head_arrival_ns().is_some())
        {
            return true;
        }
        if dataplane_now_ns() >= until {
            return false;
        }
        std::hint::spin_loop();
    }
}

/// A TX batch for one socket: frames copied out of the egress buffer, sent with one sendmmsg.
#[derive(Default)]
struct TxBatch {
    buf: Vec<u8>,
    frames: Vec<(usize, usize)>,
}

fn run(shared: &Shared, mut io: Io, opts: &SwitchOptions) -> io::Result<()> {
    sys::set_timer_slack_ns(1);
    let batch = opts.batch;
    let mut policy = WakePolicy::new(io.sockets.len(), batch.shortest())
        .with_longest_window(batch.longest())
        .with_poll(opts.poll_ns);
    let mut replies = ReplyPoll::new(io.sockets.len(), opts.reply_poll_ns);
    // `all` wakes for every arrival and control; `near` for control and the arrivals of the
    // ports the policy listens to, while a departure is close (see wake.rs)
    let all = Epoll::new()?;
    let near = Epoll::new()?;
    all.add(shared.waker.raw(), WAKER)?;
    near.add(shared.waker.raw(), WAKER)?;
    for (i, (_, s)) in io.sockets.iter().enumerate() {
        all.add(s.raw(), i as u64)?;
        near.add(s.raw(), i as u64)?;
    }
    let mut events = Vec::with_capacity(64);
    let mut scratch = MsgScratch::new(RX_BATCH);
    let mut error_reported = vec![false; io.sockets.len()];
    // sockets no longer watched at all (their interface hung up)
    let mut gone = vec![false; io.sockets.len()];
    let mut tx: Vec<TxBatch> = io.sockets.iter().map(|_| TxBatch::default()).collect();
    let mut more_rx = false;
    let mut taken = vec![0usize; io.sockets.len()];
    // frames taken from each ring since it was last seen empty (over turns, when a batch is full)
    let mut backlog = vec![0u64; io.sockets.len()];
    let mut heads: Vec<Option<u64>> = vec![None; io.sockets.len()];
    let result = loop {
        if shared.stop.load(Ordering::SeqCst) {
            break Ok(());
        }
        let now = dataplane_now_ns();
        let next = lock(shared).next_departure(now, batch);
        let deadline = next.map(|(t, _)| t);
        if let Some((_, window)) = next {
            policy.set_window(window);
        }
        let mut sleep = policy.sleep(now, deadline, more_rx);
        let look = policy.poll_until(now, deadline);
        let look = look.max(replies.poll_until(now, deadline));
        // whether the loop looked at the rings instead of sleeping, and a frame ended it
        let mut looked = None;
        if let Some(until) = look.filter(|_| !more_rx) {
            let answered = poll_rings(&mut io, until);
            if answered {
                sleep.timeout_ns = Some(0);
            }
            looked = Some(answered);
        }
        let set = if sleep.all_ports { &all } else { &near };
        if let Err(e) = set.wait(&mut events, sleep.timeout_ns) {
            break Err(e);
        }
        // what arrived meanwhile is in the rings: no need to ask which sockets are readable;
        // but a socket whose interface went down reports an error until it is taken (else the
        // loop would spin, at real-time priority in the lab)
        for ev in &events {
            let (token, flags) = (ev.u64, ev.events);
            if token == WAKER {
                shared.waker.ack();
            } else if flags & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 {
                let (num, sock) = &io.sockets[token as usize];
                let why = sock.take_error();
                if flags & libc::EPOLLHUP as u32 != 0 || why.is_none() {
                    // nothing to take: stop watching it rather than wake for it forever
                    let _ = all.delete(sock.raw());
                    let _ = near.delete(sock.raw());
                    gone[token as usize] = true;
                }
                if !std::mem::replace(&mut error_reported[token as usize], true) {
                    eprintln!(
                        "lanes switch: port {num}: {}",
                        why.map_or("hung up".into(), |e| e.to_string())
                    );
                }
            }
        }
        let mut dp = lock(shared);
        if let Some(answered) = looked {
            dp.event_loop.looks += 1;
            dp.event_loop.looks_answered += u64::from(answered);
        }
        // what ended the wait (a look that a frame ended is counted above)
        if more_rx {
            dp.event_loop.woken_by_backlog += 1;
        } else if looked != Some(true) {
            let mut arrival = false;
            for ev in events.iter().filter(|e| e.u64 != WAKER) {
                dp.note_rx_wakeup(io.sockets[ev.u64 as usize].0);
                arrival = true;
            }
            let counts = &mut dp.event_loop;
            if arrival {
                counts.woken_by_arrival += 1;
            } else if events.is_empty() {
                counts.woken_by_timer += 1;
            } else {
                counts.woken_by_control += 1;
            }
        }
        let now = dataplane_now_ns();
        // frames are taken in the order they arrived, across ports, as a switch that is not
        // woken in batches would see them: taking one port's frames first would let that port
        // fill a shared queue before the others are read, and any fixed order gives the slot a
        // departure frees to the same port every time (two senders at line rate into one full
        // queue: one keeps all of it, the other gets nothing)
        more_rx = false;
        for (i, (num, sock)) in io.sockets.iter_mut().enumerate() {
            taken[i] = 0;
            heads[i] = sock.head_arrival_ns();
            if heads[i].is_none() && backlog[i] > 0 {
                dp.note_rx_backlog(*num, std::mem::take(&mut backlog[i]));
            }
        }
        // each frame reads one ring's next head, not every ring's
        while let Some((_, i)) = heads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (t, i)))
            .min()
        {
            let (num, sock) = &mut io.sockets[i];
            let Some((frame, len)) = sock.peek() else {
                heads[i] = None;
                dp.note_rx_backlog(*num, std::mem::take(&mut backlog[i]));
                continue;
            };
            if let Some((pin, _)) = io.pcap[i].as_mut() {
                let _ = pin.write(wall_ns(), frame);
            }
            if taken[i] == 0 {
                replies.note_taken(i, now);
            }
            dp.ingress_frame(frame, len, *num, now);
            if let Some(listen) = policy.note_frame(i, dp.last_rx_leads()) {
                if !gone[i] {
                    let _ = if listen {
                        near.add(sock.raw(), i as u64)
                    } else {
                        near.delete(sock.raw())
                    };
                }
            }
            sock.release();
            taken[i] += 1;
            backlog[i] += 1;
            // a port's full batch: more may be waiting
            more_rx |= taken[i] == RX_BATCH;
            heads[i] = (taken[i] < RX_BATCH)
                .then(|| sock.head_arrival_ns())
                .flatten();
            if heads[i].is_none() && taken[i] < RX_BATCH {
                dp.note_rx_backlog(*num, std::mem::take(&mut backlog[i]));
            }
        }
        let Io {
            sockets,
            by_port,
            pcap,
        } = &mut io;
        // the clock as read before the arrivals: taking them lasts microseconds, the window is
        // hundreds, and the clock reads were 8 % of this thread's profile on a VM (RESULTS.md)
        dp.service_ahead(now, batch, &mut |port, frame| {
            let i = usize::from(by_port[port as usize]);
            let b = &mut tx[i];
            b.frames.push((b.buf.len(), frame.len()));
            b.buf.extend_from_slice(frame);
            TxOutcome::Pending
        });
        // (both asked every turn: the first forgets the turn's leading frames)
        let leading_waiting = dp.leading_left_queued();
        if leading_waiting || (opts.wake_after_turn && dp.top_class_waiting()) {
            policy.note_leading_waiting();
        }
        if dp.has_packet_ins() || dp.has_digests() {
            shared.to_controller.notify_all();
        }
        let mut tx_any = false;
        for (i, b) in tx.iter_mut().enumerate() {
            if b.frames.is_empty() {
                continue;
            }
            tx_any = true;
            // sendmmsg stops at the first frame the kernel refuses: count it, go on after it;
            // the counters and the output capture hold what the kernel took
            let mut rest = &b.frames[..];
            while !rest.is_empty() {
                match sockets[i].1.send_many(&b.buf, rest, &mut scratch) {
                    Ok(n) if n > 0 => {
                        let bytes = rest[..n].iter().map(|&(_, len)| len as u64).sum();
                        dp.tx_sent(sockets[i].0, n as u64, bytes);
                        if let Some((_, pout)) = pcap[i].as_mut() {
                            for &(off, len) in &rest[..n] {
                                let _ = pout.write(wall_ns(), &b.buf[off..off + len]);
                            }
                        }
                        rest = &rest[n..];
                        // a frame went out: its host may answer
                        replies.note_sent(i, now);
                    }
                    _ => {
                        dp.tx_refused(sockets[i].0, 1);
                        rest = &rest[1..];
                    }
                }
            }
            b.frames.clear();
            b.buf.clear();
        }
        let (sent, took) = (tx_any, taken.iter().any(|&n| n > 0));
        let active = sent || took;
        let counts = &mut dp.event_loop;
        counts.turns += 1;
        counts.turns_sent += u64::from(sent);
        counts.turns_rx_only += u64::from(took && !sent);
        counts.turns_idle += u64::from(!took && !sent);
        if active {
            policy.note_activity(now);
        }
    };
    for (pin, pout) in io.pcap.iter_mut().flatten() {
        pin.flush()?;
        pout.flush()?;
    }
    result
}

//! The switch process's data plane thread: one epoll loop over the port sockets, a timer for
//! the next moment a port may send, and an eventfd for control-plane changes.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::dataplane::MAX_FRAME;
use crate::dataplane::{Dataplane, TmDefaults, MAX_PORTS};
use crate::pcap::PcapWriter;
use crate::sys::{self, Epoll, MsgScratch, PacketSocket, Timer, Waker};

#[derive(Clone, Debug)]
pub struct PortSpec {
    pub num: u32,
    pub ifname: String,
    pub rate_bps: Option<f64>,
}

#[derive(Clone, Debug, Default)]
pub struct SwitchOptions {
    pub ports: Vec<PortSpec>,
    /// bmv2's --cpu-port: P4Runtime PacketIn/PacketOut go through this port number.
    pub cpu_port: Option<u32>,
    pub tm: TmDefaults,
    pub pcap_dir: Option<PathBuf>,
}

struct Shared {
    dp: Mutex<Dataplane>,
    waker: Waker,
    stop: AtomicBool,
    /// Signalled when frames for the CPU port (PacketIn) are waiting.
    packet_ins: Condvar,
}

pub struct Switch {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

const WAKER: u64 = u64::MAX;
const TIMER: u64 = u64::MAX - 1;
/// Frames taken from one socket per loop turn (one recvmmsg), so one busy port cannot starve
/// the others.
const RX_BATCH: usize = 64;
/// Bytes per receive cell: a frame longer than this arrives truncated and is dropped as oversize.
const RX_STRIDE: usize = MAX_FRAME;
/// A send due within this many nanoseconds is waited for by polling rather than a timer.
const SPIN_NS: u64 = 20_000;

struct Io {
    sockets: Vec<(u32, PacketSocket)>,
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
            let sock = PacketSocket::open(&p.ifname).map_err(|e| {
                io::Error::new(e.kind(), format!("port {}@{}: {e}", p.num, p.ifname))
            })?;
            io.by_port[p.num as usize] = io.sockets.len() as u16;
            io.sockets.push((p.num, sock));
            io.pcap.push(match &opts.pcap_dir {
                Some(dir) => Some((
                    PcapWriter::create(&dir.join(format!("{}_in.pcap", p.num)))?,
                    PcapWriter::create(&dir.join(format!("{}_out.pcap", p.num)))?,
                )),
                None => None,
            });
        }
        if let Some(cpu) = opts.cpu_port {
            dp.set_cpu_port(cpu)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.0))?;
        }
        let shared = Arc::new(Shared {
            dp: Mutex::new(dp),
            waker: Waker::new()?,
            stop: AtomicBool::new(false),
            packet_ins: Condvar::new(),
        });
        let s2 = shared.clone();
        let thread = std::thread::Builder::new()
            .name("lanes-dataplane".into())
            .spawn(move || run(&s2, io))?;
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
        let deadline = Instant::now() + timeout;
        let mut dp = lock(&self.shared);
        while !dp.has_packet_ins() && !self.shared.stop.load(Ordering::SeqCst) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            dp = match self.shared.packet_ins.wait_timeout(dp, left) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        dp.take_packet_ins()
    }

    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stop the loop and join it; returns the loop's error if it failed.
    pub fn stop(&mut self) -> io::Result<()> {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.waker.wake();
        self.shared.packet_ins.notify_all();
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

/// A TX batch for one socket: frames copied out of the egress buffer, sent with one sendmmsg.
#[derive(Default)]
struct TxBatch {
    buf: Vec<u8>,
    frames: Vec<(usize, usize)>,
}

fn run(shared: &Shared, mut io: Io) -> io::Result<()> {
    sys::set_timer_slack_ns(1);
    let epoll = Epoll::new()?;
    let mut timer = Timer::new()?;
    epoll.add(shared.waker.raw(), WAKER)?;
    epoll.add(timer.raw(), TIMER)?;
    for (i, (_, s)) in io.sockets.iter().enumerate() {
        epoll.add(s.raw(), i as u64)?;
    }
    let mut events = Vec::with_capacity(64);
    let mut readable = vec![false; io.sockets.len()];
    let mut scratch = MsgScratch::new(RX_BATCH);
    let mut rx_buf = vec![0u8; RX_BATCH * RX_STRIDE];
    let mut rx_lens = [0usize; RX_BATCH];
    let mut tx: Vec<TxBatch> = io.sockets.iter().map(|_| TxBatch::default()).collect();
    let mut more_rx = false;
    let result = loop {
        if shared.stop.load(Ordering::SeqCst) {
            break Ok(());
        }
        let now = sys::now_ns();
        // Due now or very soon, or frames still waiting: poll instead of sleeping, since a
        // timer wake-up costs more than the wait (this only spins while there is traffic).
        let timeout = match lock(shared).next_deadline(now) {
            _ if more_rx => 0,
            Some(d) if d <= now + SPIN_NS => 0,
            Some(d) => {
                timer.set(Some(d))?;
                -1
            }
            None => -1,
        };
        if let Err(e) = epoll.wait(&mut events, timeout) {
            break Err(e);
        }
        for ev in &events {
            match ev.u64 {
                WAKER => shared.waker.ack(),
                TIMER => timer.ack(),
                i => readable[i as usize] = true,
            }
        }
        let mut dp = lock(shared);
        let now = sys::now_ns();
        more_rx = false;
        for (i, (num, sock)) in io.sockets.iter().enumerate() {
            if !std::mem::take(&mut readable[i]) {
                continue;
            }
            let got = sock
                .recv_many(&mut rx_buf, RX_STRIDE, &mut rx_lens, &mut scratch)
                .unwrap_or(0);
            for (k, &len) in rx_lens[..got].iter().enumerate() {
                let cell = &rx_buf[k * RX_STRIDE..(k + 1) * RX_STRIDE];
                let frame = &cell[..len.min(RX_STRIDE)];
                if let Some((pin, _)) = io.pcap[i].as_mut() {
                    let _ = pin.write(wall_ns(), frame);
                }
                dp.ingress_frame(frame, len, *num, now);
            }
            // a full batch: more may be waiting (epoll is level-triggered, but polling is cheaper)
            more_rx |= got == RX_BATCH;
        }
        let Io {
            sockets,
            by_port,
            pcap,
        } = &mut io;
        dp.service(sys::now_ns(), &mut |port, frame| {
            let i = usize::from(by_port[port as usize]);
            if let Some((_, pout)) = pcap[i].as_mut() {
                let _ = pout.write(wall_ns(), frame);
            }
            let b = &mut tx[i];
            b.frames.push((b.buf.len(), frame.len()));
            b.buf.extend_from_slice(frame);
            true
        });
        if dp.has_packet_ins() {
            shared.packet_ins.notify_all();
        }
        for (i, b) in tx.iter_mut().enumerate() {
            if b.frames.is_empty() {
                continue;
            }
            // sendmmsg stops at the first frame the kernel refuses: count it, go on after it
            let mut rest = &b.frames[..];
            while !rest.is_empty() {
                match sockets[i].1.send_many(&b.buf, rest, &mut scratch) {
                    Ok(n) if n > 0 => rest = &rest[n..],
                    _ => {
                        dp.tx_failed(sockets[i].0, 1, rest[0].1 as u64);
                        rest = &rest[1..];
                    }
                }
            }
            b.frames.clear();
            b.buf.clear();
        }
    };
    for (pin, pout) in io.pcap.iter_mut().flatten() {
        pin.flush()?;
        pout.flush()?;
    }
    result
}

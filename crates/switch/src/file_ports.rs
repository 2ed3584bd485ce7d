//! bmv2's `--use-files` mode: every port is a pair of pcap files instead of an interface. Port
//! `N@NAME` reads `NAME_in.pcap` and writes what it sends to `NAME_out.pcap`, as simple_switch
//! does; the input may be a FIFO that a test driver fills while the switch runs.
//!
//! There is no wire, so there is no pacing: each frame read goes through ingress, the TM and
//! egress at once, and everything it leads to (clones, multicast copies, recirculations) is
//! written before the next frame is read. Inputs are merged as bmv2's pcap reader merges them:
//! the switch holds the next record of every input (waiting for it while an input is open and
//! has none) and takes the earliest timestamp first, the first input on a tie. Frames of any
//! length are carried, even shorter than an Ethernet header (they could not cross a veth).
//! A frame the pipeline drops is not written.

use std::fs::File;
use std::io::{self, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::controller_wait::wait_then_take;
use crate::dataplane::{Dataplane, TmDefaults, TxOutcome};
use crate::pcap::PcapWriter;
use crate::pcap_reader::{PcapReader, Record};
use crate::switch::dataplane_now_ns;

/// One file port: its number and the name its files are made from.
#[derive(Clone, Debug)]
pub struct FilePort {
    /// The port number (bmv2's -i NUM@NAME).
    pub num: u32,
    /// `NAME_in.pcap` is read, `NAME_out.pcap` written (relative to the working directory).
    pub name: String,
}

/// What `FileSwitch::start` opens and how.
#[derive(Clone, Debug, Default)]
pub struct FileSwitchOptions {
    /// The ports, opened in this order (a driver writing FIFOs opens them in the same order).
    pub ports: Vec<FilePort>,
    /// bmv2's --cpu-port.
    pub cpu_port: Option<u32>,
    /// TM settings of every port.
    pub tm: TmDefaults,
    /// Seconds to wait after opening the inputs before the first frame is processed.
    pub wait: Duration,
}

/// A deadline further than this past the clock means a queue that will never send (a rate of
/// zero): its packets stay queued rather than the clock jumping there.
const FAR_FUTURE_NS: u64 = 60 * 1_000_000_000;

struct State {
    dp: Dataplane,
    outputs: Vec<(u32, PcapWriter)>,
    /// The data plane's clock in this mode: real time, or later when queues were drained ahead
    /// of it, so it never runs backwards.
    now_ns: u64,
}

impl State {
    fn now(&mut self) -> u64 {
        self.now_ns = self.now_ns.max(dataplane_now_ns());
        self.now_ns
    }

    /// Send everything queued, moving the clock to each departure, writing each frame.
    fn drain(&mut self) {
        loop {
            let now = self.now();
            let State { dp, outputs, .. } = self;
            dp.service(now, &mut |port, frame| {
                let Some((_, w)) = outputs.iter_mut().find(|(n, _)| *n == port) else {
                    return TxOutcome::Refused;
                };
                match w.write(wall_ns(), frame).and_then(|()| w.flush()) {
                    Ok(()) => TxOutcome::Sent,
                    Err(_) => TxOutcome::Refused,
                }
            });
            match self.dp.next_deadline(now) {
                Some(d) if d <= dataplane_now_ns().saturating_add(FAR_FUTURE_NS) => {
                    self.now_ns = d.max(now + 1)
                }
                _ => break,
            }
        }
    }
}

struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
    failed: Mutex<Option<io::Error>>,
    to_controller: Condvar,
}

/// A switch whose ports are pcap files; its reader thread feeds the data plane once
/// [`FileSwitch::start_reading`] is called (after the program and its entries are in place).
pub struct FileSwitch {
    shared: Arc<Shared>,
    go: Mutex<Option<mpsc::Sender<()>>>,
}

impl FileSwitch {
    /// Create every port's output file (errors name it) and start reading the inputs.
    pub fn start(opts: FileSwitchOptions) -> io::Result<FileSwitch> {
        let mut dp = Dataplane::new(opts.tm.clone());
        let mut outputs = vec![];
        for p in &opts.ports {
            dp.add_port(p.num, None)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.0))?;
            let path = format!("{}_out.pcap", p.name);
            let w = PcapWriter::create(path.as_ref()).map_err(|e| named(e, &path))?;
            outputs.push((p.num, w));
        }
        for (_, w) in &mut outputs {
            w.flush()?;
        }
        if let Some(cpu) = opts.cpu_port {
            dp.set_cpu_port(cpu)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.0))?;
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                dp,
                outputs,
                now_ns: 0,
            }),
            stop: AtomicBool::new(false),
            failed: Mutex::new(None),
            to_controller: Condvar::new(),
        });
        let s2 = shared.clone();
        let (go, started) = mpsc::channel();
        // not joined: it may be blocked opening or reading a FIFO nobody writes
        std::thread::Builder::new()
            .name("lanes-file-ports".into())
            .spawn(move || {
                if started.recv().is_err() {
                    return; // stopped before it started
                }
                if let Err(e) = read_inputs(&s2, &opts.ports, opts.wait) {
                    *s2.failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                }
            })?;
        Ok(FileSwitch {
            shared,
            go: Mutex::new(Some(go)),
        })
    }

    /// Open the inputs and process their frames (from then on; later calls do nothing).
    pub fn start_reading(&self) {
        if let Some(go) = self.go.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = go.send(());
        }
    }

    /// Run `f` on the data plane, then send what it queued (a PacketOut, say).
    pub fn with<R>(&self, f: impl FnOnce(&mut Dataplane) -> R) -> R {
        let mut st = lock(&self.shared);
        let r = f(&mut st.dp);
        st.drain();
        if st.dp.has_packet_ins() || st.dp.has_digests() {
            self.shared.to_controller.notify_all();
        }
        r
    }

    /// Frames sent to the CPU port, waiting up to `timeout` for the first one.
    pub fn wait_packet_ins(&self, timeout: Duration) -> Vec<Vec<u8>> {
        self.wait_for(
            timeout,
            Dataplane::has_packet_ins,
            Dataplane::take_packet_ins,
        )
    }

    /// Digests ingress generated, waiting up to `timeout` for the first one.
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
        let guard = lock(&self.shared);
        wait_then_take(
            guard,
            &sh.to_controller,
            &sh.stop,
            timeout,
            |s| &mut s.dp,
            ready,
            take,
        )
    }

    /// False once stopped or once reading an input failed (the inputs ending is not a failure:
    /// the switch goes on serving its control plane, as bmv2 does).
    pub fn is_running(&self) -> bool {
        !self.shared.stop.load(Ordering::SeqCst) && self.failure_taken(false).is_none()
    }

    /// Stop reading; returns the reader's error if it failed.
    pub fn stop(&mut self) -> io::Result<()> {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.to_controller.notify_all();
        self.go.lock().unwrap_or_else(|e| e.into_inner()).take();
        match self.failure_taken(true) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn failure_taken(&self, take: bool) -> Option<io::Error> {
        let mut f = self.shared.failed.lock().unwrap_or_else(|e| e.into_inner());
        if take {
            f.take()
        } else {
            f.as_ref().map(|e| io::Error::new(e.kind(), e.to_string()))
        }
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.state.lock().unwrap_or_else(|e| e.into_inner())
}

fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn named(e: io::Error, path: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{path}: {e}"))
}

type Input = (u32, String, Option<PcapReader<BufReader<File>>>);

/// Open every input in port order, then process records earliest first until all have ended.
fn read_inputs(shared: &Shared, ports: &[FilePort], wait: Duration) -> io::Result<()> {
    // all opened before any header is read: a FIFO's writer may open them all before writing
    let mut files = vec![];
    for p in ports {
        let path = format!("{}_in.pcap", p.name);
        let f = File::open(&path).map_err(|e| named(e, &path))?;
        files.push((p.num, path, f));
    }
    let mut inputs: Vec<Input> = vec![];
    for (num, path, f) in files {
        let reader = match PcapReader::open(BufReader::new(f)) {
            Ok(r) => Some(r),
            // closed before its header: an input with no packets
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => None,
            Err(e) => return Err(named(e, &path)),
        };
        inputs.push((num, path, reader));
    }
    let until = Instant::now() + wait;
    while Instant::now() < until {
        if shared.stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10).min(until - Instant::now()));
    }
    let mut heads: Vec<Option<Record>> = vec![];
    for input in &mut inputs {
        heads.push(next_of(input)?);
    }
    while !shared.stop.load(Ordering::SeqCst) {
        let Some(i) = earliest(&heads) else {
            return Ok(());
        };
        let rec = heads[i].take().expect("earliest head exists");
        {
            let mut st = lock(shared);
            let now = st.now();
            st.dp
                .ingress_frame(&rec.data, rec.data.len(), inputs[i].0, now);
            st.drain();
            if st.dp.has_packet_ins() || st.dp.has_digests() {
                shared.to_controller.notify_all();
            }
        }
        heads[i] = next_of(&mut inputs[i])?;
    }
    Ok(())
}

fn next_of(input: &mut Input) -> io::Result<Option<Record>> {
    let (_, path, reader) = input;
    let Some(r) = reader.as_mut() else {
        return Ok(None);
    };
    let rec = r.next_record().map_err(|e| named(e, path))?;
    if rec.is_none() {
        *reader = None; // closes the file
    }
    Ok(rec)
}

/// The input whose next record is earliest; the first such input on a tie.
fn earliest(heads: &[Option<Record>]) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    for (i, h) in heads.iter().enumerate() {
        if let Some(r) = h {
            if best.is_none_or(|(t, _)| r.ts_ns < t) {
                best = Some((r.ts_ns, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ts_ns: u64) -> Option<Record> {
        Some(Record {
            ts_ns,
            data: vec![],
        })
    }

    #[test]
    fn earliest_record_first_and_first_input_on_a_tie() {
        assert_eq!(earliest(&[rec(5), rec(3), rec(3)]), Some(1));
        assert_eq!(earliest(&[None, rec(9), None]), Some(1));
        assert_eq!(earliest(&[None, None]), None);
    }
}

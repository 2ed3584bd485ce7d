//! The lanes switch: AF_PACKET or AF_XDP ports, one event loop per switch, the TM at line rate between
//! the P4 ingress and egress pipelines. A library; the process is started from Python
//! (`lanes switch`), which also runs the control plane.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod batch_window;
pub mod commands;
mod controller_wait;
pub mod dataplane;
pub mod delay;
pub mod entry_op;
pub mod file_ports;
#[allow(unsafe_code)] // the AF_PACKET socket's system calls
mod packet_socket;
mod pcap;
pub mod pcap_reader;
pub mod port;
pub mod pre;
mod queue_cfg;
pub mod reply_poll;
#[allow(unsafe_code)]
// the receive ring's shared memory
mod ring;
mod switch;
#[allow(unsafe_code)] // thin wrappers over system calls
mod sys;
pub mod wake;
#[allow(unsafe_code)] // the bpf() calls that load and attach the XDP redirect program
mod xdp_prog;
#[allow(unsafe_code)] // the AF_XDP socket's UMEM and rings, shared with the kernel
mod xsk;

pub use batch_window::BatchWindow;
pub use dataplane::TraceLog;
pub use dataplane::{
    Dataplane, DropCounters, LoopCounters, MirrorSession, PortCounters, SettingError, TmDefaults,
    TxOutcome, MAX_CLONE_GENERATIONS, MAX_MIRROR_SESSION, MAX_PASSES, THRIFT_SESSION_NOT_FOUND,
};
pub use entry_op::EntryOp;
pub use file_ports::{FilePort, FileSwitch, FileSwitchOptions};
pub use port::RxMode;
pub use reply_poll::DEFAULT_REPLY_POLL_NS;
pub use switch::{dataplane_now_ns, PortSpec, Switch, SwitchOptions, DEFAULT_BATCH_NS};

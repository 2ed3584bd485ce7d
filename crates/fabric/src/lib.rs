//! InfiniBand fabric model, fat-tree routing engines and OpenSM file formats.
//!
//! - [`model`]: switches, HCAs, ports, links, GUIDs, LIDs.
//! - [`gen`]: PGFT / XGFT / k-ary-n-tree generators and the thesis's 36-port trees.
//! - [`netlist`], [`lft`]: ibnetdiscover/ibsim netlists and opensm-lfts.dump.
//! - [`topo`]: the fat-tree view (levels, port groups) the engines use.
//! - [`ftree`]: OpenSM-style fat-tree routing.
//! - [`check`], [`balance`], [`eval`]: deadlock freedom, balance and routing quality.
//! - [`vswitch`]: hypervisors as vSwitches, vSwitchFatTree; [`migrate`]: LID swap/copy;
//!   [`migsim`] ([`migplan`]): sequences of migrations, SMPs and routing quality over time.
//! - [`fail`], [`failsub`]: failures re-routed (the failure's sub-tree only with `failsub`);
//!   [`pathsmod`]: paths modified after a link failure, as Paper IV counts them;
//!   [`phases`]: drop-first updates in two phases; [`minrc`]: minimal reconfiguration after a move.
//! - [`vlcheck`]: deadlock freedom per VL (path SLs, SL-to-VL tables) on any topology.

#![forbid(unsafe_code)]

pub mod align;
pub mod api;
pub mod balance;
pub mod check;
pub mod engines;
pub mod error;
pub mod eval;
pub mod fail;
pub mod failsub;
pub mod fill;
pub mod ftree;
pub mod gen;
pub mod lft;
pub mod lftbin;
pub mod metabase;
pub mod migplan;
pub mod migrate;
pub mod migsim;
pub mod minrc;
pub mod model;
pub mod netlist;
pub mod nodeorder;
pub mod order;
pub mod pathsmod;
pub mod patterns;
pub mod phases;
pub mod repair;
pub mod restore;
pub mod sacache;
pub mod slimupdate;
pub mod subtree;
pub mod topo;
pub mod vlcheck;
pub mod vswitch;
pub mod workflow;

pub use error::{FabricError, Result};

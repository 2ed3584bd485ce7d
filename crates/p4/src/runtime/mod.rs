//! What control planes see of a loaded program (P4Runtime, the Thrift server, `lanes ctl`):
//! tables and their entries, counters, registers and meters (`tables`), one typed table write
//! (`write`) and the rules its match key follows (`key_rules`), idle timeouts (`idle`),
//! action profiles and selectors (`profiles`), parser value sets (`value_sets`), the names and
//! ids a P4Runtime server needs (`p4info`), the program described as one JSON document
//! (`describe`), and state carried over to a successor program (`carry`). The packet path never
//! imports it.

mod carry;
mod describe;
mod idle;
mod key_rules;
pub mod p4info;
mod profiles;
mod tables;
mod value_sets;
mod write;

pub use key_rules::{FieldMatch, KeyRules};
pub use profiles::{GroupView, MemberView, ProfileId, ProfileInfo};
pub use tables::{ActionCall, ActionId, EntryHandle, EntryView, TableId};
pub use write::{TableWrite, WriteKind};

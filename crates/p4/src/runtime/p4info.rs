//! Names a P4Runtime server needs (tables, keys, actions, parameters, externs) taken from the
//! loaded program, with P4Info-style ids.
//!
//! p4c derives P4Info ids from a hash of each name; we cannot reproduce that without p4c, so
//! the ids here are `prefix << 24 | n` with n counting from 1 in JSON order. A server that has
//! the program's .p4info file should map the file's ids to these objects by *name*; the ids here
//! serve programs that come without one (and our hand-written p4info files use them).

use super::{ActionId, TableId};
use crate::program::Program;
use crate::table::MatchKind;

pub const PREFIX_ACTION: u32 = 0x01;
pub const PREFIX_TABLE: u32 = 0x02;
pub const PREFIX_COUNTER: u32 = 0x12;
pub const PREFIX_DIRECT_COUNTER: u32 = 0x13;
pub const PREFIX_METER: u32 = 0x14;
pub const PREFIX_DIRECT_METER: u32 = 0x15;
pub const PREFIX_REGISTER: u32 = 0x16;

fn id(prefix: u32, n: usize) -> u32 {
    (prefix << 24) | (n as u32 + 1)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// 1-based, in key order.
    pub id: u32,
    pub name: String,
    pub bitwidth: u32,
    pub match_kind: MatchKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    pub id: u32,
    pub name: String,
    pub table: TableId,
    /// The table's id in the bmv2 JSON.
    pub json_id: u64,
    pub keys: Vec<KeyInfo>,
    /// P4Info ids of the table's actions.
    pub action_ids: Vec<u32>,
    pub size: u64,
    pub const_entries: bool,
    pub direct_counter: Option<u32>,
    pub direct_meter: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    pub id: u32,
    pub name: String,
    pub bitwidth: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionInfo {
    pub id: u32,
    pub name: String,
    pub params: Vec<ParamInfo>,
    /// The JSON actions with this name (p4c copies an action per table that uses it).
    pub instances: Vec<ActionId>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternInfo {
    pub id: u32,
    pub name: String,
    pub size: u64,
    /// Register cell width, 0 for counters and meters.
    pub bitwidth: u32,
    /// Table name for direct counters and meters.
    pub table: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct P4Names {
    pub tables: Vec<TableInfo>,
    pub actions: Vec<ActionInfo>,
    pub counters: Vec<ExternInfo>,
    pub direct_counters: Vec<ExternInfo>,
    pub meters: Vec<ExternInfo>,
    pub direct_meters: Vec<ExternInfo>,
    pub registers: Vec<ExternInfo>,
}

impl P4Names {
    pub fn from_program(p: &Program) -> P4Names {
        let mut n = P4Names::default();
        for (i, a) in p.actions.iter().enumerate() {
            match n.actions.iter_mut().find(|x| x.name == a.name) {
                Some(x) => x.instances.push(ActionId(i as u32)),
                None => {
                    let k = n.actions.len();
                    n.actions.push(ActionInfo {
                        id: id(PREFIX_ACTION, k),
                        name: a.name.clone(),
                        params: a
                            .params
                            .iter()
                            .enumerate()
                            .map(|(j, q)| ParamInfo {
                                id: j as u32 + 1,
                                name: q.name.clone(),
                                bitwidth: q.width,
                            })
                            .collect(),
                        instances: vec![ActionId(i as u32)],
                    });
                }
            }
        }
        for c in &p.ext.counters {
            let list = if c.is_direct {
                &mut n.direct_counters
            } else {
                &mut n.counters
            };
            let prefix = if c.is_direct {
                PREFIX_DIRECT_COUNTER
            } else {
                PREFIX_COUNTER
            };
            list.push(ExternInfo {
                id: id(prefix, list.len()),
                name: c.name.clone(),
                size: c.cells.len() as u64,
                bitwidth: 0,
                table: c.binding.clone(),
            });
        }
        for m in &p.ext.meters {
            let list = if m.is_direct {
                &mut n.direct_meters
            } else {
                &mut n.meters
            };
            let prefix = if m.is_direct {
                PREFIX_DIRECT_METER
            } else {
                PREFIX_METER
            };
            list.push(ExternInfo {
                id: id(prefix, list.len()),
                name: m.name.clone(),
                size: m.cells.len() as u64,
                bitwidth: 0,
                table: m.binding.clone(),
            });
        }
        for r in &p.ext.registers {
            n.registers.push(ExternInfo {
                id: id(PREFIX_REGISTER, n.registers.len()),
                name: r.name.clone(),
                size: r.cells.len() as u64,
                bitwidth: r.width,
                table: None,
            });
        }
        for (i, t) in p.tables.iter().enumerate() {
            let mut action_ids: Vec<u32> = Vec::new();
            for a in &t.actions {
                let name = &p.actions[*a as usize].name;
                if let Some(x) = n.actions.iter().find(|x| &x.name == name) {
                    if !action_ids.contains(&x.id) {
                        action_ids.push(x.id);
                    }
                }
            }
            let bound = |l: &[ExternInfo]| {
                l.iter()
                    .find(|x| x.table.as_deref() == Some(t.name.as_str()))
                    .map(|x| x.id)
            };
            n.tables.push(TableInfo {
                id: id(PREFIX_TABLE, i),
                name: t.name.clone(),
                table: TableId(i as u32),
                json_id: t.id,
                keys: t
                    .keys
                    .iter()
                    .enumerate()
                    .map(|(j, k)| KeyInfo {
                        id: j as u32 + 1,
                        name: k.name.clone(),
                        bitwidth: k.width,
                        match_kind: k.kind,
                    })
                    .collect(),
                action_ids,
                size: t.max_size,
                const_entries: t.is_const,
                direct_counter: bound(&n.direct_counters),
                direct_meter: bound(&n.direct_meters),
            });
        }
        n
    }

    pub fn table(&self, name: &str) -> Option<&TableInfo> {
        self.tables.iter().find(|t| t.name == name)
    }

    pub fn action(&self, name: &str) -> Option<&ActionInfo> {
        self.actions.iter().find(|a| a.name == name)
    }
}

//! Carrying run-time state from one program to its successor (P4Runtime's
//! RECONCILE_AND_COMMIT): table entries and defaults, action profile members and groups,
//! value set members, counters and registers, matched by name.

use super::p4info::P4Names;
use super::ProfileId;
use super::TableId;
use crate::program::Program;

impl Program {
    /// Copies `old`'s state into this program. Fails (with the reason) when an entry, member
    /// or group cannot be kept: its table, profile or action is gone or no longer fits.
    pub fn carry_state_from(&mut self, old: &Program) -> Result<(), String> {
        for name in old.profile_names() {
            let op = old.profile_id(name).expect("profile of the program");
            self.carry_profile(old, op, name)?;
        }
        for name in old.table_names() {
            let to = old.table_id(name).expect("table of the program");
            self.carry_table(old, to, name)?;
        }
        for name in old.value_set_names() {
            let members = old.value_set_members(name).map_err(|e| e.to_string())?;
            for (v, m) in members {
                self.value_set_add(name, &v, Some(&m))
                    .map_err(|e| format!("value set {name}: {e}"))?;
            }
        }
        let n_old = P4Names::from_program(old);
        for c in &n_old.counters {
            if self.extern_size(&c.name).ok() == Some(c.size) {
                for i in 0..c.size {
                    let v = old.counter_read(&c.name, i).map_err(|e| e.to_string())?;
                    let _ = self.counter_write(&c.name, i, v);
                }
            }
        }
        for r in &n_old.registers {
            if self.extern_size(&r.name).ok() == Some(r.size) {
                for i in 0..r.size {
                    let v = old.register_read(&r.name, i).map_err(|e| e.to_string())?;
                    let _ = self.register_write(&r.name, i, v);
                }
            }
        }
        Ok(())
    }

    fn carry_profile(&mut self, old: &Program, op: ProfileId, name: &str) -> Result<(), String> {
        let members = old.members(op).map_err(|e| e.to_string())?;
        let groups = old.groups(op).map_err(|e| e.to_string())?;
        let Some(np) = self.profile_id(name) else {
            if members.is_empty() && groups.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "action profile {name} with members is not in the new program"
            ));
        };
        let err = |x: crate::ApiError| format!("action profile {name}: {x}");
        for m in members {
            let a = self
                .profile_action_id(np, &m.action_name)
                .ok_or_else(|| format!("action {} is not in profile {name}", m.action_name))?;
            self.add_member(np, Some(m.handle), a, &m.params)
                .map_err(err)?;
        }
        for g in groups {
            self.create_group(np, Some(g.handle), g.max_size)
                .map_err(err)?;
            self.set_group_members(np, g.handle, &g.members)
                .map_err(err)?;
        }
        Ok(())
    }

    fn carry_table(&mut self, old: &Program, to: TableId, name: &str) -> Result<(), String> {
        let entries = old.entries(to).map_err(|e| e.to_string())?;
        let Some(tn) = self.table_id(name) else {
            if entries.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "table {name} with entries is not in the new program"
            ));
        };
        let err = |x: crate::ApiError| format!("table {name}: {x}");
        for e in entries {
            let h = match e.target {
                Some(r) => self.add_indirect_entry(tn, e.keys.clone(), r, e.priority),
                None => {
                    let a = self.action_id(tn, &e.action_name).ok_or_else(|| {
                        format!("action {} is not in table {name}", e.action_name)
                    })?;
                    self.add_entry(tn, e.keys.clone(), a, e.params.clone(), e.priority)
                }
            }
            .map_err(err)?;
            if self.with_direct_counter(tn).is_ok() {
                self.direct_counter_write(tn, h, e.counter).map_err(err)?;
            }
        }
        if let Ok(Some((a, params))) = old.default_entry(to) {
            let an = old.action_name(a).unwrap_or_default().to_string();
            if let Some(na) = self.action_id(tn, &an) {
                let _ = self.set_default(tn, na, params);
            }
        }
        if let Ok(Some(r)) = old.default_target(to) {
            self.set_default_target(tn, Some(r)).map_err(err)?;
        }
        Ok(())
    }
}

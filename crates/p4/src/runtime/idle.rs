//! Idle timeouts of table entries (tables with `support_timeout`): a timeout per entry, the
//! time since its last hit, and the entries that went idle since the controller was last told
//! (P4Runtime's IdleTimeoutNotification, bmv2's entry TTL). Times are the data plane's clock
//! in nanoseconds, the `now` the switch gives `ingress`.

use super::{EntryHandle, TableId};
use crate::error::ApiError;
use crate::program::Program;

impl Program {
    /// Whether the table keeps hit times (`support_timeout`), so its entries may age.
    pub fn supports_timeout(&self, t: TableId) -> Result<bool, ApiError> {
        Ok(self.table(t)?.support_timeout)
    }

    /// Sets (Some) or clears (None) an entry's idle timeout; its idle time starts at `now`.
    pub fn set_entry_ttl(
        &mut self,
        t: TableId,
        h: EntryHandle,
        ttl_ns: Option<u64>,
        now: u64,
    ) -> Result<(), ApiError> {
        let table = self.table(t)?;
        if !table.support_timeout {
            return Err(ApiError::AgeingDisabled(table.name.clone()));
        }
        let e = self.tables[t.0 as usize]
            .entry_mut(h.0)
            .ok_or(ApiError::BadHandle(h.0))?;
        e.ttl_ns = ttl_ns;
        e.last_hit = now;
        e.notified_at = None;
        Ok(())
    }

    /// (ns since the entry was last hit or given its timeout, its timeout) for an entry of a
    /// table with `support_timeout`; None for other tables.
    pub fn entry_life(
        &self,
        t: TableId,
        h: EntryHandle,
        now: u64,
    ) -> Result<Option<(u64, Option<u64>)>, ApiError> {
        let table = self.table(t)?;
        let e = table.entry(h.0).ok_or(ApiError::BadHandle(h.0))?;
        Ok(table
            .support_timeout
            .then(|| (now.saturating_sub(e.last_hit), e.ttl_ns)))
    }

    /// Entries whose timeout passed without a hit and that were not reported since their last
    /// hit; each is reported once (until it is hit again).
    pub fn take_idle(&mut self, now: u64) -> Vec<(TableId, EntryHandle)> {
        let mut out = Vec::new();
        for (ti, table) in self.tables.iter_mut().enumerate() {
            if !table.support_timeout {
                continue;
            }
            let handles: Vec<u32> = table.handles().collect();
            for h in handles {
                let Some(e) = table.entry_mut(h) else {
                    continue;
                };
                let Some(ttl) = e.ttl_ns else {
                    continue;
                };
                if now.saturating_sub(e.last_hit) >= ttl && e.notified_at != Some(e.last_hit) {
                    e.notified_at = Some(e.last_hit);
                    out.push((TableId(ti as u32), EntryHandle(h)));
                }
            }
        }
        out
    }
}

//! Mirror (clone) sessions: which port and multicast group a session's copies go to. They belong
//! to the switch, not the program, and stay when a new program is loaded.

use super::{Dataplane, MirrorSession, SettingError, MAX_MIRROR_SESSION};
use crate::EntryOp;

impl Dataplane {
    /// Configure mirror session `session` (0 to MAX_MIRROR_SESSION) to send copies to `port`
    /// (a port of the switch), replacing what it had. A truncation length of 0 means none.
    pub fn mirror_add(&mut self, session: u32, mut m: MirrorSession) -> Result<(), SettingError> {
        if session > MAX_MIRROR_SESSION {
            return Err(SettingError::SessionOutOfRange(session));
        }
        match (m.port, m.mgid) {
            (None, None) => return Err(SettingError::NoDestination),
            (Some(p), _) if self.port(p).is_none() => return Err(SettingError::NoPort(p)),
            (_, Some(g)) if g == 0 || g > crate::pre::MAX_MGID => {
                return Err(SettingError::GroupOutOfRange(g))
            }
            _ => {}
        }
        m.truncate = m.truncate.filter(|n| *n > 0);
        self.mirrors.insert(session, m);
        Ok(())
    }

    /// Remove mirror session `session`.
    pub fn mirror_delete(&mut self, session: u32) -> Result<(), SettingError> {
        self.mirrors
            .remove(&session)
            .map(|_| ())
            .ok_or(SettingError::NoSession(session))
    }

    /// A P4Runtime clone session write: an insert of a session that exists and a modify or
    /// delete of one that does not are refused, then as `mirror_add` and `mirror_delete`.
    pub fn mirror_write(
        &mut self,
        op: EntryOp,
        session: u32,
        m: MirrorSession,
    ) -> Result<(), SettingError> {
        let exists = self.mirrors.contains_key(&session);
        match op {
            EntryOp::Insert if exists => Err(SettingError::SessionExists(session)),
            EntryOp::Modify | EntryOp::Delete if !exists => Err(SettingError::NoSession(session)),
            EntryOp::Delete => self.mirror_delete(session),
            EntryOp::Insert | EntryOp::Modify => self.mirror_add(session, m),
        }
    }

    /// Mirror session `session`, if configured.
    pub fn mirror(&self, session: u32) -> Option<MirrorSession> {
        self.mirrors.get(&session).copied()
    }

    /// Every configured mirror session, by id.
    pub fn mirrors(&self) -> impl Iterator<Item = (u32, MirrorSession)> + '_ {
        self.mirrors.iter().map(|(s, m)| (*s, *m))
    }

    /// Remove every mirror session.
    pub fn mirror_clear(&mut self) {
        self.mirrors.clear();
    }
}

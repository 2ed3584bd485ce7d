//! Action profiles and action selectors (tables of type `indirect` and `indirect_ws`): a table
//! entry names a member (an action with its data) or a group of members, and for a group one
//! member is chosen per packet by the selector's hash, as bmv2 does: the members in ascending
//! handle order, the one at `hash % count`.

use crate::checksum::{self, Calculation};
use crate::error::ApiError;
use crate::json::{self, R};
use crate::layout::Layout;
use crate::state::PacketState;
use serde_json::Value;
use std::collections::BTreeMap;

/// The most selection slots (the sum of a group's weights) a group may have.
pub const MAX_GROUP_SLOTS: u64 = 1 << 16;

/// What an entry of an indirect table runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileRef {
    Member(u32),
    Group(u32),
}

#[derive(Debug, Clone)]
pub struct Member {
    pub action: u32,
    pub data: Vec<u64>,
    /// Table entries, defaults and groups that name it (it cannot be deleted while used).
    pub(crate) users: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Group {
    /// (member handle, weight), ascending by handle.
    pub members: Vec<(u32, u32)>,
    /// Members the group may hold (0: no limit).
    pub max_size: u32,
    /// Member handles in selection order, each repeated by its weight.
    slots: Vec<u32>,
    pub(crate) users: u32,
}

impl Group {
    fn rebuild(&mut self) {
        self.slots = self
            .members
            .iter()
            .flat_map(|(m, w)| std::iter::repeat_n(*m, *w as usize))
            .collect();
    }
}

#[derive(Debug)]
pub struct ActionProfile {
    pub name: String,
    pub id: u64,
    /// Members the profile may hold (P4's `size`; 0: no limit).
    pub max_size: u64,
    pub selector: Option<Calculation>,
    /// Program actions a member may run: those of the tables that use the profile.
    pub actions: Vec<u32>,
    pub(crate) members: BTreeMap<u32, Member>,
    pub(crate) groups: BTreeMap<u32, Group>,
}

impl ActionProfile {
    pub fn load(v: &Value, layout: &Layout, ctx: &str) -> R<ActionProfile> {
        let selector = match json::opt(v, "selector") {
            None | Some(Value::Null) => None,
            Some(s) => Some(checksum::load_calculation(
                s,
                layout,
                &format!("{ctx} selector"),
            )?),
        };
        Ok(ActionProfile {
            name: json::str_(v, "name", ctx)?.to_string(),
            id: json::opt(v, "id").and_then(Value::as_u64).unwrap_or(0),
            max_size: json::opt(v, "max_size")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            selector,
            actions: Vec::new(),
            members: BTreeMap::new(),
            groups: BTreeMap::new(),
        })
    }

    /// The action and data an entry runs for this packet; `None` for an empty group (the
    /// lookup then counts as a miss) or a handle that no longer exists.
    #[inline]
    pub fn resolve(
        &self,
        r: ProfileRef,
        st: &PacketState,
        scratch: &mut Vec<u8>,
    ) -> Option<&Member> {
        let h = match r {
            ProfileRef::Member(h) => h,
            ProfileRef::Group(g) => {
                let slots = &self.groups.get(&g)?.slots;
                if slots.is_empty() {
                    return None;
                }
                let hash = self.selector.as_ref().map_or(0, |c| c.compute(st, scratch));
                slots[(hash % slots.len() as u64) as usize]
            }
        };
        self.members.get(&h)
    }

    pub fn member(&self, h: u32) -> Result<&Member, ApiError> {
        self.members.get(&h).ok_or_else(|| self.no_member(h))
    }

    pub fn group(&self, h: u32) -> Result<&Group, ApiError> {
        self.groups.get(&h).ok_or_else(|| self.no_group(h))
    }

    fn no_member(&self, h: u32) -> ApiError {
        ApiError::NoMember(format!("action profile {} has no member {h}", self.name))
    }

    fn no_group(&self, h: u32) -> ApiError {
        ApiError::NoGroup(format!("action profile {} has no group {h}", self.name))
    }

    /// Smallest handle not in `used` (bmv2 hands out the lowest free one).
    fn free_handle<V>(used: &BTreeMap<u32, V>) -> u32 {
        let mut h = 0;
        for k in used.keys() {
            if *k != h {
                break;
            }
            h += 1;
        }
        h
    }

    /// Adds a member; `handle` None picks the lowest free one.
    pub fn add_member(
        &mut self,
        handle: Option<u32>,
        action: u32,
        data: Vec<u64>,
    ) -> Result<u32, ApiError> {
        if self.max_size > 0 && self.members.len() as u64 >= self.max_size {
            return Err(ApiError::TableFull(format!(
                "action profile {} (max {} members)",
                self.name, self.max_size
            )));
        }
        let h = handle.unwrap_or_else(|| Self::free_handle(&self.members));
        if self.members.contains_key(&h) {
            return Err(ApiError::DuplicateEntry);
        }
        self.members.insert(
            h,
            Member {
                action,
                data,
                users: 0,
            },
        );
        Ok(h)
    }

    pub fn modify_member(&mut self, h: u32, action: u32, data: Vec<u64>) -> Result<(), ApiError> {
        self.member(h)?;
        let m = self.members.get_mut(&h).expect("checked above");
        m.action = action;
        m.data = data;
        Ok(())
    }

    pub fn delete_member(&mut self, h: u32) -> Result<(), ApiError> {
        let m = self.member(h)?;
        if m.users > 0 {
            return Err(ApiError::MemberInUse(format!(
                "member {h} of action profile {} is used by {} table entries or groups",
                self.name, m.users
            )));
        }
        self.members.remove(&h);
        Ok(())
    }

    pub fn create_group(&mut self, handle: Option<u32>, max_size: u32) -> Result<u32, ApiError> {
        if self.selector.is_none() {
            return Err(ApiError::Invalid(format!(
                "action profile {} has no selector: it holds members only",
                self.name
            )));
        }
        let h = handle.unwrap_or_else(|| Self::free_handle(&self.groups));
        if self.groups.contains_key(&h) {
            return Err(ApiError::DuplicateEntry);
        }
        self.groups.insert(
            h,
            Group {
                max_size,
                ..Group::default()
            },
        );
        Ok(h)
    }

    pub fn delete_group(&mut self, h: u32) -> Result<(), ApiError> {
        let g = self.group(h)?;
        if g.users > 0 {
            return Err(ApiError::GroupInUse(format!(
                "group {h} of action profile {} is used by {} table entries",
                self.name, g.users
            )));
        }
        let members: Vec<u32> = g.members.iter().map(|m| m.0).collect();
        for m in members {
            self.use_member(m, -1);
        }
        self.groups.remove(&h);
        Ok(())
    }

    /// Sets a group's members and weights (P4Runtime's whole-group write); members must exist.
    pub fn set_group_members(&mut self, h: u32, members: &[(u32, u32)]) -> Result<(), ApiError> {
        let g = self.group(h)?;
        if g.max_size > 0 && members.len() > g.max_size as usize {
            return Err(ApiError::TableFull(format!(
                "group {h} of action profile {} (max {} members)",
                self.name, g.max_size
            )));
        }
        let mut sorted = members.to_vec();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(ApiError::Invalid(format!(
                "group {h}: a member is listed twice"
            )));
        }
        for (m, w) in &sorted {
            self.member(*m)?;
            if *w == 0 {
                return Err(ApiError::Invalid(format!(
                    "group {h}: member {m} has weight 0"
                )));
            }
        }
        // each unit of weight is a selection slot: bound them
        let slots: u64 = sorted.iter().map(|(_, w)| u64::from(*w)).sum();
        if slots > MAX_GROUP_SLOTS {
            return Err(ApiError::Invalid(format!(
                "group {h}: weights sum to {slots}, over {MAX_GROUP_SLOTS}"
            )));
        }
        let old: Vec<u32> = g.members.iter().map(|m| m.0).collect();
        for m in old {
            self.use_member(m, -1);
        }
        for (m, _) in &sorted {
            self.use_member(*m, 1);
        }
        let g = self.groups.get_mut(&h).expect("checked above");
        g.members = sorted;
        g.rebuild();
        Ok(())
    }

    pub fn add_member_to_group(&mut self, m: u32, h: u32) -> Result<(), ApiError> {
        let g = self.group(h)?;
        if g.members.iter().any(|x| x.0 == m) {
            return Err(ApiError::MemberInGroup(format!(
                "member {m} is already in group {h} of action profile {}",
                self.name
            )));
        }
        let mut members = g.members.clone();
        members.push((m, 1));
        self.set_group_members(h, &members)
    }

    pub fn remove_member_from_group(&mut self, m: u32, h: u32) -> Result<(), ApiError> {
        let g = self.group(h)?;
        if !g.members.iter().any(|x| x.0 == m) {
            return Err(ApiError::MemberNotInGroup(format!(
                "member {m} is not in group {h} of action profile {}",
                self.name
            )));
        }
        let members: Vec<(u32, u32)> = g.members.iter().copied().filter(|x| x.0 != m).collect();
        self.set_group_members(h, &members)
    }

    /// Checks that `r` exists (and is allowed here) before a table entry takes it.
    pub fn check_ref(&self, r: ProfileRef) -> Result<(), ApiError> {
        match r {
            ProfileRef::Member(h) => self.member(h).map(|_| ()),
            ProfileRef::Group(h) => self.group(h).map(|_| ()),
        }
    }

    /// Counts a table entry (or default) that starts (+1) or stops (-1) naming `r`.
    pub(crate) fn use_ref(&mut self, r: ProfileRef, delta: i32) {
        match r {
            ProfileRef::Member(h) => self.use_member(h, delta),
            ProfileRef::Group(h) => {
                if let Some(g) = self.groups.get_mut(&h) {
                    g.users = g.users.saturating_add_signed(delta);
                }
            }
        }
    }

    fn use_member(&mut self, h: u32, delta: i32) {
        if let Some(m) = self.members.get_mut(&h) {
            m.users = m.users.saturating_add_signed(delta);
        }
    }
}

//! Runtime control API of action profiles and selectors: members, groups, and the entries of
//! indirect tables that name them (what simple_switch_CLI's `act_prof_*` and
//! `table_indirect_*` commands and P4Runtime's ActionProfileMember/Group call).

use super::{ActionId, EntryHandle, TableId};
use crate::error::ApiError;
use crate::pipeline::encode_params;
use crate::profile::{ActionProfile, ProfileRef};
use crate::program::Program;
use crate::table::MatchKey;

/// An action profile of the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProfileId(pub u32);

/// A member as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberView {
    pub handle: u32,
    pub action: ActionId,
    pub action_name: String,
    /// Action parameters, big-endian, ceil(width/8) bytes each.
    pub params: Vec<Vec<u8>>,
}

/// A group as read back: (member handle, weight) ascending by handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupView {
    pub handle: u32,
    pub members: Vec<(u32, u32)>,
    pub max_size: u32,
}

/// What a profile is: JSON name and id, member limit, whether it has a selector (groups).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileInfo {
    pub name: String,
    pub id: u64,
    pub max_size: u64,
    pub with_selector: bool,
}

impl Program {
    /// Finds an action profile by full name or unique suffix ([`crate::names::resolve`]).
    pub fn profile_id(&self, name: &str) -> Option<ProfileId> {
        crate::names::resolve(self.profiles.iter().map(|p| p.name.as_str()), name)
            .map(|i| ProfileId(i as u32))
    }

    pub fn profile_names(&self) -> Vec<&str> {
        self.profiles.iter().map(|p| p.name.as_str()).collect()
    }

    pub fn profile_info(&self, p: ProfileId) -> Result<ProfileInfo, ApiError> {
        let prof = self.profile(p)?;
        Ok(ProfileInfo {
            name: prof.name.clone(),
            id: prof.id,
            max_size: prof.max_size,
            with_selector: prof.selector.is_some(),
        })
    }

    /// The action profile of an indirect table (None for a direct table).
    pub fn table_profile(&self, t: TableId) -> Result<Option<ProfileId>, ApiError> {
        Ok(self.table(t)?.profile.map(ProfileId))
    }

    /// An action a member of the profile may run, by full or unique short name.
    pub fn profile_action_id(&self, p: ProfileId, name: &str) -> Option<ActionId> {
        let prof = self.profiles.get(p.0 as usize)?;
        let names = prof
            .actions
            .iter()
            .map(|a| self.actions[*a as usize].name.as_str());
        crate::names::resolve(names, name).map(|i| ActionId(prof.actions[i]))
    }

    /// The actions a member of the profile may run, with their names.
    pub fn profile_action_names(&self, p: ProfileId) -> Vec<(ActionId, &str)> {
        self.profiles.get(p.0 as usize).map_or(Vec::new(), |prof| {
            prof.actions
                .iter()
                .map(|a| (ActionId(*a), self.actions[*a as usize].name.as_str()))
                .collect()
        })
    }

    fn profile(&self, p: ProfileId) -> Result<&ActionProfile, ApiError> {
        self.profiles
            .get(p.0 as usize)
            .ok_or_else(|| ApiError::NotFound(format!("no action profile #{}", p.0)))
    }

    fn member_data(
        &self,
        p: ProfileId,
        a: ActionId,
        params: &[Vec<u8>],
    ) -> Result<Vec<u64>, ApiError> {
        let prof = self.profile(p)?;
        if !prof.actions.contains(&a.0) {
            return Err(ApiError::UnknownAction(format!(
                "#{} in action profile {}",
                a.0, prof.name
            )));
        }
        encode_params(&self.actions[a.0 as usize], params).map_err(ApiError::BadActionData)
    }

    /// Adds a member running `action`; `handle` None picks the lowest free handle.
    pub fn add_member(
        &mut self,
        p: ProfileId,
        handle: Option<u32>,
        action: ActionId,
        params: &[Vec<u8>],
    ) -> Result<u32, ApiError> {
        let data = self.member_data(p, action, params)?;
        self.profiles[p.0 as usize].add_member(handle, action.0, data)
    }

    /// New action and parameters for a member (every entry and group using it follows).
    pub fn modify_member(
        &mut self,
        p: ProfileId,
        h: u32,
        action: ActionId,
        params: &[Vec<u8>],
    ) -> Result<(), ApiError> {
        let data = self.member_data(p, action, params)?;
        self.profiles[p.0 as usize].modify_member(h, action.0, data)
    }

    pub fn delete_member(&mut self, p: ProfileId, h: u32) -> Result<(), ApiError> {
        self.profile(p)?;
        self.profiles[p.0 as usize].delete_member(h)
    }

    /// Creates an empty group (profiles with a selector only); `max_size` 0: no limit.
    pub fn create_group(
        &mut self,
        p: ProfileId,
        handle: Option<u32>,
        max_size: u32,
    ) -> Result<u32, ApiError> {
        self.profile(p)?;
        self.profiles[p.0 as usize].create_group(handle, max_size)
    }

    pub fn delete_group(&mut self, p: ProfileId, h: u32) -> Result<(), ApiError> {
        self.profile(p)?;
        self.profiles[p.0 as usize].delete_group(h)
    }

    /// Replaces a group's (member, weight) list.
    pub fn set_group_members(
        &mut self,
        p: ProfileId,
        h: u32,
        members: &[(u32, u32)],
    ) -> Result<(), ApiError> {
        self.profile(p)?;
        self.profiles[p.0 as usize].set_group_members(h, members)
    }

    pub fn add_member_to_group(&mut self, p: ProfileId, m: u32, g: u32) -> Result<(), ApiError> {
        self.profile(p)?;
        self.profiles[p.0 as usize].add_member_to_group(m, g)
    }

    pub fn remove_member_from_group(
        &mut self,
        p: ProfileId,
        m: u32,
        g: u32,
    ) -> Result<(), ApiError> {
        self.profile(p)?;
        self.profiles[p.0 as usize].remove_member_from_group(m, g)
    }

    pub fn members(&self, p: ProfileId) -> Result<Vec<MemberView>, ApiError> {
        let prof = self.profile(p)?;
        Ok(prof
            .members
            .iter()
            .map(|(h, m)| MemberView {
                handle: *h,
                action: ActionId(m.action),
                action_name: self.actions[m.action as usize].name.clone(),
                params: self.params_bytes(m.action, &m.data),
            })
            .collect())
    }

    pub fn groups(&self, p: ProfileId) -> Result<Vec<GroupView>, ApiError> {
        let prof = self.profile(p)?;
        Ok(prof
            .groups
            .iter()
            .map(|(h, g)| GroupView {
                handle: *h,
                members: g.members.clone(),
                max_size: g.max_size,
            })
            .collect())
    }

    fn indirect_profile(&self, t: TableId, r: Option<ProfileRef>) -> Result<u32, ApiError> {
        let table = self.table(t)?;
        let Some(p) = table.profile else {
            return Err(ApiError::WrongTableType(format!(
                "table {} is not indirect: its entries name an action",
                table.name
            )));
        };
        let prof = &self.profiles[p as usize];
        match r {
            Some(ProfileRef::Group(_)) if prof.selector.is_none() => {
                return Err(ApiError::WrongTableType(format!(
                    "table {} has an action profile without a selector: entries name members",
                    table.name
                )))
            }
            Some(r) => prof.check_ref(r)?,
            None => {}
        }
        Ok(p)
    }

    /// Adds an entry of an indirect table naming a member or group.
    pub fn add_indirect_entry(
        &mut self,
        t: TableId,
        keys: Vec<MatchKey>,
        target: ProfileRef,
        priority: i32,
    ) -> Result<EntryHandle, ApiError> {
        let p = self.indirect_profile(t, Some(target))?;
        let table = &mut self.tables[t.0 as usize];
        let h = table.insert(&keys, 0, Vec::new(), priority)?;
        if let Some(e) = table.entry_mut(h) {
            e.target = Some(target);
        }
        self.profiles[p as usize].use_ref(target, 1);
        Ok(EntryHandle(h))
    }

    /// Points an indirect entry at another member or group (its key and counters stay).
    pub fn modify_indirect_entry(
        &mut self,
        t: TableId,
        h: EntryHandle,
        target: ProfileRef,
    ) -> Result<(), ApiError> {
        let p = self.indirect_profile(t, Some(target))?;
        let e = self.tables[t.0 as usize]
            .entry_mut(h.0)
            .ok_or(ApiError::BadHandle(h.0))?;
        let old = e.target.replace(target);
        let prof = &mut self.profiles[p as usize];
        prof.use_ref(target, 1);
        if let Some(o) = old {
            prof.use_ref(o, -1);
        }
        Ok(())
    }

    /// The member or group an indirect table runs on a miss (None: the JSON default action).
    pub fn set_default_target(
        &mut self,
        t: TableId,
        target: Option<ProfileRef>,
    ) -> Result<(), ApiError> {
        let p = self.indirect_profile(t, target)?;
        let old = std::mem::replace(&mut self.tables[t.0 as usize].default_target, target);
        let prof = &mut self.profiles[p as usize];
        if let Some(r) = target {
            prof.use_ref(r, 1);
        }
        if let Some(o) = old {
            prof.use_ref(o, -1);
        }
        Ok(())
    }

    pub fn default_target(&self, t: TableId) -> Result<Option<ProfileRef>, ApiError> {
        Ok(self.table(t)?.default_target)
    }

    /// An entry of table `t` that named `r` is gone.
    pub(crate) fn release_target(&mut self, t: TableId, r: Option<ProfileRef>) {
        if let (Some(r), Some(p)) = (r, self.tables[t.0 as usize].profile) {
            self.profiles[p as usize].use_ref(r, -1);
        }
    }
}

//! P4Info ids as p4c assigns them: the entity kind in the top byte, the low 24 bits from
//! Bob Jenkins' one-at-a-time hash of the fully qualified name; an `@id(n)` annotation fixes
//! the id; on a collision the next free value (same kind) is taken.

use std::collections::HashSet;

pub const ACTION: u32 = 0x01;
pub const TABLE: u32 = 0x02;
pub const VALUE_SET: u32 = 0x03;
pub const CONTROLLER_HEADER: u32 = 0x04;
pub const ACTION_PROFILE: u32 = 0x11;
pub const COUNTER: u32 = 0x12;
pub const DIRECT_COUNTER: u32 = 0x13;
pub const METER: u32 = 0x14;
pub const DIRECT_METER: u32 = 0x15;
pub const REGISTER: u32 = 0x16;
pub const DIGEST: u32 = 0x17;

/// Jenkins one-at-a-time hash.
pub fn jenkins(s: &str) -> u32 {
    let mut h: u32 = 0;
    for b in s.bytes() {
        h = h.wrapping_add(u32::from(b));
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h.wrapping_add(h << 15)
}

/// Assigns ids to named entities, kind by kind.
#[derive(Default)]
pub struct Ids {
    used: HashSet<u32>,
}

impl Ids {
    /// Reserves the ids given by `@id` annotations first (call before [`Ids::assign`]).
    /// A value without the kind byte gets it added, as p4c does.
    pub fn fixed(&mut self, kind: u32, id: u32) -> u32 {
        let id = if id >> 24 == 0 { (kind << 24) | id } else { id };
        self.used.insert(id);
        id
    }

    pub fn assign(&mut self, kind: u32, name: &str) -> u32 {
        let mut low = jenkins(name) & 0x00ff_ffff;
        loop {
            let id = (kind << 24) | low;
            if self.used.insert(id) {
                return id;
            }
            low = (low + 1) & 0x00ff_ffff;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids that p4c gives the P4 tutorials' basic.p4 (in its published P4Info).
    #[test]
    fn ids_match_p4c_for_the_tutorial_names() {
        let mut ids = Ids::default();
        assert_eq!(ids.assign(ACTION, "NoAction"), 21257015);
        assert_eq!(ids.assign(TABLE, "MyIngress.ipv4_lpm"), 37375156);
        assert_eq!(ids.assign(ACTION, "MyIngress.drop"), 25652968);
        assert_eq!(ids.assign(ACTION, "MyIngress.ipv4_forward"), 28792405);
        // and jafingerhut/p4-guide typedef-test1's P4Info (written by p4c)
        assert_eq!(ids.assign(TABLE, "ingress.custom_table"), 42499711);
        assert_eq!(ids.assign(ACTION, "ingress.set_headers"), 21844022);
        assert_eq!(ids.assign(ACTION, "ingress.my_drop"), 21580947);
    }

    #[test]
    fn collisions_take_the_next_id_and_fixed_ids_keep_their_kind() {
        let mut ids = Ids::default();
        let a = ids.assign(ACTION, "x");
        let b = ids.assign(ACTION, "x");
        assert_eq!(b, a + 1);
        assert_eq!(ids.fixed(TABLE, 5), 0x0200_0005);
        assert_eq!(ids.fixed(TABLE, 0x0200_0007), 0x0200_0007);
    }
}

//! lanes's binary state file for LFTs (`*.lftb`): the same content as an opensm-lfts.dump (every
//! switch's table and the port GUID -> LID map) without the text, so that a command that starts
//! from the tables in place (sub-tree re-routing, SlimUpdate) does not spend its time parsing a
//! dump of hundreds of MB. OpenSM does not read it; write the text dump for OpenSM.

use std::collections::HashMap;

use crate::bail;
use crate::error::Result;
use crate::lft::{Dump, Lfts, SwitchLft};
use crate::model::Fabric;

const MAGIC: &[u8; 8] = b"LANESLT1";

pub fn is_state(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

pub fn write(f: &Fabric, lfts: &Lfts) -> Vec<u8> {
    let width = lfts.width();
    let mut out = Vec::with_capacity(64 + lfts.switches.len() * (width + 64));
    out.extend_from_slice(MAGIC);
    let lids: Vec<(u64, u16)> = f
        .nodes
        .iter()
        .filter(|n| n.lid != 0)
        .map(|n| (n.port_guid(), n.lid))
        .collect();
    out.extend_from_slice(&(lids.len() as u64).to_le_bytes());
    for (g, l) in lids {
        out.extend_from_slice(&g.to_le_bytes());
        out.extend_from_slice(&l.to_le_bytes());
    }
    out.extend_from_slice(&(lfts.switches.len() as u64).to_le_bytes());
    for s in &lfts.switches {
        out.extend_from_slice(&s.guid.to_le_bytes());
        out.extend_from_slice(&s.lid.to_le_bytes());
        let name = s.name.as_bytes();
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(&(s.ports.len() as u32).to_le_bytes());
        out.extend_from_slice(&s.ports);
    }
    out
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.at + n > self.b.len() {
            bail!("truncated lanes LFT state file");
        }
        self.at += n;
        Ok(&self.b[self.at - n..self.at])
    }
    fn u64(&mut self) -> Result<u64> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
    }
    fn u32(&mut self) -> Result<u32> {
        let mut w = [0u8; 4];
        w.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(w))
    }
    fn u16(&mut self) -> Result<u16> {
        let mut w = [0u8; 2];
        w.copy_from_slice(self.take(2)?);
        Ok(u16::from_le_bytes(w))
    }
}

pub fn read(b: &[u8]) -> Result<Dump> {
    if !is_state(b) {
        bail!("not a lanes LFT state file");
    }
    let mut r = Reader { b, at: 8 };
    let n = r.u64()? as usize;
    if n > b.len() {
        bail!("corrupt lanes LFT state file");
    }
    let mut lids = HashMap::with_capacity(n);
    for _ in 0..n {
        let g = r.u64()?;
        lids.insert(g, r.u16()?);
    }
    let ns = r.u64()? as usize;
    if ns > b.len() {
        bail!("corrupt lanes LFT state file");
    }
    let mut switches = Vec::with_capacity(ns);
    for _ in 0..ns {
        let guid = r.u64()?;
        let lid = r.u16()?;
        let len = r.u32()? as usize;
        let name = String::from_utf8_lossy(r.take(len)?).into_owned();
        let len = r.u32()? as usize;
        let ports = r.take(len)?.to_vec();
        switches.push(SwitchLft {
            guid,
            lid,
            name,
            ports,
        });
    }
    if r.at != b.len() {
        bail!("trailing bytes in lanes LFT state file");
    }
    Ok(Dump {
        lfts: Lfts { switches },
        lids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Pgft;
    use crate::lft::{read_dump, write_dump};

    #[test]
    fn state_file_holds_what_the_text_dump_holds() {
        let f = Pgft::kary(4, 3).unwrap().build().unwrap();
        let (l, _) = crate::ftree::route(&f).unwrap();
        let text = read_dump(&write_dump(&f, &l)).unwrap();
        let bin = read(&write(&f, &l)).unwrap();
        assert_eq!(bin.lfts, text.lfts);
        assert_eq!(bin.lids, text.lids);
        let mut cut = write(&f, &l);
        cut.truncate(cut.len() - 3);
        assert!(read(&cut).is_err_and(|e| e.0.contains("truncated")));
    }
}

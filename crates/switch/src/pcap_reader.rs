//! Reads classic pcap files (either byte order, microsecond or nanosecond timestamps) record by
//! record, as a stream: the file may be a FIFO whose writer is still adding packets, so nothing
//! is read ahead of the record asked for.

use std::io::{self, Read};

/// One captured frame: its timestamp in nanoseconds and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Capture time, nanoseconds since the epoch.
    pub ts_ns: u64,
    /// The frame as captured (at most the file's snap length).
    pub data: Vec<u8>,
}

/// A pcap stream after its global header.
pub struct PcapReader<R: Read> {
    input: R,
    swapped: bool,
    nanos: bool,
}

/// Frames longer than this in a record header mean a corrupt file, not a frame.
const MAX_RECORD: u32 = 256 * 1024;

impl<R: Read> PcapReader<R> {
    /// Read and check the global header (blocks until a FIFO's writer has written it).
    pub fn open(mut input: R) -> io::Result<PcapReader<R>> {
        let mut h = [0u8; 24];
        input.read_exact(&mut h)?;
        let magic = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let (swapped, nanos) = match magic {
            0xa1b2_c3d4 => (false, false),
            0xa1b2_3c4d => (false, true),
            0xd4c3_b2a1 => (true, false),
            0x4d3c_b2a1 => (true, true),
            _ => return Err(bad(format!("not a pcap file (magic {magic:#010x})"))),
        };
        let r = PcapReader {
            input,
            swapped,
            nanos,
        };
        let link = r.u32_at(&h, 20) & 0x0fff_ffff;
        if link != 1 {
            return Err(bad(format!("link type {link}, not Ethernet (1)")));
        }
        Ok(r)
    }

    /// The next record, None at the end of the stream (a record cut short counts as the end).
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        let mut h = [0u8; 16];
        if !read_all_or_eof(&mut self.input, &mut h)? {
            return Ok(None);
        }
        let (sec, frac, incl) = (self.u32_at(&h, 0), self.u32_at(&h, 4), self.u32_at(&h, 8));
        if incl > MAX_RECORD {
            return Err(bad(format!("record of {incl} bytes: corrupt pcap")));
        }
        let mut data = vec![0u8; incl as usize];
        if !read_all_or_eof(&mut self.input, &mut data)? {
            return Ok(None);
        }
        let frac_ns = if self.nanos {
            u64::from(frac)
        } else {
            u64::from(frac) * 1000
        };
        Ok(Some(Record {
            ts_ns: u64::from(sec) * 1_000_000_000 + frac_ns,
            data,
        }))
    }

    fn u32_at(&self, b: &[u8], at: usize) -> u32 {
        let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.swapped {
            u32::from_be_bytes(v)
        } else {
            u32::from_le_bytes(v)
        }
    }
}

fn bad(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

/// Fill `buf`; false if the stream ended first (at once or part way).
fn read_all_or_eof(input: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => return Ok(false),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(magic: u32, big_endian: bool) -> Vec<u8> {
        let w = |v: u32| {
            if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut h = w(magic).to_vec();
        h.extend_from_slice(&[0; 12]);
        h.extend_from_slice(&w(65535));
        h.extend_from_slice(&w(1));
        h
    }

    fn record(sec: u32, frac: u32, data: &[u8]) -> Vec<u8> {
        let mut r = vec![];
        for v in [sec, frac, data.len() as u32, data.len() as u32] {
            r.extend_from_slice(&v.to_le_bytes());
        }
        r.extend_from_slice(data);
        r
    }

    #[test]
    fn reads_records_in_order_including_short_frames() {
        let mut f = header(0xa1b2_c3d4, false);
        f.extend(record(2, 5, &[1, 2, 3]));
        f.extend(record(2, 6, &[]));
        let mut r = PcapReader::open(&f[..]).unwrap();
        let a = r.next_record().unwrap().unwrap();
        assert_eq!((a.ts_ns, a.data), (2_000_005_000, vec![1, 2, 3]));
        assert_eq!(r.next_record().unwrap().unwrap().data, Vec::<u8>::new());
        assert_eq!(r.next_record().unwrap(), None);
    }

    #[test]
    fn nanosecond_magic_keeps_nanoseconds() {
        let mut f = header(0xa1b2_3c4d, false);
        f.extend(record(1, 7, &[9]));
        let mut r = PcapReader::open(&f[..]).unwrap();
        assert_eq!(r.next_record().unwrap().unwrap().ts_ns, 1_000_000_007);
    }

    #[test]
    fn a_cut_record_ends_the_stream() {
        let mut f = header(0xa1b2_c3d4, false);
        let rec = record(1, 0, &[1, 2, 3, 4]);
        f.extend(&rec[..rec.len() - 1]);
        let mut r = PcapReader::open(&f[..]).unwrap();
        assert_eq!(r.next_record().unwrap(), None);
    }

    #[test]
    fn refuses_what_is_not_an_ethernet_pcap() {
        let e = PcapReader::open(&[0u8; 24][..]).err().unwrap();
        assert!(e.to_string().contains("not a pcap file"), "{e}");
        let mut h = header(0xa1b2_c3d4, true);
        h[20..24].copy_from_slice(&105u32.to_be_bytes());
        let e = PcapReader::open(&h[..]).err().unwrap();
        assert!(e.to_string().contains("link type 105"), "{e}");
    }
}

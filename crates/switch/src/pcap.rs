//! pcap files of what each port receives and sends (`--pcap DIR`: IFACE_in.pcap, IFACE_out.pcap, named by interface).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub struct PcapWriter {
    out: BufWriter<File>,
}

impl PcapWriter {
    pub fn create(path: &Path) -> io::Result<PcapWriter> {
        let mut out = BufWriter::new(File::create(path)?);
        // classic pcap, microsecond timestamps, Ethernet link type
        out.write_all(&0xa1b2_c3d4u32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&65535u32.to_le_bytes())?;
        out.write_all(&1u32.to_le_bytes())?;
        Ok(PcapWriter { out })
    }

    /// `wall_ns`: wall-clock time of the frame, so captures line up with other tools'.
    pub fn write(&mut self, wall_ns: u64, frame: &[u8]) -> io::Result<()> {
        let len = frame.len() as u32;
        self.out
            .write_all(&((wall_ns / 1_000_000_000) as u32).to_le_bytes())?;
        self.out
            .write_all(&((wall_ns % 1_000_000_000 / 1000) as u32).to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(frame)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_and_records() {
        let path =
            std::env::temp_dir().join(format!("lanes-pcap-test-{}.pcap", std::process::id()));
        let mut w = PcapWriter::create(&path).unwrap();
        w.write(1_500_000_123_000, &[1, 2, 3]).unwrap();
        w.flush().unwrap();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(b.len(), 24 + 16 + 3);
        assert_eq!(&b[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1500);
        assert_eq!(u32::from_le_bytes(b[28..32].try_into().unwrap()), 123);
        assert_eq!(&b[40..], &[1, 2, 3]);
    }
}

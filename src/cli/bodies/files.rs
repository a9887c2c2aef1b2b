//! The files of one read, each opened once, their byte ranges read through one buffer.
//!
//! Owns: the read's file I/O.

use super::super::CHUNK;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// The files of one read, each opened once, read through one buffer of [`CHUNK`] bytes.
pub struct Files<'a> {
    paths: &'a [PathBuf],
    open: Vec<Option<File>>,
    buf: Vec<u8>,
}

impl<'a> Files<'a> {
    pub fn new(paths: &'a [PathBuf]) -> Files<'a> {
        let open = paths.iter().map(|_| None).collect();
        Files { paths, open, buf: vec![0; CHUNK] }
    }

    /// Reads bytes `bytes` of the file named `name` (as [`Input::name`] names it), giving
    /// `feed` each piece.
    pub fn fetch(
        &mut self,
        name: &str,
        bytes: std::ops::Range<u64>,
        mut feed: impl FnMut(&[u8]),
    ) -> std::io::Result<()> {
        let at = (self.paths.iter().position(|p| p.to_string_lossy() == name))
            .ok_or_else(|| std::io::Error::other("not among the files read"))?;
        let file = match &mut self.open[at] {
            Some(file) => file,
            slot => slot.insert(File::open(&self.paths[at])?),
        };
        file.seek(SeekFrom::Start(bytes.start))?;
        let mut left = bytes.end.saturating_sub(bytes.start);
        while left > 0 {
            let n = self.buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            file.read_exact(&mut self.buf[..n])?;
            feed(&self.buf[..n]);
            left -= n as u64;
        }
        Ok(())
    }
}

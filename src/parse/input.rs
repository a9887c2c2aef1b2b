//! A file's bytes → its text lines: gzip recognised by its magic bytes and un-gzipped,
//! lines cut with memchr across chunks of any size, and the first bytes looked at to tell
//! a binary file from text (for the sentence about a file that is neither a dump nor an
//! out-of-memory message).

use std::io::Write;

/// Bytes at the start of a file's text that tell a binary file from text.
const SNIFF_BYTES: usize = 4096;

/// Whether `bytes` start with gzip's magic bytes (`1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// One file's bytes on their way to lines. Each line goes to a sink, without its `\n`;
/// the sink returns false to stop the reading of the file.
pub(super) struct Input {
    carry: Vec<u8>,
    gz: Option<flate2::write::MultiGzDecoder<Vec<u8>>>,
    gz_failed: bool,
    /// The first bytes, until there are two to tell gzip from text.
    head: Option<Vec<u8>>,
    /// Bytes of the file as given (compressed, for gzip).
    raw: u64,
    /// Bytes of its text (after gzip).
    bytes: u64,
    /// The file starts with gzip's magic bytes.
    gzip: bool,
    /// Control bytes among the first [`SNIFF_BYTES`] of the text, and how many of those
    /// were seen: a file is judged binary on them whatever the chunks it came in.
    control: usize,
    sniffed: usize,
    /// The sink asked to stop.
    stopped: bool,
}

impl Input {
    pub fn new() -> Self {
        Input {
            carry: Vec::new(),
            gz: None,
            gz_failed: false,
            head: Some(Vec::new()),
            raw: 0,
            bytes: 0,
            gzip: false,
            control: 0,
            sniffed: 0,
            stopped: false,
        }
    }

    /// More bytes of the file.
    pub fn feed(&mut self, chunk: &[u8], sink: &mut impl FnMut(&[u8]) -> bool) {
        if chunk.is_empty() || self.stopped {
            return;
        }
        self.raw += chunk.len() as u64;
        if let Some(mut head) = self.head.take() {
            // The usual first chunk tells gzip from text without being copied.
            let first = if head.is_empty() && chunk.len() >= 2 {
                chunk
            } else {
                head.extend_from_slice(chunk);
                if head.len() < 2 {
                    self.head = Some(head);
                    return;
                }
                &head
            };
            if is_gzip(first) {
                self.gzip = true;
                self.gz = Some(flate2::write::MultiGzDecoder::new(Vec::new()));
            }
            return self.decode(first, sink);
        }
        self.decode(chunk, sink)
    }

    /// The end of the file: what the decoder still holds goes to `sink`; the last line,
    /// when it has no `\n`, is returned (unless the reading was stopped).
    pub fn finish(&mut self, sink: &mut impl FnMut(&[u8]) -> bool) -> Option<Vec<u8>> {
        if let Some(head) = self.head.take() {
            self.decode(&head, sink);
        }
        if let Some(mut gz) = self.gz.take() {
            // `try_finish` hands over what the decoder still holds even when the stream
            // then proves corrupt or cut short (bad checksum, missing trailer): that text
            // is read, as it would have been had it come out with an earlier chunk.
            if gz.try_finish().is_err() {
                self.gz_failed = true;
            }
            let out = std::mem::take(gz.get_mut());
            self.lines(&out, sink);
        }
        (!self.carry.is_empty() && !self.stopped).then(|| std::mem::take(&mut self.carry))
    }

    /// Forgets the start of a line not yet ended: the bytes fed next start a new line.
    pub fn discard_carry(&mut self) {
        self.carry.clear();
    }

    /// The gzip data proved corrupt or cut short.
    pub fn gz_failed(&self) -> bool {
        self.gz_failed
    }

    /// Un-gzips if needed and hands the bytes to the line cutter.
    fn decode(&mut self, chunk: &[u8], sink: &mut impl FnMut(&[u8]) -> bool) {
        match self.gz.take() {
            Some(mut gz) => {
                if !self.gz_failed {
                    if gz.write_all(chunk).is_err() {
                        self.gz_failed = true;
                    }
                    let out = std::mem::take(gz.get_mut());
                    self.lines(&out, sink);
                    *gz.get_mut() = out;
                    gz.get_mut().clear();
                }
                self.gz = Some(gz);
            }
            None => self.lines(chunk, sink),
        }
    }

    /// Cuts `chunk` into lines, keeping an unfinished last line for the next chunk.
    fn lines(&mut self, chunk: &[u8], sink: &mut impl FnMut(&[u8]) -> bool) {
        if self.sniffed < SNIFF_BYTES {
            let head = &chunk[..chunk.len().min(SNIFF_BYTES - self.sniffed)];
            self.control += head
                .iter()
                .filter(|&&c| c < 0x20 && !matches!(c, b'\n' | b'\r' | b'\t'))
                .count();
            self.sniffed += head.len();
        }
        self.bytes += chunk.len() as u64;
        let mut rest = chunk;
        if !self.carry.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(p) => {
                    self.carry.extend_from_slice(&rest[..p]);
                    let line = std::mem::take(&mut self.carry);
                    self.stopped |= !sink(&line);
                    self.carry = line;
                    self.carry.clear();
                    rest = &rest[p + 1..];
                }
                None => {
                    self.carry.extend_from_slice(rest);
                    return;
                }
            }
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', rest) {
            if self.stopped {
                return;
            }
            self.stopped |= !sink(&rest[start..end]);
            start = end + 1;
        }
        self.carry.extend_from_slice(&rest[start..]);
    }

    /// Binary: more than a tenth control bytes at the start (a NUL in a dump line is a bad
    /// line, not a binary file).
    fn is_binary(&self) -> bool {
        self.control * 10 > self.sniffed
    }

    /// The sentence for a file `name` in which no section header was found; `no_oom` says
    /// what the search for an out-of-memory message found (`and it holds no …`).
    pub fn not_a_dump(&self, name: &str, no_oom: &str) -> String {
        if self.raw == 0 {
            format!("{name} is empty.")
        } else if self.gzip && (self.bytes == 0 || self.gz_failed) {
            format!("{name} is gzip-compressed, but its gzip data is corrupt or cut short, so it holds no dump.")
        } else if self.is_binary() || self.gz_failed {
            format!("{name} is not a text file, so it is not an XLA buffer-assignment dump.")
        } else {
            format!(
                "{name} is not an XLA buffer-assignment dump: no line is a section header such as \
                 `BufferAssignment:` or `HloLiveRange (max N):`, {no_oom} \
                 (`BufferAssignment OOM Debugging.`, `Ran out of memory in memory space`)."
            )
        }
    }
}

//! The search for XLA out-of-memory messages in a file that is not a dump.
//!
//! Owns: what the [`Loader`](super::Loader) keeps of a file for that search. While no
//! dump section header has been seen, every line's text is kept, up to
//! [`MAX_OOM_TEXT`] bytes (a log is read to its end even after the dump reader gave up on
//! it); at the first section header the text is dropped and the file is read as a dump
//! only, so a log that holds a dump and an OOM message gives the dump. At the end of a file
//! with no header, [`oom::read_oom`] reads the kept text, which is the file's text (after
//! gzip) as it is; it is cut into the same lines whatever the chunks the file came in, so
//! the result is the same too. A log whose
//! text goes past the cap is searched in its first [`MAX_OOM_TEXT`] bytes, and its
//! [`OomFile::warnings`] say so.

use crate::model::oom::OomLog;
use crate::parse::oom;

/// Bytes of a non-dump file's text kept for the OOM search (64 MiB).
pub const MAX_OOM_TEXT: usize = 64 << 20;

/// The out-of-memory messages found in one file.
#[derive(Debug, Clone, PartialEq)]
pub struct OomFile {
    /// The file's name, as the loader was given it (without folders).
    pub file: String,
    pub log: OomLog,
    /// About the file as a whole (the search stopped at the cap).
    pub warnings: Vec<String>,
}

/// The text of one file kept for the search.
pub(in crate::parse) struct OomSearch {
    text: String,
    /// [`MAX_OOM_TEXT`] (smaller in tests).
    cap: usize,
    /// A section header was seen: the file is a dump, the search is off.
    dump: bool,
    /// The cap was reached.
    full: bool,
}

impl Default for OomSearch {
    fn default() -> Self {
        OomSearch {
            text: String::new(),
            cap: MAX_OOM_TEXT,
            dump: false,
            full: false,
        }
    }
}

impl OomSearch {
    /// One line of the file, without its `\n`; `dump`: a section header has been seen in
    /// the file. Returns whether more lines are wanted.
    pub fn line(&mut self, line: &[u8], dump: bool) -> bool {
        if dump && !self.dump {
            self.dump = true;
            self.text = String::new();
        }
        if self.dump || self.full {
            return false;
        }
        if self.text.len() + line.len() + 1 > self.cap {
            self.full = true;
            return false;
        }
        self.text.push_str(&String::from_utf8_lossy(line));
        self.text.push('\n');
        true
    }

    /// The last line given had no `\n` (the file ends there): the kept text ends as the
    /// file does.
    pub fn unterminated(&mut self) {
        if !self.dump && !self.full && self.text.ends_with('\n') {
            self.text.pop();
        }
    }

    /// The messages in the kept text of file `name`; none for a dump or a file without one.
    /// `Err` holds what to add to the file's "not a dump" sentence.
    pub fn finish(self, name: &str) -> Result<OomFile, &'static str> {
        if self.dump {
            return Err("");
        }
        let Some(log) = oom::read_oom(&self.text) else {
            return Err(if self.full {
                "and its first 64 MiB of text hold no XLA out-of-memory message"
            } else {
                "and it holds no XLA out-of-memory message"
            });
        };
        let warnings = if self.full {
            vec![format!(
                "{name}: only the first 64 MiB of its text were searched for out-of-memory messages"
            )]
        } else {
            Vec::new()
        };
        Ok(OomFile {
            file: name.to_string(),
            log,
            warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESSAGE: &str = "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 16 bytes.
BufferAssignment OOM Debugging.
BufferAssignment stats:
             parameter allocation:    16B
                 total allocation:    16B
Peak buffers:
\tBuffer 1:
\t\tSize: 16B
\t\tShape: f32[4]
\t\t==========================
";

    fn search(text: &str, cap: usize) -> Result<OomFile, &'static str> {
        let mut s = OomSearch {
            cap,
            ..OomSearch::default()
        };
        for line in text.lines() {
            if !s.line(line.as_bytes(), false) {
                break;
            }
        }
        s.finish("x.log")
    }

    #[test]
    fn past_the_cap_the_text_before_it_is_searched_and_the_file_says_so() {
        let filler = "step 1: loss 2.3\n".repeat(100);
        let found = search(&format!("{MESSAGE}{filler}"), 1000).unwrap();
        assert_eq!(found.log.messages[0].buffers.len(), 1);
        assert!(
            found.warnings[0].contains("only the first 64 MiB"),
            "{:?}",
            found.warnings
        );
        let whole = search(&format!("{MESSAGE}{filler}"), MAX_OOM_TEXT).unwrap();
        assert!(whole.warnings.is_empty());
        let late = search(&format!("{filler}{MESSAGE}"), 1000).unwrap_err();
        assert!(late.contains("first 64 MiB"), "{late}");
    }

    #[test]
    fn a_section_header_ends_the_search() {
        let mut s = OomSearch::default();
        assert!(s.line(b"BufferAssignment OOM Debugging.", false));
        assert!(!s.line(b"BufferAssignment:", true));
        assert!(!s.line(b"Peak buffers:", true));
        assert!(s.text.is_empty());
        assert_eq!(s.finish("x").unwrap_err(), "");
    }
}

//! Parsing: bytes of dump files → [`Module`]s. (Being written.)
use crate::model::Module;

/// The result of reading a set of files.
#[derive(Default)]
pub struct Load {
    /// Every module read, in the order first seen.
    pub modules: Vec<Module>,
    /// One sentence per input that could not be read as a dump at all.
    pub errors: Vec<String>,
}

/// Streaming reader: files go in one after another, in chunks of any size.
#[derive(Default)]
pub struct Loader {}

impl Loader {
    pub fn new() -> Self { Loader {} }
    /// Starts a file. `name` is its file name (a path is fine); it names the module.
    pub fn begin_file(&mut self, _name: &str) {}
    /// More bytes of the current file. Gzip is recognised by its magic bytes.
    pub fn feed(&mut self, _chunk: &[u8]) {}
    /// Ends the current file.
    pub fn end_file(&mut self) {}
    /// All modules read, joined (values to live ranges) and checked.
    pub fn finish(self) -> Load { Load::default() }
}

/// Reads whole files at once: `(file name, bytes)`.
pub fn load_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Load {
    let mut loader = Loader::new();
    for (name, bytes) in files {
        loader.begin_file(name);
        loader.feed(bytes);
        loader.end_file();
    }
    loader.finish()
}

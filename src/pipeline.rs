//! The read pipeline: dump files in, joined and analysed modules out, in pieces (and the
//! out-of-memory messages of files that are not dumps, as the [`Loader`] found them).
//!
//! Owns: the order of the work from bytes to what the views show: reading ([`Loader`]:
//! files in chunks), joining ([`crate::Finishing`]: values to live ranges, the dump's own
//! checks), analysing ([`Analyzer`]: one module after the other), and which module is shown
//! first ([`default_module`]). It does no I/O: the caller reads files and feeds their bytes.
//!
//! The CLI runs it to the end ([`Pipeline::finish`], [`open_files`]); the browser calls
//! [`Pipeline::step`] once per task and yields between calls, so the page paints and answers
//! input while a 1 GB dump is joined and analysed. Cancelling is dropping the pipeline. The
//! result is the same however the bytes are chunked and the work is cut.

use crate::analysis::{Analysis, Analyzer};
use crate::model::Module;
use crate::parse::OomFile;
use crate::{Finishing, Load, Loader};

/// One module and its analysis.
pub struct Analysed {
    pub module: Module,
    pub analysis: Analysis,
}

/// What a pipeline read.
#[derive(Default)]
pub struct Loaded {
    /// Every module read, in the order first seen, each with its analysis.
    pub modules: Vec<Analysed>,
    /// The out-of-memory messages of the files that are not dumps ([`Load::oom`]).
    pub oom: Vec<OomFile>,
    /// One sentence per input that is neither a dump nor holds an out-of-memory message
    /// ([`Load::errors`]).
    pub errors: Vec<String>,
    /// The `Used values` bodies left for later ([`Loader::defer_uses`], [`Load::deferred`]).
    pub deferred: Vec<crate::parse::DeferredUses>,
    /// Files of a dump folder skipped as XLA's other output ([`Load::skipped`]).
    pub skipped: usize,
}

impl Loaded {
    /// The module to show first ([`default_module`]).
    pub fn default_module(&self) -> Option<&Analysed> {
        default_module(self.modules.iter().map(|a| &a.module)).map(|i| &self.modules[i])
    }
}

/// Where a pipeline is after a [`Pipeline::step`]: what its next step will do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Joining what was read (values to live ranges, the dump's own checks).
    Joining,
    /// Analysing module `module` (from 0) of `of`.
    Analysing { module: usize, of: usize },
    /// Everything is done: [`Pipeline::finish`] returns at once.
    Done,
}

impl Progress {
    pub fn is_done(self) -> bool {
        self == Progress::Done
    }
}

/// Files in ([`Pipeline::begin_file`], [`Pipeline::feed`]), then joined and analysed a piece
/// at a time ([`Pipeline::step`]) or all at once ([`Pipeline::finish`]).
pub struct Pipeline {
    stage: Stage,
}

enum Stage {
    Reading(Loader),
    Joining(Finishing),
    Analysing(Analysing),
    Done(Loaded),
}

/// The modules joined, analysed one after the other.
struct Analysing {
    waiting: std::vec::IntoIter<Module>,
    current: Option<Analyzer<Module>>,
    of: usize,
    loaded: Loaded,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline::new()
    }
}

impl From<Loader> for Pipeline {
    /// Carries on from a loader that was fed already.
    fn from(loader: Loader) -> Pipeline {
        Pipeline {
            stage: Stage::Reading(loader),
        }
    }
}

impl Pipeline {
    pub fn new() -> Pipeline {
        Pipeline::from(Loader::new())
    }

    /// The loader while files are still read; `None` once [`Pipeline::step`] has started
    /// joining.
    fn loader(&mut self) -> Option<&mut Loader> {
        match &mut self.stage {
            Stage::Reading(loader) => Some(loader),
            _ => None,
        }
    }

    /// Starts a file ([`Loader::begin_file`]). Files begun after the first
    /// [`Pipeline::step`] are not read.
    pub fn begin_file(&mut self, name: &str) {
        if let Some(loader) = self.loader() {
            loader.begin_file(name);
        }
    }

    /// Whether the current file is only searched for an out-of-memory message
    /// ([`Loader::search_only`]).
    pub fn search_only(&mut self, only: bool) {
        if let Some(loader) = self.loader() {
            loader.search_only(only);
        }
    }

    /// More bytes of the current file ([`Loader::feed`]); ignored after the first
    /// [`Pipeline::step`].
    pub fn feed(&mut self, chunk: &[u8]) {
        if let Some(loader) = self.loader() {
            loader.feed(chunk);
        }
    }

    /// Ends the current file ([`Loader::end_file`]).
    pub fn end_file(&mut self) {
        if let Some(loader) = self.loader() {
            loader.end_file();
        }
    }

    /// Does one piece of about `work` units (joining: values, live ranges and `Used values`
    /// entries; analysing: blocks or steps, [`Analyzer::step`]) and says what the next
    /// piece will do. The first call ends reading. A caller that yields between pieces
    /// may choose `work` by the stage the last call returned.
    pub fn step(&mut self, work: usize) -> Progress {
        let stage = std::mem::replace(&mut self.stage, Stage::Done(Loaded::default()));
        self.stage = match stage {
            Stage::Reading(loader) => Stage::Joining(loader.finishing()),
            Stage::Joining(mut finishing) => {
                if finishing.step(work) {
                    Stage::Analysing(Analysing::new(finishing.into_load()))
                } else {
                    Stage::Joining(finishing)
                }
            }
            Stage::Analysing(mut analysing) => {
                if analysing.step(work) {
                    Stage::Done(analysing.loaded)
                } else {
                    Stage::Analysing(analysing)
                }
            }
            done @ Stage::Done(_) => done,
        };
        self.progress()
    }

    /// What the next [`Pipeline::step`] will do.
    pub fn progress(&self) -> Progress {
        match &self.stage {
            Stage::Reading(_) | Stage::Joining(_) => Progress::Joining,
            Stage::Analysing(a) => Progress::Analysing {
                module: a.loaded.modules.len(),
                of: a.of,
            },
            Stage::Done(_) => Progress::Done,
        }
    }

    /// Runs what is left and returns what was read.
    pub fn finish(mut self) -> Loaded {
        while !self.step(usize::MAX).is_done() {}
        match self.stage {
            Stage::Done(loaded) => loaded,
            _ => Loaded::default(),
        }
    }
}

impl Analysing {
    fn new(load: Load) -> Analysing {
        let of = load.modules.len();
        Analysing {
            waiting: load.modules.into_iter(),
            current: None,
            of,
            loaded: Loaded {
                modules: Vec::with_capacity(of),
                oom: load.oom,
                errors: load.errors,
                deferred: load.deferred,
                skipped: load.skipped,
            },
        }
    }

    /// One piece: setting up the next module's analysis, or `work` units of it. Whether
    /// every module is done.
    fn step(&mut self, work: usize) -> bool {
        match self.current.as_mut() {
            None => match self.waiting.next() {
                Some(module) => self.current = Some(Analyzer::new(module)),
                None => return true,
            },
            Some(analyzer) => {
                if analyzer.step(work) {
                    if let Some((module, analysis)) =
                        self.current.take().map(Analyzer::finish_with_module)
                    {
                        self.loaded.modules.push(Analysed { module, analysis });
                    }
                }
            }
        }
        self.current.is_none() && self.waiting.len() == 0
    }
}

/// Reads, joins and analyses whole files at once: `(file name, bytes)`.
pub fn open_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Loaded {
    let mut pipeline = Pipeline::new();
    for (name, bytes) in files {
        pipeline.begin_file(name);
        pipeline.feed(bytes);
        pipeline.end_file();
    }
    pipeline.finish()
}

/// Position of the module shown when nothing else is asked for: the one with the most
/// allocated bytes ([`Module::total_bytes`]), the first of equals, so that the choice
/// depends on nothing but the order read. `None` when there is no module.
pub fn default_module<'a>(modules: impl IntoIterator<Item = &'a Module>) -> Option<usize> {
    modules
        .into_iter()
        .enumerate()
        .max_by_key(|&(i, m)| (m.total_bytes(), std::cmp::Reverse(i)))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::Summary;

    /// Split files of one module (new XLA), a one-file dump of another, and a file that is
    /// not a dump.
    const FILES: [(&str, &[u8]); 5] = [
        (
            "cpu_mlp_train.buffer-assignment.txt",
            include_bytes!("../tests/fixtures/cpu/jax0.10.2/cpu_mlp_train.buffer-assignment.txt"),
        ),
        (
            "cpu_mlp_train.buffer-assignment-values.txt",
            include_bytes!(
                "../tests/fixtures/cpu/jax0.10.2/cpu_mlp_train.buffer-assignment-values.txt"
            ),
        ),
        (
            "cpu_mlp_train.live-range.txt",
            include_bytes!("../tests/fixtures/cpu/jax0.10.2/cpu_mlp_train.live-range.txt"),
        ),
        (
            "000_0cb419b3147a3cb6.txt",
            include_bytes!("../tests/fixtures/tpu/000_0cb419b3147a3cb6.txt"),
        ),
        ("notes.txt", b"not a dump\n"),
    ];

    /// Everything a reader sees of what was read: the summary JSON (names, counts, bytes,
    /// peaks, warnings), every analysis in full, and the errors.
    fn fingerprint(loaded: &Loaded) -> (String, String, Vec<String>) {
        let summary = Summary::new(loaded.modules.iter().map(|a| (&a.module, &a.analysis)));
        let analyses: Vec<&Analysis> = loaded.modules.iter().map(|a| &a.analysis).collect();
        (
            summary.to_json(),
            format!("{analyses:?}"),
            loaded.errors.clone(),
        )
    }

    /// Fed in chunks of `chunk` bytes and run in pieces of `work`, recording the progress.
    fn in_pieces(chunk: usize, work: usize) -> (Loaded, Vec<Progress>) {
        let mut pipeline = Pipeline::new();
        for (name, bytes) in FILES {
            pipeline.begin_file(name);
            for piece in bytes.chunks(chunk) {
                pipeline.feed(piece);
            }
            pipeline.end_file();
        }
        let mut seen = vec![pipeline.progress()];
        while !pipeline.progress().is_done() {
            seen.push(pipeline.step(work));
            assert!(seen.len() < 1_000_000, "the pipeline does not end");
        }
        (pipeline.finish(), seen)
    }

    #[test]
    fn pieces_give_what_one_go_gives() {
        let whole = open_files(FILES);
        assert_eq!(whole.modules.len(), 2);
        assert!(whole.modules.iter().all(|a| !a.analysis.spaces.is_empty()));
        assert_eq!(whole.errors.len(), 1, "{:?}", whole.errors);
        assert!(whole.errors[0].contains("notes.txt"), "{:?}", whole.errors);
        let expected = fingerprint(&whole);
        for (chunk, work) in [(1 << 20, usize::MAX), (7, 1), (4096, 3), (100, 1000)] {
            let (loaded, _) = in_pieces(chunk, work);
            assert!(
                fingerprint(&loaded) == expected,
                "chunks of {chunk} bytes, pieces of {work}"
            );
        }
    }

    #[test]
    fn progress_goes_forward_one_module_at_a_time() {
        let (loaded, seen) = in_pieces(4096, 50);
        let of = loaded.modules.len();
        assert_eq!(seen.first(), Some(&Progress::Joining));
        assert_eq!(seen.last(), Some(&Progress::Done));
        // Small pieces: several steps join, and several analyse each module.
        let joining = seen.iter().filter(|p| **p == Progress::Joining).count();
        assert!(joining > 2, "{seen:?}");
        let rank = |p: &Progress| match *p {
            Progress::Joining => 0,
            Progress::Analysing { module, of: n } => {
                assert_eq!(n, of);
                1 + module
            }
            Progress::Done => of + 2,
        };
        assert!(
            seen.windows(2).all(|w| rank(&w[0]) <= rank(&w[1])),
            "{seen:?}"
        );
        for module in 0..of {
            let pieces = seen
                .iter()
                .filter(|p| **p == Progress::Analysing { module, of })
                .count();
            assert!(pieces > 2, "module {module}: {seen:?}");
        }
    }

    #[test]
    fn done_stays_done_and_late_bytes_are_not_read() {
        let mut pipeline = Pipeline::new();
        pipeline.begin_file(FILES[3].0);
        pipeline.feed(FILES[3].1);
        assert_eq!(pipeline.step(usize::MAX), Progress::Joining);
        pipeline.begin_file(FILES[0].0);
        pipeline.feed(FILES[0].1);
        while !pipeline.step(1).is_done() {}
        assert_eq!(pipeline.step(1), Progress::Done);
        let loaded = pipeline.finish();
        assert_eq!(loaded.modules.len(), 1);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    }

    #[test]
    fn nothing_read_is_no_module_and_the_errors() {
        assert!(Pipeline::new().finish().modules.is_empty());
        let loaded = open_files([FILES[4]]);
        assert!(loaded.modules.is_empty());
        assert_eq!(loaded.errors.len(), 1);
        assert!(loaded.default_module().is_none());
    }

    #[test]
    fn a_fed_loader_carries_on() {
        let mut loader = Loader::new();
        loader.begin_file(FILES[3].0);
        loader.feed(FILES[3].1);
        let loaded = Pipeline::from(loader).finish();
        assert_eq!(fingerprint(&loaded), fingerprint(&open_files([FILES[3]])));
    }

    #[test]
    fn the_default_module_has_the_most_allocated_bytes_first_of_equals() {
        let module = |name: &str, sizes: &[u64]| {
            let mut m = Module {
                name: name.into(),
                ..Module::default()
            };
            for (index, &size) in (0..).zip(sizes) {
                m.allocations.push(crate::model::Allocation {
                    index,
                    size,
                    color: 0,
                    page: None,
                    parameter: None,
                    output_shape: None,
                    flags: Default::default(),
                    values: 0..0,
                });
            }
            m
        };
        let ms = [
            module("a", &[10]),
            module("b", &[5, 20]),
            module("c", &[25]),
            module("d", &[1]),
        ];
        assert_eq!(default_module(&ms), Some(1));
        assert_eq!(default_module(&ms[2..]), Some(0));
        assert_eq!(default_module(&ms[..0]), None);
        let big = [module("x", &[u64::MAX, 1]), module("y", &[u64::MAX])];
        assert_eq!(
            default_module(&big),
            Some(0),
            "sums saturate; equals: the first"
        );
    }
}

//! Shared by the integration tests: finding the fixture dumps (and skipping when
//! ../shared is absent), grouping their files into modules, reading a module by stem.
//! Comparing reads is in compare.rs, the deferred read in deferred.rs; the independent
//! scanner (scan.rs) and the other helper files are declared by path by the binaries that
//! use them.
#![allow(dead_code)]

pub mod compare;
pub mod deferred;
pub mod occupied;

pub use compare::*;
pub use deferred::*;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One module's files: `(file name, bytes)`, in a stable order.
#[derive(Clone)]
pub struct ModuleFiles {
    /// `tpu/000_...` or `cpu/jax0.6.2/cpu_tiny`: folder + stem, for messages.
    pub label: String,
    /// The stem shared by the files (`cpu_tiny`), which names the module.
    pub stem: String,
    /// The folder below `fixtures/` (or `dumps/`): `cpu/jax0.10.2`, `tpu`.
    pub folder: String,
    pub files: Vec<(String, Vec<u8>)>,
}

impl ModuleFiles {
    pub fn inputs(&self) -> Vec<(&str, &[u8])> {
        self.files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect()
    }
    pub fn is_report(name: &str) -> bool {
        name.contains("memory-usage-report")
    }
    /// The files that are not memory-usage reports.
    pub fn dump_files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files
            .iter()
            .filter(|(n, _)| !Self::is_report(n))
            .map(|(n, b)| (n.as_str(), b.as_slice()))
    }
    pub fn report_file(&self) -> Option<(&str, &[u8])> {
        self.files
            .iter()
            .find(|(n, _)| Self::is_report(n))
            .map(|(n, b)| (n.as_str(), b.as_slice()))
    }
}

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixtures_dir() -> PathBuf {
    manifest_dir().join("tests").join("fixtures")
}

/// `../shared/dumps` next to the repository (`$BUFSCOPE_SHARED/dumps` when that is set, as
/// for the browser tests), when it is there.
pub fn shared_dumps_dir() -> Option<PathBuf> {
    let shared = std::env::var_os("BUFSCOPE_SHARED")
        .map_or_else(|| manifest_dir().join("..").join("shared"), PathBuf::from);
    let dir = shared.join("dumps");
    dir.is_dir().then_some(dir)
}

/// Whether the tests run under CI (`CI=true`, as CI services and `.ci/run` set it).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Marks the calling test as skipped for want of `needs` (`../shared/dumps`): prints
/// `SKIPPED: TEST: needs ...` on the terminal, past libtest's capture of passing tests'
/// output, so a skip does not pass as a silent `ok`. Under CI, which always has `needs`,
/// the test fails instead.
pub fn skip(test: &str, needs: &str) {
    let line = format!("SKIPPED: {test}: needs {needs}");
    if under_ci() {
        panic!("{line}, and CI=true: CI must not skip it");
    }
    // `eprintln!` would be captured (and hidden) for a passing test: write to fd 2.
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Marks the calling test as left to the release run (`./dev test` runs its file again with
/// `--release`): prints `SKIPPED: TEST: NOTE in a debug build` on the terminal, never fails.
pub fn skip_in_debug(test: &str, what: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED: {test}: {what} in a debug build"
    );
}

/// `../shared/dumps`, or `None` after reporting `test` as skipped ([`skip`]).
pub fn shared_dumps_or_skip(test: &str) -> Option<PathBuf> {
    let dir = shared_dumps_dir();
    if dir.is_none() {
        skip(test, "../shared/dumps beside the repository");
    }
    dir
}

/// `load_files` of the files under `dir` named `stem.part`, one for each of `parts`.
pub fn load_parts(dir: &Path, stem: &str, parts: &[&str]) -> bufscope::Load {
    let files: Vec<(String, Vec<u8>)> = parts
        .iter()
        .map(|p| {
            let name = format!("{stem}.{p}");
            (name.clone(), std::fs::read(dir.join(&name)).unwrap())
        })
        .collect();
    bufscope::load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())))
}

/// The one module of run `run` in `../shared/dumps/tpu-aot/FOLDER` (its dump files and HLO
/// text read together), or `None` after reporting it skipped ([`skip`]).
pub fn shared_tpu_module(folder: &str, run: &str) -> Option<bufscope::model::Module> {
    let dumps = shared_dumps_or_skip(run)?;
    let files = modules_under(&dumps.join("tpu-aot").join(folder), |_, stem| stem == run);
    assert_eq!(files.len(), 1, "{folder}/{run}");
    let load = bufscope::load_files(files[0].inputs());
    Some(load.modules.into_iter().next().unwrap())
}

/// The files of `../shared/dumps/oom` (real out-of-memory messages; its README left out), in
/// name order, or `None` after reporting `test` as skipped ([`skip`]).
pub fn shared_oom_or_skip(test: &str) -> Option<Vec<PathBuf>> {
    let dir = shared_dumps_dir()
        .map(|d| d.join("oom"))
        .filter(|d| d.is_dir());
    let Some(dir) = dir else {
        skip(test, "../shared/dumps/oom beside the repository");
        return None;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("README")
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 8,
        "expected the 8 OOM files in {}",
        dir.display()
    );
    Some(files)
}

/// The stem of a dump file name: everything before the first `.`.
pub fn stem_of(file_name: &str) -> &str {
    file_name.split('.').next().unwrap_or(file_name)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "txt") {
            out.push(p);
        }
    }
}

/// Every module under `root`, its files grouped by folder and stem, for which `keep(folder,
/// stem)` holds.
pub fn modules_under(root: &Path, keep: impl Fn(&str, &str) -> bool) -> Vec<ModuleFiles> {
    let mut paths = Vec::new();
    walk(root, &mut paths);
    let mut groups: BTreeMap<(String, String), Vec<PathBuf>> = BTreeMap::new();
    for p in paths {
        let folder = p
            .parent()
            .unwrap()
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let stem = stem_of(&name).to_string();
        groups.entry((folder, stem)).or_default().push(p);
    }
    // In a folder as XLA lays it out (`module_NNNN.name.…`), a module number whose files
    // hold no buffer assignment is a compilation XLA stopped before it (jax's `jit_init`
    // writes its `before_optimizations` under one number and its dump under another): no
    // module to read.
    let xla_without_dump = |stem: &str, paths: &[PathBuf]| {
        stem.starts_with("module_")
            && !paths
                .iter()
                .any(|p| p.to_string_lossy().contains("buffer-assignment"))
    };
    groups
        .into_iter()
        .filter(|((folder, stem), paths)| keep(folder, stem) && !xla_without_dump(stem, paths))
        .map(|((folder, stem), paths)| ModuleFiles {
            label: format!("{folder}/{stem}"),
            files: paths
                .iter()
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        std::fs::read(p).unwrap(),
                    )
                })
                .collect(),
            stem,
            folder,
        })
        .collect()
}

/// Every fixture module (tests/fixtures).
pub fn fixture_modules() -> Vec<ModuleFiles> {
    // `folders/` holds whole dump folders (HLO texts beside the dumps) for the folder tests,
    // `sweep/` and `sweep-maxtext/` the compilations of sweeps for tests/sweep.rs.
    let m = modules_under(&fixtures_dir(), |folder, _| {
        !folder.starts_with("folders") && !folder.starts_with("sweep")
    });
    assert_eq!(
        m.len(),
        24,
        "expected the 24 fixture modules in tests/fixtures (23 real, 1 edited)"
    );
    m
}

pub fn fixture_module(label: &str) -> ModuleFiles {
    fixture_modules()
        .into_iter()
        .find(|m| m.label == label)
        .unwrap_or_else(|| panic!("no fixture module {label}"))
}

/// The one module read from the files of `dir` whose names start with `stem` (its HLO text
/// after optimizations joined; the one before left out).
pub fn load_stem(dir: &Path, stem: &str) -> bufscope::model::Module {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(stem)))
        .filter(|p| !p.to_string_lossy().contains("before_optimizations"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    let load = bufscope::load_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let mut modules = load.modules;
    assert_eq!(modules.len(), 1, "{stem}: {:?}", load.errors);
    let m = modules.remove(0);
    assert!(m.hlo.is_some(), "{stem}: no HLO text joined");
    m
}

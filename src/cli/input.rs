//! Reading for the command line: which files the operands name (folders give their dump
//! files), reading them in chunks into the core's [`Pipeline`] (with `Used values` parsed
//! on a second thread, [`super::bodies`], or in one pass where that does not read as one
//! pass would), and choosing the module to draw. Problems with single files go to stderr;
//! no module at all is a [`Failure`].

use super::{Failure, CHUNK};
use bufscope::pipeline::{Analysed, Loaded, Pipeline};
use bufscope::units::human_bytes;
use std::fs::File;
use std::path::{Path, PathBuf};


/// Reads every dump file named by `paths` (files, or folders of dumps), joins and analyses
/// the modules; a file that is not a dump gives its out-of-memory messages. Nothing read
/// at all is a [`Failure`].
pub fn open(paths: &[PathBuf]) -> Result<Loaded, Failure> {
    let Chosen {
        files,
        searched,
        skipped,
    } = dump_files(paths);
    if files.is_empty() {
        return Err(Failure("no dump file to read".into()));
    }
    let mut loaded = super::bodies::read(&files, &searched)
        .unwrap_or_else(|| read_one_pass(&files, &searched));
    loaded.skipped += skipped;
    for e in &loaded.errors {
        eprintln!("bufscope: {e}");
    }
    if loaded.skipped > 0 {
        eprintln!(
            "bufscope: {}",
            bufscope::parse::skipped_sentence(loaded.skipped)
        );
    }
    if loaded.modules.is_empty() && loaded.oom.is_empty() {
        let what = if files.len() == 1 {
            "the file given"
        } else {
            "any of the files given"
        };
        return Err(Failure(format!(
            "no module and no out-of-memory message could be read from {what}"
        )));
    }
    Ok(loaded)
}

/// Reads, joins and analyses `files` in one pass, saying on stderr which could not be read;
/// those `searched` are only searched for an out-of-memory message ([`Chosen::searched`]).
pub fn read_one_pass(files: &[PathBuf], searched: &[PathBuf]) -> Loaded {
    let mut pipeline = Pipeline::new();
    let mut buf = vec![0u8; CHUNK];
    for path in files {
        if let Err(e) = feed_file(&mut pipeline, path, searched.contains(path), &mut buf) {
            eprintln!("bufscope: cannot read {}: {e}", path.display());
        }
    }
    pipeline.finish()
}

/// Streams one file into the pipeline, `buf.len()` bytes at a time.
fn feed_file(
    pipeline: &mut Pipeline,
    path: &Path,
    search_only: bool,
    buf: &mut [u8],
) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    pipeline.begin_file(&path.to_string_lossy());
    pipeline.search_only(search_only);
    let result = super::stream(&mut file, buf, |chunk| pipeline.feed(chunk));
    pipeline.end_file();
    result
}


/// The files to read ([`dump_files`]).
#[derive(Default)]
pub struct Chosen {
    /// Each file operand as is, and the dump files of each folder operand in name order,
    /// then their other texts, then their HLO texts.
    pub files: Vec<PathBuf>,
    /// The folders' other texts (a `compile.log`: [`bufscope::parse::is_other_text`]),
    /// read only for an out-of-memory message.
    pub searched: Vec<PathBuf>,
    /// How many other files the folders hold (with the texts past
    /// [`bufscope::parse::MAX_SEARCHED_TEXT`]).
    pub skipped: usize,
}

/// The files to read ([`Chosen`]). Operands that are neither file nor folder are reported
/// on stderr.
pub fn dump_files(paths: &[PathBuf]) -> Chosen {
    let mut chosen = Chosen::default();
    for path in paths {
        let p = path.display();
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => match folder_dumps(path) {
                Ok(found) if found.files.is_empty() && found.skipped == 0 => {
                    eprintln!("bufscope: no dump files in {p} (no .txt or .txt.gz file)")
                }
                Ok(found) if found.files.is_empty() => {
                    eprintln!("bufscope: no dump files in {p} ({} other files)", found.skipped)
                }
                Ok(found) => {
                    chosen.files.extend(found.files);
                    chosen.searched.extend(found.searched);
                    chosen.skipped += found.skipped;
                }
                Err(e) => eprintln!("bufscope: cannot list {p}: {e}"),
            },
            Ok(_) => chosen.files.push(path.clone()),
            Err(e) => eprintln!("bufscope: cannot read {p}: {e}"),
        }
    }
    chosen
}

/// The dump files of a folder in name order, then its other texts up to
/// [`bufscope::parse::MAX_SEARCHED_TEXT`], then its HLO texts, and how many other files it
/// holds ([`bufscope::parse::folder_plan`]).
fn folder_dumps(dir: &Path) -> std::io::Result<Chosen> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let plan = bufscope::parse::folder_plan(&names);
    let (searched, too_big): (Vec<PathBuf>, Vec<PathBuf>) = (plan.texts.iter())
        .map(|&i| files[i].clone())
        .partition(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.len() <= bufscope::parse::MAX_SEARCHED_TEXT)
        });
    let chosen = (plan.dumps.iter().map(|&i| files[i].clone()))
        .chain(searched.iter().cloned())
        .chain(plan.hlo.iter().map(|&i| files[i].clone()));
    Ok(Chosen {
        files: chosen.collect(),
        searched,
        skipped: plan.skipped + too_big.len(),
    })
}

/// The module called `name` (or, failing that, the only one whose name contains it); by
/// default [`bufscope::pipeline::default_module`], saying so when there was a choice.
pub fn pick_module<'a>(loaded: &'a Loaded, name: Option<&str>) -> Result<&'a Analysed, Failure> {
    let modules = &loaded.modules;
    let names = || {
        modules
            .iter()
            .map(|a| a.module.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(name) = name {
        if let Some(a) = modules.iter().find(|a| a.module.name == name) {
            return Ok(a);
        }
        let partial: Vec<&Analysed> = modules
            .iter()
            .filter(|a| a.module.name.contains(name))
            .collect();
        return match partial.as_slice() {
            [one] => Ok(one),
            [] => Err(Failure(format!(
                "no module named '{name}'; read: {}",
                names()
            ))),
            _ => Err(Failure(format!(
                "several modules match '{name}': {}",
                names()
            ))),
        };
    }
    let best = loaded
        .default_module()
        .ok_or_else(|| {
            Failure(if loaded.oom.is_empty() {
                "no module to draw".into()
            } else {
                "no module to draw: only out-of-memory messages were read (`bufscope summary` shows them)"
                    .into()
            })
        })?;
    if modules.len() > 1 {
        eprintln!(
            "bufscope: {} modules read; drawing {} ({} allocated), the largest; choose another with --module NAME",
            modules.len(),
            best.module.name,
            human_bytes(best.module.total_bytes())
        );
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_give_their_dump_files_in_name_order() {
        let dir = std::env::temp_dir().join(format!("bufscope-cli-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub.buffer-assignment.txt")).unwrap();
        for name in [
            "b.live-range.txt.gz",
            "a.buffer-assignment.txt",
            "a.buffer-assignment-values.txt",
            "a.memory-usage-report.txt",
            "notes.txt",
            "a.buffer-assignment.txt.bak",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let chosen = folder_dumps(&dir).unwrap();
        let names: Vec<_> = chosen
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            names,
            [
                "a.buffer-assignment-values.txt",
                "a.buffer-assignment.txt",
                "a.memory-usage-report.txt",
                "b.live-range.txt.gz",
                "notes.txt"
            ]
        );
        // A text that is no dump is read only for an out-of-memory message.
        assert_eq!(chosen.searched.len(), 1);
        assert!(chosen.searched[0].ends_with("notes.txt"));
    }
}

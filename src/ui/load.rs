//! The loading flow: one read, from the files given to the modules on screen, in four
//! steps — read the files in slices ([`read::read_files`]), finish the join in pieces
//! ([`bufscope::Finishing::step`]), analyse each module in pieces ([`Analyzer::step`]),
//! show — with the progress bar's figures, Cancel, and the report of what came of it.
//! Between pieces each step yields to the page ([`read::next_task`]); a read that a newer
//! one (or Cancel) has made stale stops at its next piece and changes nothing.

use std::sync::Arc;

use bufscope::analysis::Analyzer;
use bufscope::model::Module;
use bufscope::Load;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::read::{self, Fed, Picked};
use super::state::Shown;
use super::{reveal_report, AppState, Outcome, Reading, Report, Timings};

/// Units of analysis work per task ([`Analyzer::step`]): a block or a step each, about
/// 15 ms natively, 2 to 3 times that in wasm.
const ANALYSIS_PIECE: usize = 150_000;
/// Items of joining per task ([`bufscope::Finishing::step`]): a value, a live range or a
/// `Used values` entry each, about 40 ns each in wasm, so about 10 ms.
const JOIN_PIECE: usize = 250_000;

/// Starts reading `files`; a read already under way is abandoned.
pub(super) fn start_load(st: AppState, files: Vec<Picked>) {
    if files.is_empty() {
        report_failure(
            st,
            "Nothing was read.".into(),
            vec!["No files were found in what was dropped or picked.".into()],
        );
        return;
    }
    let (files, skipped) = read::select(files);
    let generation = st.generation.get_value() + 1;
    st.generation.set_value(generation);
    let flow = Flow {
        st,
        generation,
        names: files.iter().map(|p| p.name.clone()).collect(),
        skipped,
        reading: Reading {
            files: files.len(),
            bytes: files.iter().map(|p| p.file.size() as u64).sum(),
            fraction: 0.0,
            analysing: false,
        },
    };
    st.reading.set(Some(flow.reading.clone()));
    spawn_local(flow.run(files));
}

/// Stops the read under way; the page keeps what it showed before it.
pub(super) fn cancel(st: AppState) {
    if st.reading.get_untracked().is_none() {
        return;
    }
    st.generation.update_value(|g| *g += 1);
    st.reading.set(None);
    report_failure(
        st,
        "Reading cancelled; nothing new was opened.".into(),
        Vec::new(),
    );
}

/// Reports a read (or attempt) that opened no module: the view below stays as it was.
pub(super) fn report_failure(st: AppState, line: String, errors: Vec<String>) {
    let kept = st.view.get_untracked().map(|o| o.what.clone());
    st.report.set(Some(Arc::new(Report {
        line,
        errors,
        kept,
        opened: false,
        timings: None,
    })));
}

/// "NAME" for one file, "N files" for more.
fn describe(names: &[String]) -> String {
    match names {
        [one] => one.clone(),
        _ => format!("{} files", names.len()),
    }
}

/// One read under way.
struct Flow {
    st: AppState,
    /// This read's number ([`AppState::generation`] while it is current).
    generation: u64,
    /// The names of the files read.
    names: Vec<String>,
    /// Files of folders not read (not named like dumps).
    skipped: usize,
    reading: Reading,
}

impl Flow {
    /// Whether this read is still the one the page waits for.
    fn current(&self) -> bool {
        self.st.generation.get_value() == self.generation
    }

    /// Yields to the page; whether this read is still current afterwards.
    async fn pause(&self) -> bool {
        read::next_task().await;
        self.current()
    }

    /// Read, join, analyse, show.
    async fn run(self, files: Vec<Picked>) {
        let started = js_sys::Date::now();
        let Some(fed) = self.read(files).await else {
            return;
        };
        let mut timings = Timings {
            read: js_sys::Date::now() - started,
            parse: fed.parse_ms,
            ..Timings::default()
        };
        // Let the page paint "Analysing" and handle input first.
        self.st.reading.set(Some(Reading {
            fraction: 1.0,
            analysing: true,
            ..self.reading.clone()
        }));
        if !self.pause().await {
            return;
        }
        let Some(load) = self.join(fed, &mut timings).await else {
            return;
        };
        let Some(modules) = self.analyse(load.modules, &mut timings).await else {
            return;
        };
        if !self.pause().await {
            return;
        }
        self.show(modules, load.errors, timings);
        if self.pause().await {
            reveal_report();
        }
    }

    /// Step 1: every file read in slices and fed to the loader, the progress bar following.
    async fn read(&self, files: Vec<Picked>) -> Option<Fed> {
        let st = self.st;
        read::read_files(
            &files,
            |fraction| {
                if self.current() {
                    st.reading.update(|r| {
                        if let Some(r) = r {
                            r.fraction = fraction;
                        }
                    });
                }
            },
            || !self.current(),
        )
        .await
    }

    /// Step 2: joining and checking, in pieces.
    async fn join(&self, fed: Fed, timings: &mut Timings) -> Option<Load> {
        let t = js_sys::Date::now();
        let mut finishing = fed.loader.finishing();
        while !finishing.step(JOIN_PIECE) {
            if !self.pause().await {
                return None;
            }
        }
        let mut load = finishing.into_load();
        load.errors.extend(fed.errors);
        timings.join = js_sys::Date::now() - t;
        Some(load)
    }

    /// Step 3: each module analysed in pieces, each piece in its own task.
    async fn analyse(
        &self,
        modules: Vec<Module>,
        timings: &mut Timings,
    ) -> Option<Vec<Arc<Shown>>> {
        let mut shown = Vec::with_capacity(modules.len());
        for module in modules {
            if !self.pause().await {
                return None;
            }
            let t = js_sys::Date::now();
            let mut analyzer = Analyzer::new(&module);
            while !analyzer.step(ANALYSIS_PIECE) {
                if !self.pause().await {
                    return None;
                }
            }
            let analysis = analyzer.finish();
            timings.analyse = timings.analyse.max(js_sys::Date::now() - t);
            shown.push(Arc::new(Shown { module, analysis }));
        }
        Some(shown)
    }

    /// Step 4: the report, and the modules if there are any (else the view stays).
    fn show(&self, modules: Vec<Arc<Shown>>, errors: Vec<String>, timings: Timings) {
        let st = self.st;
        st.reading.set(None);
        let mut line = format!("Read {}", describe(&self.names));
        let skipped = self.skipped;
        if skipped > 0 {
            line.push_str(&format!(
                " (skipped {skipped} other file{} in the folder)",
                if skipped == 1 { "" } else { "s" }
            ));
        }
        if modules.is_empty() {
            let mut errors = errors;
            if errors.is_empty() {
                errors.push("No buffer-assignment module was found in these files.".into());
            }
            report_failure(st, line, errors);
            return;
        }
        st.report.set(Some(Arc::new(Report {
            line,
            errors,
            kept: None,
            opened: true,
            timings: Some(timings),
        })));
        st.view.set(Some(Arc::new(Outcome {
            what: describe(&self.names),
            modules,
        })));
    }
}

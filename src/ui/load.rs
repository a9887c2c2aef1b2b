//! The loading flow: one read, from the files given to the modules on screen, in four
//! steps — read the files through the core's read machine ([`read::read_files`]) leaving the bodies of `Used
//! values` for later, join and analyse in pieces through the core's [`Pipeline`], show the
//! diagrams, then read those bodies and show the modules complete ([`PageRead::complete`]) —
//! with the progress bar's figures, Cancel, and the report of what came of it.
//! Between pieces each step yields to the page ([`tasks::next_task`]); a read that a newer
//! one (or Cancel) has made stale stops at its next piece and changes nothing.

use std::sync::Arc;

use bufscope::answers::paired::Paired;
use bufscope::model::oom::OomLog;
use bufscope::parse::{DeferredUses, OomFile};
use bufscope::pipeline::{Pipeline, Progress};
use leptos::prelude::*;
use leptos::task::spawn_local;

mod complete;
mod hlo;

use super::read::{self, Fed, Picked};
use super::state::Shown;
use super::tasks;
use super::read::uses_worker::UsesJobs;
use super::app::{AppState, Outcome, Reading, Report, Timings};

/// Units of analysis work per task ([`Pipeline::step`] while analysing): a block or a step each, about
/// 15 ms natively, 2 to 3 times that in wasm.
const ANALYSIS_PIECE: usize = 150_000;
/// Items of joining per task ([`Pipeline::step`] while joining): a value, a live range or a
/// `Used values` entry each, about 40 ns each in wasm, so about 10 ms.
const JOIN_PIECE: usize = 250_000;

/// Where the modules of a read go.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// The page: they replace the modules on screen (and end a comparison).
    Page,
    /// The other side of a comparison with the modules on screen ([`super::compare`]).
    Compare,
    /// One more configuration of the sweep on screen ([`super::sweep`]): its modules join
    /// the read on screen.
    Sweep,
}

/// Starts reading `files`; a read already under way is abandoned.
pub(super) fn start_load(st: AppState, files: Vec<Picked>) {
    start_load_into(st, files, Target::Page);
}

/// Starts reading `files` for `target`; a read already under way is abandoned. The page's
/// reads leave `Used values` for after the diagrams ([`PageRead::complete`]).
pub(super) fn start_load_into(st: AppState, files: Vec<Picked>, target: Target) {
    start(st, files, target, target == Target::Page);
}

/// Starts reading `files` for `target`, with `Used values` left for later or not.
fn start(st: AppState, files: Vec<Picked>, target: Target, defer: bool) {
    if files.is_empty() {
        report_failure(
            st,
            "Nothing was read.".into(),
            vec!["No files were found in what was dropped or picked.".into()],
        );
        return;
    }
    let (files, hlo, skipped) = read::select(files);
    if files.is_empty() {
        report_failure(
            st,
            "Nothing was read.".into(),
            vec!["Only HLO module texts were given: they are read beside a dump's files (`*-buffer-assignment.txt`, …).".into()],
        );
        return;
    }
    let generation = st.generation.get_value() + 1;
    st.generation.set_value(generation);
    // A completion under way is abandoned with the read it belonged to.
    st.completing.set(None);
    let flow = PageRead {
        st,
        target,
        defer,
        generation,
        names: files.iter().map(|p| p.name.clone()).collect(),
        skipped: std::cell::Cell::new(skipped),
        hlo,
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

/// The modules on screen (`signal`: the view or the comparison), taken out to be changed in
/// place and put back; a copy of the list when something else holds it.
fn take_outcome(signal: RwSignal<Option<Arc<Outcome>>>) -> Option<Outcome> {
    let outcome = signal.try_update_untracked(Option::take).flatten()?;
    Some(Arc::try_unwrap(outcome).unwrap_or_else(|shared| Outcome {
        what: shared.what.clone(),
        modules: shared.modules.clone(),
        read: shared.read,
    }))
}

/// `shown` taken out of its `Arc` to be changed in place (`what` it is for, as the warning
/// says it), or, when something else holds it (the views keep none: a view that does is a
/// bug), a copy ([`Shown::copy`]) after a console warning.
fn owned(shown: Arc<Shown>, what: &str) -> Shown {
    Arc::try_unwrap(shown).unwrap_or_else(|held| {
        leptos::logging::warn!(
            "bufscope: {} is held elsewhere: {what} from a copy",
            held.module.name
        );
        held.copy()
    })
}

/// Reports a read (or attempt) that opened no module: the view below stays as it was.
pub(super) fn report_failure(st: AppState, line: String, errors: Vec<String>) {
    report_not_opened(st, line, errors, None);
}

/// The report of a read that opened no module, saying which module stays on screen.
fn report_not_opened(st: AppState, line: String, errors: Vec<String>, timings: Option<Timings>) {
    let kept = st.view.get_untracked().map(|o| o.what.clone());
    st.report.set(Some(Arc::new(Report {
        line,
        errors,
        kept,
        opened: false,
        timings,
    })));
}

/// "NAME" for one file, "N files" for more.
fn describe(names: &[String]) -> String {
    match names {
        [one] => one.clone(),
        _ => format!("{} files", names.len()),
    }
}

/// One read under way in the page: its files, its steps and whether it is still current.
struct PageRead {
    st: AppState,
    target: Target,
    /// Whether `Used values` are left for after the diagrams.
    defer: bool,
    /// This read's number ([`AppState::generation`] while it is current).
    generation: u64,
    /// The names of the files read.
    names: Vec<String>,
    /// Files of folders not read (XLA's other output, [`bufscope::parse::folder_plan`]).
    /// Files of the folders skipped: XLA's other output, then the texts searched that held
    /// no out-of-memory message (added once read, `Loaded::skipped`).
    skipped: std::cell::Cell<usize>,
    /// The HLO texts, read after the diagrams ([`PageRead::read_hlo`]).
    hlo: Vec<Picked>,
    reading: Reading,
}

impl PageRead {
    /// Whether this read is still the one the page waits for.
    fn current(&self) -> bool {
        self.st.generation.get_value() == self.generation
    }

    /// Yields to the page; whether this read is still current afterwards.
    async fn pause(&self) -> bool {
        tasks::next_task().await;
        self.current()
    }

    /// Read, join, analyse, show; then complete what was left for later, and read the HLO
    /// texts beside the dump ([`PageRead::read_hlo`]).
    async fn run(mut self, files: Vec<Picked>) {
        let started = js_sys::Date::now();
        // The skipped bodies go to the page's worker, where it has one, as they are found,
        // to be read while the page goes on.
        let (st, generation) = (self.st, self.generation);
        let progress = move |fraction| {
            if st.generation.get_value() == generation {
                st.completing.set(Some(fraction));
            }
        };
        let workers = self.st.workers.get_value();
        let mut jobs = self.defer.then(|| UsesJobs::new(&workers, progress)).flatten();
        let Some(fed) = self.read(&files, self.defer, &mut jobs).await else {
            return;
        };
        // Files whose first line is `HloModule`, set apart by the read: HLO texts too.
        let apart = files.iter().filter(|p| fed.apart.contains(&p.name));
        self.hlo.extend(apart.cloned());
        if let Some(jobs) = jobs.as_mut() {
            jobs.settle(&files, &fed.loader.deferred().cloned().collect::<Vec<_>>());
        }
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
        let Some((modules, errors, oom, deferred)) = self.join_and_analyse(fed, &mut timings).await
        else {
            return;
        };
        let found_oom = !oom.is_empty();
        let deferring = !deferred.is_empty();
        if deferring {
            // Said from the first frame of the diagrams until the modules are complete.
            self.st.completing.set(Some(0.0));
        }
        let dumps = pair_with_dumps(&modules, &oom);
        self.show(modules, errors, timings, found_oom);
        show_oom_files(self.st, oom, dumps);
        if !self.pause().await {
            return;
        }
        // The report (or the top of the new module) is seen.
        self.st.reveal_report.emit(());
        if deferring {
            self.complete(&files, deferred, started, jobs).await;
        }
        if !self.hlo.is_empty() && self.current() {
            self.read_hlo().await;
        }
    }

    /// Step 1: every file read in slices and fed to the loader, the progress bar following
    /// (with `defer`, the bodies of `Used values` are left for [`PageRead::complete`]).
    async fn read(
        &self,
        files: &[Picked],
        defer: bool,
        jobs: &mut Option<UsesJobs>,
    ) -> Option<Fed> {
        let st = self.st;
        read::read_files(
            files,
            defer,
            &st.workers.get_value(),
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
            |body| {
                if let Some(jobs) = jobs.as_mut() {
                    jobs.jumped(files, body);
                }
            },
        )
        .await
    }

    /// Steps 2 and 3: joining and checking, then each module analysed, through the core's
    /// [`Pipeline`] a piece per task (a piece's size chosen by the stage it is in).
    async fn join_and_analyse(
        &self,
        fed: Fed,
        timings: &mut Timings,
    ) -> Option<(
        Vec<Arc<Shown>>,
        Vec<String>,
        Vec<OomFile>,
        Vec<DeferredUses>,
    )> {
        let mut pipeline = Pipeline::from(fed.loader);
        let mut progress = Progress::Joining;
        let mut t = js_sys::Date::now();
        while !progress.is_done() {
            let work = match progress {
                Progress::Joining => JOIN_PIECE,
                _ => ANALYSIS_PIECE,
            };
            let next = pipeline.step(work);
            if progress == Progress::Joining && next != Progress::Joining {
                let now = js_sys::Date::now();
                timings.join = now - t;
                t = now;
            }
            progress = next;
            if !self.pause().await {
                return None;
            }
        }
        timings.analyse = js_sys::Date::now() - t;
        let loaded = pipeline.finish();
        self.skipped.set(self.skipped.get() + loaded.skipped);
        let mut errors = loaded.errors;
        errors.extend(fed.errors);
        let deferred = loaded.deferred;
        let names: Vec<&str> = loaded
            .modules
            .iter()
            .map(|a| a.module.name.as_str())
            .collect();
        let labels = bufscope::model::shown_module_names(&names);
        let failed = bufscope::answers::sweep::failed(&names, &loaded.oom);
        let shown = (loaded.modules.into_iter().zip(labels).enumerate())
            .map(|(k, (a, label))| {
                let complete = !deferred.iter().any(|d| d.module == a.module.name);
                let mut shown = Shown::read(a.module, Arc::new(a.analysis), complete);
                shown.label = label;
                shown.failed = failed[k];
                Arc::new(shown)
            })
            .collect();
        Some((shown, errors, loaded.oom, deferred))
    }

    /// Step 3: the report, and the modules if there are any (else the view stays).
    fn show(&self, modules: Vec<Arc<Shown>>, errors: Vec<String>, timings: Timings, oom: bool) {
        let st = self.st;
        st.reading.set(None);
        let mut line = format!("Read {}", describe(&self.names));
        if !self.hlo.is_empty() {
            let n = self.hlo.len();
            line.push_str(&format!(
                " (and {n} HLO module text{} for source lines and instructions)",
                if n == 1 { "" } else { "s" }
            ));
        }
        let skipped = self.skipped.get();
        if skipped > 0 {
            line.push_str(&format!("; {}", bufscope::parse::skipped_sentence(skipped)));
        }
        if modules.is_empty() && oom {
            // Only out-of-memory messages: their view is the outcome; the module stays.
            report_not_opened(st, line, errors, Some(timings));
            return;
        }
        if modules.is_empty() {
            let mut errors = errors;
            if errors.is_empty() {
                errors.push("No buffer-assignment module was found in these files.".into());
            }
            report_failure(st, line, errors);
            return;
        }
        match self.target {
            Target::Compare => line.push_str(" to compare with"),
            Target::Sweep => line.push_str(" as one more configuration of the sweep"),
            Target::Page => {}
        }
        st.report.set(Some(Arc::new(Report {
            line,
            errors,
            kept: None,
            opened: true,
            timings: Some(timings),
        })));
        let outcome = Some(Arc::new(Outcome {
            what: describe(&self.names),
            modules,
            read: self.generation,
        }));
        match self.target {
            Target::Compare => st.compare.set(outcome),
            Target::Sweep => st.add_configuration(outcome),
            Target::Page => {
                // Only when a comparison is on screen: setting it notifies the views of the
                // modules on screen, which would make the old module's views again (taking
                // the view the URL hash or a read again left for the new ones).
                if st.compare.with_untracked(Option::is_some) {
                    st.compare.set(None);
                }
                // Before the views are made: compilations of one program open as a sweep.
                st.open_if_sweep(outcome.as_deref());
                st.view.set(outcome);
            }
        }
    }
}

/// The messages read with the dump of the module they are about
/// ([`bufscope::answers::paired`]): that module opens first with the message's capacity on
/// its space ([`super::hash::open_paired`]); returns, per message of `files` in order, what
/// the dump says of its figure.
fn pair_with_dumps(modules: &[Arc<Shown>], files: &[OomFile]) -> Vec<Option<String>> {
    let with: Vec<_> = modules.iter().map(|s| (&s.module, &*s.analysis)).collect();
    let paired = Paired::new(&with, files);
    if let Some(p) = paired.pairs.first() {
        if let Some(c) = &p.capacity {
            super::hash::open_paired(&p.module_name, p.color, c.label.clone());
        }
    }
    (files.iter().enumerate())
        .flat_map(|(fi, f)| (0..f.log.messages.len()).map(move |mi| (fi, mi)))
        .map(|(fi, mi)| {
            let p = paired.of_message(fi, mi)?;
            let said = p.reconciliation.as_ref().map(|r| r.sentence.clone());
            Some(said.unwrap_or_else(|| format!("read with module {}", p.module_name)))
        })
        .collect()
}

/// The out-of-memory messages found in the files read (files that held no dump), shown as
/// one view: every file's messages in order, its warnings as the messages' own, with what
/// their dumps say (`dumps`, by message).
fn show_oom_files(st: AppState, files: Vec<OomFile>, dumps: Vec<Option<String>>) {
    if files.is_empty() {
        return;
    }
    let from = match files.as_slice() {
        [one] => one.file.clone(),
        _ => format!("{} files", files.len()),
    };
    let mut messages = Vec::new();
    let mut compiler_notes = Vec::new();
    for f in files {
        let mut log = f.log;
        if let Some(first) = log.messages.first_mut() {
            first.warnings.extend(f.warnings);
        }
        messages.extend(log.messages);
        compiler_notes.extend(log.compiler_notes);
    }
    let log = OomLog {
        messages,
        compiler_notes,
    };
    super::oom::show_oom_beside(st, log, from, dumps);
}

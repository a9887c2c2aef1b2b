//! The app's state: the read under way ([`Reading`]), the report of the last one
//! ([`Report`], its [`Timings`]), the modules on screen ([`Outcome`]) and those they are
//! compared with or swept with, the out-of-memory messages on screen ([`OomState`]) and the intake's own
//! switches. [`AppState`] holds them as signals; the page's components get it (it is
//! `Copy`) and none of them owns it. What one module's views share is
//! [`super::state::Focus`]'s.

use std::rc::Rc;
use std::sync::Arc;

use bufscope::model::oom::OomLog;
use leptos::prelude::*;

use super::read::Workers;
use super::state::{Emitter, Shown};

/// The modules of the last read that produced any: what the page shows below the report.
pub struct Outcome {
    /// What was read, in words: the file's name, or "N files".
    pub what: String,
    pub modules: Vec<Arc<Shown>>,
    /// The read that gave them (its generation): the views are made again for another
    /// read, not when its modules are replaced by their complete forms.
    pub read: u64,
}

/// What the last read (or attempt) came to, shown above the modules.
#[derive(Clone)]
pub struct Report {
    /// `Read NAME` / `Read N files`, with the files skipped in folders; or why nothing was read.
    pub line: String,
    /// One sentence per file that could not be read as a dump.
    pub errors: Vec<String>,
    /// This read opened no module, so the view below is an earlier one: what it showed.
    pub kept: Option<String>,
    /// The modules on screen came from this read (false when it opened none).
    pub opened: bool,
    /// How long the steps of this read took (none when it did not get that far).
    pub timings: Option<Timings>,
}

/// Milliseconds spent in each step of a read, shown as the report's tooltip and kept in
/// its `data-*-ms` attributes (the browser tests report them).
#[derive(Clone, Copy, Default)]
pub struct Timings {
    /// From the pick until the modules were complete, when their `Used values` were read
    /// after the diagrams (0 when nothing was left for later).
    pub complete: f64,
    /// The memory (bytes) of the worker that read the `Used values` (0 when the page read
    /// them itself): see `uses_worker.rs`.
    pub uses_worker: f64,
    /// Reading and feeding the slices (waits for the browser included).
    pub read: f64,
    /// Of `read`, the time spent parsing (the rest is waiting for the browser's reads).
    pub parse: f64,
    /// Joining and checking (all its pieces).
    pub join: f64,
    /// The longest analysis of one module (all its pieces).
    pub analyse: f64,
}

/// A read under way.
#[derive(Clone)]
pub struct Reading {
    pub files: usize,
    pub bytes: u64,
    /// Fraction of the bytes read, 0.0 ..= 1.0.
    pub fraction: f64,
    /// Set once every byte is read: joining, checking and analysing the modules.
    pub analysing: bool,
}

/// The app's state; `Copy`, so handlers can capture it freely.
#[derive(Clone, Copy)]
pub struct AppState {
    pub reading: RwSignal<Option<Reading>>,
    /// While the `Used values` of the modules on screen are read: the fraction read.
    pub completing: RwSignal<Option<f64>>,
    pub report: RwSignal<Option<Arc<Report>>>,
    pub view: RwSignal<Option<Arc<Outcome>>>,
    /// The modules the ones on screen are compared with ([`super::compare`]), when comparing.
    pub compare: RwSignal<Option<Arc<Outcome>>>,
    /// The sweep on screen ([`super::sweep`]): the positions, among the modules on screen,
    /// of its compilations.
    pub sweep: RwSignal<Option<Arc<Vec<usize>>>>,
    /// Bumped by every new read and by Cancel; a read whose number is no longer current
    /// stops at its next slice (or step) and changes nothing on the page.
    pub generation: StoredValue<u64>,
    pub dragging: RwSignal<bool>,
    /// The out-of-memory messages on screen, and the sentence for a paste that held none.
    pub oom: OomState,
    /// The intake (pickers, example, paste box) is open over the module on screen ("Open…").
    pub intake_open: RwSignal<bool>,
    /// The answers panel is shown: closed until asked for, then kept open across the
    /// read's modules and their completion.
    pub answers_open: RwSignal<bool>,
    /// Requests to bring the report into view when the page is scrolled past it (a read
    /// that showed its outcome asks), which the report answers.
    pub reveal_report: Emitter<()>,
    /// The page's workers, started with the page and handed to each read.
    pub workers: StoredValue<Rc<Workers>, LocalStorage>,
}

impl AppState {
    /// The state of a page with nothing read, its reads done with `workers`.
    pub fn new(workers: Rc<Workers>) -> AppState {
        AppState {
            reading: RwSignal::new(None),
            completing: RwSignal::new(None),
            report: RwSignal::new(None),
            view: RwSignal::new(None),
            compare: RwSignal::new(None),
            sweep: RwSignal::new(None),
            generation: StoredValue::new(0),
            dragging: RwSignal::new(false),
            oom: OomState::new(),
            intake_open: RwSignal::new(false),
            answers_open: RwSignal::new(false),
            reveal_report: Emitter::new(),
            workers: StoredValue::new_local(workers),
        }
    }

    /// The modules of `outcome` as a sweep, when they are compilations of one program: set
    /// before the read's views are made, so that it opens as one. Any other read ends a sweep.
    pub fn open_if_sweep(self, outcome: Option<&Outcome>) {
        let st = self;
        let modules: Vec<&bufscope::model::Module> = outcome.map_or_else(Vec::new, |o| o.modules.iter().map(|m| &m.module).collect());
        let all = bufscope::answers::sweep::is_sweep(&modules).then(|| Arc::new((0..modules.len()).collect::<Vec<_>>()));
        if all.is_some() || st.sweep.with_untracked(Option::is_some) {
            st.sweep.set(all);
        }
    }

    /// A configuration read for the sweep: its modules join the read on screen, and the one
    /// paired by name with the sweep's first compilation (the read's largest when none is)
    /// joins the sweep.
    pub fn add_configuration(self, added: Option<Arc<Outcome>>) {
        let st = self;
        let Some(added) = added else { return };
        let Some(on_screen) = st.view.get_untracked() else { return };
        let swept = st.sweep.get_untracked().map_or_else(Vec::new, |s| s.as_ref().clone());
        let first = swept.first().and_then(|&i| on_screen.modules.get(i));
        let names: Vec<String> = added.modules.iter().map(|m| m.module.name.clone()).collect();
        let paired = first.and_then(|f| bufscope::answers::sweep::pick_modules(&[vec![f.module.name.clone()], names], 0).ok());
        let default = bufscope::pipeline::default_module(added.modules.iter().map(|m| &m.module)).unwrap_or(0);
        let pick = paired.and_then(|p| p.get(1).copied()).unwrap_or(default);
        let mut modules = on_screen.modules.clone();
        let at = modules.len() + pick;
        modules.extend(added.modules.iter().cloned());
        let mut indices = swept;
        indices.push(at);
        st.sweep.set(Some(Arc::new(indices)));
        st.view.set(Some(Arc::new(Outcome { what: on_screen.what.clone(), modules, read: on_screen.read })));
    }

    /// Module `i` of the read on screen, as it is now (its complete form once completed).
    pub fn module_at(self, i: usize) -> Arc<Shown> {
        self.view
            .with(|o| o.as_ref().and_then(|o| o.modules.get(i).cloned()))
            .unwrap_or_else(Shown::none)
    }
}

/// Messages on screen and where they came from.
pub struct OomShown {
    /// `pasted text`, or the name of the file they were read from.
    pub from: String,
    pub log: OomLog,
    /// Per message, what the dump read with it says of its figure (its reconciliation).
    pub dumps: Vec<Option<String>>,
}

/// The OOM side of the page's state; `Copy`, a part of [`AppState`].
#[derive(Clone, Copy)]
pub struct OomState {
    /// The messages on screen, if any.
    pub shown: RwSignal<Option<Arc<OomShown>>>,
    /// Why the last paste showed nothing (it held no message); cleared by the next one.
    pub miss: RwSignal<Option<String>>,
}

impl OomState {
    pub fn new() -> OomState {
        OomState {
            shown: RwSignal::new(None),
            miss: RwSignal::new(None),
        }
    }
}

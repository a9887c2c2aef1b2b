//! What the views of one module share: which value is selected, hovered and searched for,
//! the time step under the pointer, and requests to bring a value into view. Every
//! component gets one [`Focus`] (it is `Copy`) and reads or writes these signals; none
//! talks to another directly. A new module on screen gets a new `Focus`. Requests (bring a
//! value into view, export the live-set table) are [`Emitter`]s: events, not values. The
//! diagrams of a module also share [`super::canvas::Shared`].

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use bufscope::analysis::{Analysis, Space};
use bufscope::answers::capacity::Capacity;
use bufscope::render::estimate::EstimateCurve;
use bufscope::answers::idle::{ScheduleIndex, ValueUses};
use bufscope::answers::loops::ModuleLoops;
use bufscope::render::loops::{bands, Band};
use bufscope::answers::padding::{all_padding, AllPadding};
use bufscope::answers::xprof::{xprof_figures, XprofFigures};
use bufscope::answers::{live_set, LiveSet};
use bufscope::model::{InstrId, Module};
use bufscope::render::Viewport;
use leptos::prelude::*;

/// One module with its analysis: what every view draws from. Never changes once made but
/// for what the views keep about it ([`Kept`]: built on first use, gone with the module).
/// The analysis is shared with the module's complete form (completion leaves it as it is),
/// so the diagrams hold it, and reach the module only through their [`Focus`].
pub struct Shown {
    pub module: Module,
    pub analysis: Arc<Analysis>,
    pub kept: Kept,
    /// False while the module's `Used values` are still being read: no op_names, source
    /// lines, opcodes or uses yet (the diagrams are already exact).
    pub complete: bool,
    /// The module's name as the page shows it: as XLA names it, with its number where two
    /// of the read would read the same ([`bufscope::model::shown_module_names`]).
    pub label: String,
    /// Its compile failed: an out-of-memory message read with it is paired with it
    /// ([`bufscope::answers::paired::pair`]), as `bufscope sweep` marks a failed point.
    pub failed: bool,
}

impl Shown {
    pub fn new(module: Module, analysis: Arc<Analysis>) -> Shown {
        Shown::read(module, analysis, true)
    }

    /// A module as read, `complete` or still without its `Used values`.
    pub fn read(module: Module, analysis: Arc<Analysis>, complete: bool) -> Shown {
        Shown {
            label: bufscope::model::xla_module_name(&module.name),
            module,
            analysis,
            kept: Kept::default(),
            complete,
            failed: false,
        }
    }

    /// A copy to change, its kept answers left behind (they are the module's as it was).
    pub fn copy(&self) -> Shown {
        Shown {
            module: self.module.clone(),
            analysis: self.analysis.clone(),
            kept: Kept::default(),
            complete: self.complete,
            label: self.label.clone(),
            failed: self.failed,
        }
    }

    /// No module: what a view of a read that is gone reads while it is taken down.
    pub fn none() -> Arc<Shown> {
        thread_local! {
            static NONE: Arc<Shown> =
                Arc::new(Shown::new(Module::default(), Arc::new(Analysis::default())));
        }
        NONE.with(Arc::clone)
    }

    /// The values of memory space `color` live at `step` ([`live_set`]; empty without that
    /// space). The last one asked for is kept, so the answers panel and the table asking
    /// about one step compute it once.
    pub fn live_set(&self, color: u32, step: u32) -> Arc<LiveSet> {
        let kept = self.kept.live.lock().ok().and_then(|l| {
            l.as_ref()
                .filter(|l| l.color == color && l.step == step)
                .cloned()
        });
        if let Some(l) = kept {
            return l;
        }
        let set = Arc::new(match self.analysis.space(color) {
            Some(s) => live_set(&self.module, s, step),
            None => LiveSet {
                color,
                step,
                ..LiveSet::default()
            },
        });
        if let Ok(mut l) = self.kept.live.lock() {
            *l = Some(set.clone());
        }
        set
    }

    /// The module's loops, what each holds and their bands on the time axis, computed once
    /// (and again if the HLO text has come since).
    pub fn loops(&self) -> Arc<ShownLoops> {
        let has_hlo = self.module.hlo.is_some();
        let Ok(mut kept) = self.kept.loops.lock() else {
            return Arc::new(ShownLoops::new(&self.module));
        };
        match kept.as_ref().filter(|(had, _)| *had == has_hlo) {
            Some((_, l)) => l.clone(),
            None => {
                let l = Arc::new(ShownLoops::new(&self.module));
                *kept = Some((has_hlo, l.clone()));
                l
            }
        }
    }

    /// XProf's figures of memory space `color` ([`xprof_figures`], the same at every step),
    /// computed once per space.
    pub fn xprof(&self, color: u32) -> Option<Arc<XprofFigures>> {
        let space = self.analysis.space(color)?;
        let mut kept = self.kept.xprof.lock().ok()?;
        Some(
            kept.entry(color)
                .or_insert_with(|| Arc::new(xprof_figures(&self.module, space)))
                .clone(),
        )
    }
}

/// A module's loops as the views show them: the loops and their holds, and the bands the
/// diagrams draw.
pub struct ShownLoops {
    pub loops: ModuleLoops,
    pub bands: Arc<Vec<Band>>,
}

impl ShownLoops {
    fn new(module: &Module) -> ShownLoops {
        let loops = ModuleLoops::new(module);
        let bands = Arc::new(bands(&loops.loops));
        ShownLoops { loops, bands }
    }
}

/// What the views keep about one module: for [`crate::ui::uses`], whether it has uses at
/// all, its schedule index, and the last value answered; the last live set and each memory
/// space's XProf figures ([`Shown::live_set`], [`Shown::xprof`]) and padding over all its
/// values ([`Kept::all_padding`]). Empty until first asked.
#[derive(Default)]
pub struct Kept {
    /// The loops, and whether the module had its HLO text when they were found.
    loops: Mutex<Option<(bool, Arc<ShownLoops>)>>,
    pub(super) has_uses: OnceLock<bool>,
    pub(super) index: OnceLock<Arc<ScheduleIndex>>,
    pub(super) last: Mutex<Option<(u32, Option<Arc<ValueUses>>)>>,
    live: Mutex<Option<Arc<LiveSet>>>,
    xprof: Mutex<BTreeMap<u32, Arc<XprofFigures>>>,
    padding: Mutex<BTreeMap<u32, AllPadding>>,
}

impl Kept {
    /// XProf's figures of memory space `color` if [`Shown::xprof`] has computed them.
    pub fn xprof_kept(&self, color: u32) -> Option<Arc<XprofFigures>> {
        self.xprof.lock().ok()?.get(&color).cloned()
    }

    /// The padding over every value of `space` ([`all_padding`], the same at every step),
    /// computed once per space.
    pub fn all_padding(&self, module: &Module, space: &Space) -> AllPadding {
        let kept = self
            .padding
            .lock()
            .ok()
            .and_then(|k| k.get(&space.color).copied());
        if let Some(p) = kept {
            return p;
        }
        let p = all_padding(module, space);
        if let Ok(mut k) = self.padding.lock() {
            k.insert(space.color, p);
        }
        p
    }
}

/// The shared view state of the module on screen.
#[derive(Clone, Copy)]
pub struct Focus {
    /// The module: read where it is needed, never kept, so that the module on screen can
    /// be replaced under the views (by its complete form) without remaking them.
    pub shown: Signal<Arc<Shown>>,
    /// The pinned value: the details panel shows it. Set by a click on a block or a row.
    pub selected: RwSignal<Option<u32>>,
    /// The value under the pointer (tooltip; its instruction's blocks are highlighted).
    pub hovered: RwSignal<Option<u32>>,
    /// The program step under the pointer, shown as one cursor on every diagram and curve.
    pub time_cursor: RwSignal<Option<u32>>,
    /// The step the answers panel is about (`None`: each memory space's peak). Set by a
    /// click on a curve or by the panel's own controls; drawn as a second cursor.
    pub step: RwSignal<Option<u32>>,
    /// The search box's text (a regular expression over value names and op_names).
    pub search: RwSignal<String>,
    /// Values matching `search`, in value order; empty when the search is empty or invalid.
    pub matches: RwSignal<Arc<Vec<u32>>>,
    /// Which match Enter / Shift+Enter has reached.
    pub match_index: RwSignal<usize>,
    /// Requests to bring a value into view (zoom to its block): an event, which the diagram
    /// of the value's memory space answers ([`Focus::reveal`] asks).
    pub reveal: Emitter<u32>,
    /// Requests to download the live-set table as CSV (the Export menu's), which the table
    /// answers as its own "CSV" button does.
    pub export_live_csv: Emitter<()>,
    /// Requests to put the cursor in the search box (the diagrams' `/` key), which the
    /// search box answers.
    pub find: Emitter<()>,
    /// The capacity chosen for each memory space (by colour): the answers panel sets it,
    /// the space's curve draws it as a line.
    pub capacity: RwSignal<Arc<BTreeMap<u32, Capacity>>>,
    /// The what-if's ticks (the answers panel's): values rematerialised or offloaded, and
    /// whether the loops' stacked outputs are.
    pub whatif: RwSignal<Arc<WhatIfTicks>>,
    /// Each memory space's estimated curve after the ticks (empty with none), drawn dashed
    /// over its real curve.
    pub estimates: RwSignal<Arc<Vec<EstimateCurve>>>,
    /// The values the live-set table is limited to (an icicle frame's), with what they are.
    pub subset: RwSignal<Option<Subset>>,
    /// The part of the program a diagram was last moved to by the user (zoom, pan, keys):
    /// what the other side of a comparison follows.
    pub window: RwSignal<Option<ViewWindow>>,
    /// A part of the program set from outside (the other side of a comparison): the
    /// diagram of that memory space shows it, without publishing it back as `window`.
    pub follow: RwSignal<Option<ViewWindow>>,
    /// The steps and bytes in view of the diagram the user last moved (what the URL hash
    /// keeps); a diagram of that space opens with it ([`super::hash`] restores it).
    pub zoom: RwSignal<Option<SpaceView>>,
}

/// A memory space's diagram window: its steps `x0 .. x1` and bytes `y0 .. y1` in view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpaceView {
    pub color: u32,
    pub view: Viewport,
}

/// A window of relative program position (`0` = start, `1` = end) of one memory space's
/// diagram ([`bufscope::render::diff::view_window`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewWindow {
    pub color: u32,
    pub lo: f64,
    pub hi: f64,
}

/// The read's modules (as they are now: their complete forms replace them) and which one
/// is on screen (its position, what the module picker sets): what the device ledger lists
/// and opens.
#[derive(Clone, Copy)]
pub struct ReadModules {
    pub modules: Signal<Vec<Arc<Shown>>>,
    pub chosen: RwSignal<usize>,
}

/// What the user ticked for the what-if (the core's rules of ticking).
pub use bufscope::answers::whatif::ticks::Ticks as WhatIfTicks;

/// A named set of values the tables are limited to.
#[derive(Clone, Debug, PartialEq)]
pub struct Subset {
    /// What the values are, as the table's filter chip says it (an op_name path).
    pub label: String,
    /// The values, sorted, without repeats.
    pub values: Arc<Vec<u32>>,
}

impl Focus {
    /// The views of `shown`, which never changes.
    pub fn new(shown: Arc<Shown>) -> Focus {
        Focus::following(Signal::stored(shown))
    }

    /// The views of the module `shown` gives, which may be replaced by its complete form.
    pub fn following(shown: Signal<Arc<Shown>>) -> Focus {
        Focus {
            shown,
            selected: RwSignal::new(None),
            hovered: RwSignal::new(None),
            time_cursor: RwSignal::new(None),
            step: RwSignal::new(None),
            search: RwSignal::new(String::new()),
            matches: RwSignal::new(Arc::new(Vec::new())),
            match_index: RwSignal::new(0),
            reveal: Emitter::new(),
            export_live_csv: Emitter::new(),
            find: Emitter::new(),
            capacity: RwSignal::new(Arc::new(BTreeMap::new())),
            whatif: RwSignal::new(Arc::new(WhatIfTicks::default())),
            estimates: RwSignal::new(Arc::new(Vec::new())),
            subset: RwSignal::new(None),
            window: RwSignal::new(None),
            follow: RwSignal::new(None),
            zoom: RwSignal::new(None),
        }
    }

    /// The module (tracks it: a view reading it follows its completion).
    pub fn shown(&self) -> Arc<Shown> {
        self.shown.get()
    }

    /// The module, read where nothing should follow it (drawing, event handlers).
    pub fn shown_untracked(&self) -> Arc<Shown> {
        self.shown.get_untracked()
    }

    /// The instruction whose blocks are highlighted: the hovered value's, else the
    /// selected one's.
    pub fn highlighted_instruction(&self) -> Option<InstrId> {
        let shown = self.shown();
        self.hovered
            .get()
            .or_else(|| self.selected.get())
            .and_then(|v| shown.module.values.get(v as usize))
            .map(|v| v.instruction)
    }

    /// The step the views of memory space `color` are about: the chosen [`Focus::step`],
    /// else the space's peak, within the program (tracks `step`). `None` only when nothing is
    /// chosen and the space has no peak.
    pub fn step_in(&self, color: u32) -> Option<u32> {
        let shown = self.shown();
        let last = shown.analysis.steps.saturating_sub(1);
        let peak = shown.analysis.space(color).and_then(|s| s.peak_time);
        self.step.get().or(peak).map(|s| s.min(last))
    }

    /// Asks the diagrams to bring `value` into view.
    pub fn reveal(&self, value: u32) {
        self.reveal.emit(value);
    }
}

/// Something that happens, not a value that is: each [`Emitter::emit`] reaches the handlers
/// given to [`Emitter::on`] once (two emits before the handlers run reach them as the later
/// one), so that the same request can be made twice in a row and a view made later does not
/// answer a request made before it was there. `Copy`, as the signals beside it.
pub struct Emitter<T: Send + Sync + 'static> {
    last: StoredValue<Option<T>>,
    fired: Trigger,
}

impl<T: Send + Sync + 'static> Clone for Emitter<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Send + Sync + 'static> Copy for Emitter<T> {}

impl<T: Clone + Send + Sync + 'static> Emitter<T> {
    pub fn new() -> Emitter<T> {
        Emitter {
            last: StoredValue::new(None),
            fired: Trigger::new(),
        }
    }

    /// Sends `value` to the handlers.
    pub fn emit(&self, value: T) {
        self.last.set_value(Some(value));
        self.fired.notify();
    }

    /// Calls `handler` with every value emitted from now on, for as long as the calling
    /// component lives.
    pub fn on(&self, handler: impl Fn(T) + 'static) {
        let this = *self;
        Effect::watch(
            move || this.fired.track(),
            move |_, _, _| {
                if let Some(value) = this.last.get_value() {
                    handler(value);
                }
            },
            false,
        );
    }
}

/// A computed answer shared without copying; two are equal only when they are the same
/// computation (memos over large results never compare them field by field).
pub(crate) struct Computed<T>(pub Arc<T>);

impl<T> Clone for Computed<T> {
    fn clone(&self) -> Self {
        Computed(self.0.clone())
    }
}

impl<T> PartialEq for Computed<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> std::ops::Deref for Computed<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

//! One module on screen, as one screen: a slim bar (the module picker and the page's actions
//! the app hands in, the module's name and key figures, the search box), the diagrams in the
//! main area from the first pixel below it, the details of the selected value in a side
//! panel beside them (below them in a narrow window), and a dock below holding the values
//! live at the chosen step, the answers and what else there is about the module. The side
//! panel and the dock scroll on their own, are resized by dragging their edge and fold away.
//! Every part shares one [`Focus`]. Owns the layout only; each part is its own component.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use web_sys::PointerEvent;

use super::canvas::{self, first_drawings};
use super::diagram::Diagrams;
use super::export::ExportMenu;
use super::panels::{
    prepare_table, Answers, Details, Header, HoverLine, ModuleInfo, LiveSetTable, SearchBox,
};
use super::state::{Focus, ReadModules, Shown};
use super::tasks::{next_frame, next_task};

/// The side panel's width at first (CSS pixels), and the least a panel is resized to.
const SIDE_PX: f64 = 360.0;
const MIN_PX: f64 = 120.0;
/// Longest wait (ms) for the diagrams' first drawing before the panels are made.
const PANELS_WAIT_MS: f64 = 1000.0;

/// The dock's height at first: a quarter of the window, within 150 to 340 px.
fn dock_px() -> f64 {
    let window = web_sys::window()
        .and_then(|w| w.inner_height().ok())
        .and_then(|v| v.as_f64())
        .unwrap_or(720.0);
    (window * 0.25).clamp(150.0, 340.0)
}

#[component]
pub fn Workspace(
    /// The module, as it is now: its complete form replaces it under the same views.
    shown: Signal<Arc<Shown>>,
    /// Whether the answers panel is shown (the page's, kept across modules).
    answers_open: RwSignal<bool>,
    /// The read's modules and the one on screen (the answers' device ledger).
    #[prop(optional)]
    read: Option<ReadModules>,
    /// The module picker (when the read has several modules), at the bar's start.
    #[prop(optional)]
    picker: Option<AnyView>,
    /// The page's own actions (open, compare), at the bar's end.
    #[prop(optional)]
    actions: Option<AnyView>,
) -> impl IntoView {
    let focus = Focus::following(shown);
    let diagrams = canvas::Diagrams::new();
    super::hash::follow(focus);
    let side = Panel::new(SIDE_PX);
    let dock = Panel::new(dock_px());
    // The panels' contents are made once the diagrams are drawn, the dock's table first,
    // the rest a frame later: the diagrams come first, and no frame makes them all.
    let (table, rest) = (RwSignal::new(false), RwSignal::new(false));
    // The answers are made again when the module becomes complete, not as the read goes on.
    let complete = Memo::new(move |_| focus.shown.with(|s| s.complete));
    spawn_local(async move {
        first_drawings(PANELS_WAIT_MS).await;
        // The table's live set in a task of its own (unless the workspace is gone).
        if table.is_disposed() {
            return;
        }
        prepare_table(focus);
        next_task().await;
        table.try_set(true);
        next_frame().await;
        rest.try_set(true);
    });
    view! {
        <article class="module workspace"
            style:--side-width=move || format!("{:.0}px", side.size.get())
            style:--dock-height=move || format!("{:.0}px", dock.size.get())
            class:side-folded=move || side.folded.get()
            class:dock-folded=move || dock.folded.get()>
            <header class="workbar">
                <span class="brand">"bufscope"</span>
                {picker}
                <Header focus=focus />
                <div class="toolbar">
                    <SearchBox focus=focus />
                </div>
                {actions}
                <div class="header-actions"><ExportMenu focus=focus diagrams=diagrams /></div>
            </header>
            <div class="work">
                <div class="stage">
                    <HoverLine focus=focus />
                    <Diagrams focus=focus diagrams=diagrams />
                </div>
                <div class="side-panel">
                    {splitter(side, Axis::Width, "Resize the details panel")}
                    {fold_button(side, "side-fold", "details")}
                    <div class="side-scroll">
                        {move || rest.get().then(|| view! { <Details focus=focus /> })}
                    </div>
                </div>
                <div class="dock">
                    {splitter(dock, Axis::Height, "Resize the panel below the diagrams")}
                    {fold_button(dock, "dock-fold", "tables")}
                    <div class="dock-scroll">
                        {move || table.get().then(|| view! { <LiveSetTable focus=focus /> })}
                        {move || rest.get().then(|| view! {
                            {move || answers(focus, read, complete.get(), answers_open)}
                            {move || module_info(focus)}
                        })}
                    </div>
                </div>
            </div>
        </article>
    }
}

/// The module's info, made again when the module is completed (which may add warnings).
fn module_info(focus: Focus) -> impl IntoView {
    focus.shown.track();
    view! { <ModuleInfo focus=focus /> }
}

/// The answers panel, once the module's `Used values` are read (its groupings by op_name and
/// source line, categories and idle stretches need them); a note until then.
fn answers(focus: Focus, read: Option<ReadModules>, complete: bool, open: RwSignal<bool>) -> AnyView {
    if complete {
        return view! { <Answers focus=focus read=read open=open /> }.into_any();
    }
    view! {
        <section id="answers" class="answers answers-waiting" aria-labelledby="answers-title">
            <header class="answers-head"><h3 id="answers-title">"Answers"</h3></header>
            <p class="aside">"What the live bytes are made of (by op_name, source line and \
                category), padding, capacity and idle stretches come once the op_names, source \
                lines and uses are read, in a moment."</p>
        </section>
    }
    .into_any()
}

/// A panel's size along its free axis and whether it is folded away.
#[derive(Clone, Copy)]
struct Panel {
    size: RwSignal<f64>,
    folded: RwSignal<bool>,
}

impl Panel {
    fn new(size: f64) -> Panel {
        Panel {
            size: RwSignal::new(size),
            folded: RwSignal::new(false),
        }
    }
}

/// Which size a splitter drags: the side panel's width (its left edge) or the dock's height
/// (its top edge).
#[derive(Clone, Copy, PartialEq)]
enum Axis {
    Width,
    Height,
}

/// The button folding a panel away and bringing it back.
fn fold_button(panel: Panel, class: &'static str, what: &'static str) -> impl IntoView {
    view! {
        <button type="button" class=format!("panel-fold {class}")
            aria-expanded=move || (!panel.folded.get()).to_string()
            title=move || format!("{} the {what}", if panel.folded.get() { "Show" } else { "Hide" })
            on:click=move |_| panel.folded.update(|f| *f = !*f)>
            {move || if panel.folded.get() { format!("Show {what}") } else { "×".to_string() }}
        </button>
    }
}

/// The drag handle on a panel's inner edge: dragging it resizes the panel (within the
/// window, never under [`MIN_PX`]); arrow keys do it by steps.
fn splitter(panel: Panel, axis: Axis, label: &'static str) -> impl IntoView {
    // The pointer position and the size when the drag began.
    let start = StoredValue::new(None::<(i32, f64)>);
    let along = move |e: &PointerEvent| match axis {
        Axis::Width => e.client_x(),
        Axis::Height => e.client_y(),
    };
    let limit = move |size: f64| {
        let window = web_sys::window()
            .and_then(|w| {
                match axis {
                    Axis::Width => w.inner_width(),
                    Axis::Height => w.inner_height(),
                }
                .ok()
            })
            .and_then(|v| v.as_f64())
            .unwrap_or(1000.0);
        size.clamp(MIN_PX, (window * 0.7).max(MIN_PX))
    };
    let on_down = move |e: PointerEvent| {
        if e.button() != 0 {
            return;
        }
        if let Some(el) = e
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        {
            let _ = el.set_pointer_capture(e.pointer_id());
        }
        start.set_value(Some((along(&e), panel.size.get_untracked())));
        e.prevent_default();
    };
    let on_move = move |e: PointerEvent| {
        if let Some((from, size)) = start.get_value() {
            // The panels grow away from their edge: leftwards and upwards.
            panel.size.set(limit(size - f64::from(along(&e) - from)));
        }
    };
    let on_up = move |_: PointerEvent| start.set_value(None);
    let on_key = move |e: web_sys::KeyboardEvent| {
        let step = match (axis, e.key().as_str()) {
            (Axis::Width, "ArrowLeft") | (Axis::Height, "ArrowUp") => 24.0,
            (Axis::Width, "ArrowRight") | (Axis::Height, "ArrowDown") => -24.0,
            _ => return,
        };
        e.prevent_default();
        e.stop_propagation();
        panel.size.update(|s| *s = limit(*s + step));
    };
    let orientation = if axis == Axis::Width {
        "vertical"
    } else {
        "horizontal"
    };
    view! {
        <div class="splitter" role="separator" tabindex="0" aria-label=label
            aria-orientation=orientation
            aria-valuenow=move || format!("{:.0}", panel.size.get())
            on:pointerdown=on_down on:pointermove=on_move on:pointerup=on_up
            on:pointercancel=on_up on:keydown=on_key></div>
    }
}

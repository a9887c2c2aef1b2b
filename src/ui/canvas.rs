//! One memory space's interactive diagram on a `<canvas>`: the [`SpaceCanvas`] component,
//! which makes a [`Diagram`] once its elements are on the page and hands it the events and
//! the shared state it follows.
//!
//! The parts, each in its own file:
//! * [`draw`]: the diagram's elements and state, and how drawing is paced: nothing is drawn
//!   from an event handler; handlers change state and ask for a frame, and at most one frame
//!   per animation frame redraws the layers that changed (the diagram, its marks, the time
//!   cursor);
//! * [`input`]: wheel, drag, click, double-click and keys, through the rules of
//!   [`bufscope::render::interaction`], and the viewport they change (also answering
//!   [`Focus::reveal`](super::state::Focus::reveal));
//! * [`registry`]: a module's diagrams ([`Diagrams`]: how its keys and its Export menu
//!   reach them), and the page's (for its first drawings and the test hooks);
//! * [`palette`]: the drawing colours of a dark page;
//! * [`hooks`]: the `window.__bufscope_*` hooks of the browser tests and benchmarks (only
//!   with the `test-hooks` feature);
//! * [`backend`]: plotters-canvas with text sized and measured CSP-safely.

mod backend;
mod draw;
mod hooks;
mod input;
mod palette;
mod registry;

use std::cell::OnceCell;
use std::rc::Rc;

use leptos::html;
use leptos::prelude::*;
use web_sys::{KeyboardEvent, MouseEvent, PointerEvent, WheelEvent};

use self::draw::{Diagram, Layer};
pub(crate) use self::input::wheel_needs_click;
pub(crate) use self::backend::Canvas2d;
pub(crate) use self::palette::page_style;
pub(crate) use self::registry::{first_drawings, Diagrams};
use super::state::Focus;

/// State the diagrams of one module share (besides [`Focus`]).
#[derive(Clone, Copy)]
pub struct Shared {
    pub focus: Focus,
    /// The module's diagrams, for its keys and its Export menu.
    pub diagrams: Diagrams,
    /// Where the tooltip goes (viewport CSS pixels): the pointer over a block, else `None`.
    pub pointer: RwSignal<Option<(f64, f64)>>,
    /// The memory space the page's keys go to.
    pub active: StoredValue<Option<u32>>,
    /// The keys overlay is open.
    pub help: RwSignal<bool>,
}

impl Shared {
    pub fn new(focus: Focus, diagrams: Diagrams) -> Shared {
        Shared {
            focus,
            diagrams,
            pointer: RwSignal::new(None),
            active: StoredValue::new(None),
            help: RwSignal::new(false),
        }
    }
}

/// Where a component's diagram goes once its elements are on the page.
type Slot = Rc<OnceCell<Rc<Diagram>>>;

#[component]
pub fn SpaceCanvas(
    /// The memory space's label ([`bufscope::model::memory_space_label`]).
    space_label: String,
    color: u32,
    shared: Shared,
) -> impl IntoView {
    let focus = shared.focus;
    let canvas_ref = NodeRef::<html::Canvas>::new();
    let wrapper_ref = NodeRef::<html::Figure>::new();
    let slot: Slot = Rc::new(OnceCell::new());

    {
        let slot = slot.clone();
        Effect::new(move |_| {
            let (Some(canvas), Some(wrapper)) = (canvas_ref.get(), wrapper_ref.get()) else {
                return;
            };
            if slot.get().is_some() {
                return;
            }
            let analysis = focus.shown_untracked().analysis.clone();
            match Diagram::new(analysis, color, shared, canvas, wrapper) {
                Ok(d) => {
                    registry::register(&d);
                    shared.diagrams.add(&d);
                    hooks::install();
                    d.request(Layer::Base);
                    let _ = slot.set(d);
                }
                Err(e) => leptos::logging::warn!("bufscope: diagram of space {color}: {e}"),
            }
        });
    }
    follow_focus(&slot, focus);

    let on_wheel = handler(&slot, |d, e: WheelEvent| d.wheel(&e));
    let on_down = handler(&slot, |d, e: PointerEvent| d.pointer_down(&e));
    let on_move = handler(&slot, |d, e: PointerEvent| d.pointer_move(&e));
    let on_up = handler(&slot, |d, e: PointerEvent| d.pointer_up(&e));
    let on_leave = handler(&slot, |d, e: PointerEvent| d.pointer_leave(&e));
    let on_cancel = handler(&slot, |d, e: PointerEvent| d.pointer_leave(&e));
    let on_dblclick = handler(&slot, |d, e: MouseEvent| d.double_click(&e));
    let on_key = handler(&slot, |d, e: KeyboardEvent| {
        if d.key(&e) {
            e.prevent_default();
        }
    });
    let on_focus = move |_| shared.active.set_value(Some(color));

    let selected_name = move || {
        let shown = focus.shown();
        let m = &shown.module;
        focus
            .selected
            .get()
            .and_then(|v| m.values.get(v as usize))
            .filter(|v| m.value_color(v) == color)
            .map(|v| m.value_name(v))
    };
    let label = format!(
        "Block diagram of memory space {}: wheel to zoom, drag to pan, ? for keys",
        space_label
    );
    view! {
        <figure node_ref=wrapper_ref class="diagram" tabindex="0" data-color=color.to_string()
            data-selected=selected_name aria-label=label
            on:keydown=on_key on:focus=on_focus>
            <canvas node_ref=canvas_ref class="space-canvas" data-color=color.to_string()
                on:wheel=on_wheel on:pointerdown=on_down on:pointermove=on_move
                on:pointerup=on_up on:pointercancel=on_cancel on:pointerleave=on_leave
                on:dblclick=on_dblclick></canvas>
        </figure>
    }
}

/// The diagram follows the shared state: its marks the selection, hover and search, its
/// cursor the time cursor, its view the chosen step, its curve the capacity chosen, and it
/// answers requests to bring a value of its space into view.
fn follow_focus(slot: &Slot, focus: Focus) {
    {
        let slot = slot.clone();
        Effect::new(move |_| {
            // The module completed: the selected value's uses are known.
            focus.shown.track();
            focus.selected.track();
            focus.hovered.track();
            focus.matches.track();
            focus.match_index.track();
            if let Some(d) = slot.get() {
                d.request(Layer::Marks);
            }
        });
    }
    {
        let slot = slot.clone();
        Effect::new(move |_| {
            focus.time_cursor.track();
            focus.step.track();
            if let Some(d) = slot.get() {
                d.request(Layer::Cursor);
            }
        });
    }
    {
        let slot = slot.clone();
        Effect::watch(
            move || focus.step.get(),
            move |step, _, _| {
                if let Some(d) = slot.get() {
                    d.show_step(*step);
                }
            },
            false,
        );
    }
    {
        let slot = slot.clone();
        Effect::new(move |_| {
            focus.capacity.track();
            if let Some(d) = slot.get() {
                d.follow_capacity();
            }
        });
    }
    {
        let slot = slot.clone();
        Effect::new(move |_| {
            focus.estimates.track();
            if let Some(d) = slot.get() {
                d.follow_estimates();
            }
        });
    }
    {
        // A comparison's other side moved: show the same part of the program.
        let slot = slot.clone();
        Effect::new(move |_| {
            if let (Some(w), Some(d)) = (focus.follow.get(), slot.get()) {
                if w.color == d.color {
                    d.follow(w.lo, w.hi);
                }
            }
        });
    }
    let slot = slot.clone();
    focus.reveal.on(move |value| {
        if let Some(d) = slot.get() {
            d.reveal(value);
        }
    });
}

/// An event handler calling `f` with the diagram, once there is one.
fn handler<E: 'static>(slot: &Slot, f: fn(&Rc<Diagram>, E)) -> impl Fn(E) + 'static {
    let slot = slot.clone();
    move |e: E| {
        if let Some(d) = slot.get() {
            f(d, e);
        }
    }
}

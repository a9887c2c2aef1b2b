//! The view in the page's URL hash ([`bufscope::view_hash`]), so that a view can be
//! bookmarked or sent: opening the same dump on a page with that hash restores it.
//!
//! The hash the page opens with (or that the user types into the address bar later) is
//! kept until a read opens modules: the module it names is shown instead of the default
//! ([`wanted_module`]), and its view (zoom, chosen step, selected value, search, capacity)
//! is restored ([`follow`]). Switching module with the picker carries the search and the
//! capacity to the new module ([`carry`]); the capacity typed in the Sweep view is written
//! too ([`sweep_capacity`]); the same files read again (in one pass, after
//! a first read whose skip guessed wrong) keep the whole view ([`keep_for_reread`]). While a module is on screen the hash follows its
//! view, written with `history.replaceState` once changes pause ([`DEBOUNCE`]): never a new
//! history entry, nothing but names the user chose and numbers of the view.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bufscope::answers::capacity::parse_capacity;
use bufscope::query;
use bufscope::render::Viewport;
use bufscope::view_hash::{ViewState, Zoom};
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::state::{Focus, Shown, SpaceView};

/// Quiet time after the last change of the view before the hash is written.
const DEBOUNCE: Duration = Duration::from_millis(200);

thread_local! {
    /// What the next module put on screen starts from: the page's hash until a module
    /// takes it, then what a switch of module carries.
    static NEXT: RefCell<Option<ViewState>> = const { RefCell::new(None) };
    /// The view of the module on screen, as last seen.
    static CURRENT: RefCell<Option<ViewState>> = const { RefCell::new(None) };
    /// The timer of the next write of the hash.
    static TIMER: RefCell<Option<TimeoutHandle>> = const { RefCell::new(None) };
}

/// Reads the page's hash, now and whenever the user changes it.
pub fn start() {
    read_location();
    let listener = window_event_listener(ev::hashchange, |_| read_location());
    // The page's for as long as it lives.
    std::mem::forget(listener);
}

fn read_location() {
    let hash = window().location().hash().unwrap_or_default();
    let st = ViewState::from_hash(&hash);
    NEXT.with_borrow_mut(|n| *n = (st != ViewState::default()).then_some(st));
}

/// The position among `modules` of the module the hash names, if it is one of them.
pub fn wanted_module(modules: &[Arc<Shown>]) -> Option<usize> {
    NEXT.with_borrow(|n| {
        let name = n.as_ref()?.module.as_deref()?;
        modules.iter().position(|m| m.module.name == name)
    })
}

/// The capacities the page holds, by memory space, as typed: those of the view waiting for
/// a module (the hash's), else those of the module on screen.
pub fn capacities() -> BTreeMap<u32, String> {
    let next = NEXT.with_borrow(|n| n.as_ref().map(|s| s.capacity.clone()));
    (next.filter(|c| !c.is_empty()))
        .or_else(|| CURRENT.with_borrow(|c| c.as_ref().map(|s| s.capacity.clone())))
        .unwrap_or_default()
}

/// An out-of-memory message read with the dump of `module` ([`bufscope::answers::paired`]):
/// that module opens first (unless the page's hash names another) with `capacity` (a text
/// [`parse_capacity`] reads) on memory space `color`, unless the hash chose one there.
pub fn open_paired(module: &str, color: u32, capacity: String) {
    NEXT.with_borrow_mut(|n| {
        let st = n.get_or_insert_with(ViewState::default);
        if st.module.as_deref().is_some_and(|m| m != module) {
            return;
        }
        st.module = Some(module.to_string());
        st.capacity.entry(color).or_insert(capacity);
    });
}

/// The capacity typed in the Sweep view (memory space, text; `None`: cleared), written to
/// the hash as the module view's is (the view on screen's, with that capacity alone), so a
/// reload with the same compilations dropped again starts the sweep with it
/// ([`capacities`]), and a point opened carries it to its module.
pub fn sweep_capacity(capacity: Option<(u32, String)>) {
    let mut st = CURRENT.with_borrow(Clone::clone).unwrap_or_default();
    st.capacity = capacity.into_iter().collect();
    // A view still waiting for a module holds it too: it is the page's capacity now.
    NEXT.with_borrow_mut(|n| {
        if let Some(n) = n {
            n.capacity = st.capacity.clone();
        }
    });
    publish(st);
}

/// The files on screen are about to be read again (in one pass, where the first read's
/// skip guessed wrong): the module the read puts on screen starts from the whole view of
/// the one on screen, module, zoom, step and selection included, as the hash would.
pub fn keep_for_reread() {
    // A view not yet put on screen (the read again came before the module's views were
    // made) stays as it is: the hash's, say.
    if NEXT.with_borrow(Option::is_some) {
        return;
    }
    carry();
}

/// The module on screen is about to be replaced by another of the same read: the next
/// one starts with its search and capacity.
pub fn carry() {
    let current = CURRENT.with_borrow(Clone::clone);
    NEXT.with_borrow_mut(|n| *n = current);
}

/// Restores into `focus` (a module just put on screen) what the hash or the module before
/// left for it, then keeps the hash following the view.
pub fn follow(focus: Focus) {
    if let Some(st) = NEXT.with_borrow_mut(Option::take) {
        // The view on screen from now, before the views report it: a read again at once
        // keeps it.
        CURRENT.with_borrow_mut(|c| *c = Some(st.clone()));
        restore(focus, &st);
    }
    Effect::new(move |_| {
        if let Some(st) = state_of(focus) {
            publish(st);
        }
    });
}

/// Sets `focus` from `st`: the search and capacity always; the rest only when `st` is about
/// this module. A value, step or space the module does not have is left out.
fn restore(focus: Focus, st: &ViewState) {
    let shown = focus.shown();
    if !st.search.is_empty() {
        focus.search.set(st.search.clone());
    }
    let capacity: BTreeMap<_, _> = st
        .capacity
        .iter()
        .filter_map(|(&color, label)| Some((color, parse_capacity(label).ok()?.on(color))))
        .collect();
    if !capacity.is_empty() {
        focus.capacity.set(Arc::new(capacity));
    }
    let (m, analysis) = (&shown.module, &shown.analysis);
    if st.module.as_deref() != Some(m.name.as_str()) {
        return;
    }
    focus.step.set(st.step.filter(|&t| t < analysis.steps));
    let value = st.value.as_deref().and_then(|n| query::value_named(m, n));
    focus.selected.set(value);
    let Some(color) = st.space.filter(|&c| analysis.space(c).is_some()) else {
        return;
    };
    if let Some(z) = st.zoom {
        let view = Viewport {
            x0: z.x0,
            x1: z.x1,
            y0: z.y0,
            y1: z.y1,
        };
        focus.zoom.set(Some(SpaceView { color, view }));
    }
    // Once the diagrams are on the page, bring that space's into view. A lookup by
    // selector, one of the app's two (see `read::page_element`): the diagrams are made
    // after this, by the workspace, for a module this does not hold; the one thing asked of
    // them, once, is a scroll.
    request_animation_frame(move || {
        let selector = format!(".module figure.diagram[data-color=\"{color}\"]");
        if let Ok(Some(figure)) = document().query_selector(&selector) {
            let options = web_sys::ScrollIntoViewOptions::new();
            options.set_block(web_sys::ScrollLogicalPosition::Nearest);
            figure.scroll_into_view_with_scroll_into_view_options(&options);
        }
    });
}

/// `v` rounded to `1 / per` (the hash need not carry every digit of a pan).
fn rounded(v: f64, per: f64) -> f64 {
    (v * per).round() / per
}

/// The view of `focus` as the hash says it (tracks every signal it reads); `None` once the
/// module is gone.
fn state_of(focus: Focus) -> Option<ViewState> {
    let shown = focus.shown.try_get()?;
    let m = &shown.module;
    let zoom = focus.zoom.get();
    let value = focus.selected.get().and_then(|v| m.values.get(v as usize));
    Some(ViewState {
        module: Some(m.name.clone()),
        space: zoom.map(|z| z.color).or(value.map(|v| m.value_color(v))),
        zoom: zoom.map(|z| Zoom {
            x0: rounded(z.view.x0, 100.0),
            x1: rounded(z.view.x1, 100.0),
            y0: rounded(z.view.y0, 10.0),
            y1: rounded(z.view.y1, 10.0),
        }),
        step: focus.step.get(),
        value: value.map(|v| m.value_name(v)),
        search: focus.search.get(),
        capacity: focus
            .capacity
            .with(|c| c.iter().map(|(&k, c)| (k, c.label.clone())).collect()),
    })
}

/// Keeps `st` as the view on screen and writes it to the hash once changes pause.
fn publish(st: ViewState) {
    let hash = st.to_hash();
    CURRENT.with_borrow_mut(|c| *c = Some(st));
    if let Some(h) = TIMER.with_borrow_mut(Option::take) {
        h.clear();
    }
    let later = hash.clone();
    match set_timeout_with_handle(move || write(&later), DEBOUNCE) {
        Ok(h) => TIMER.with_borrow_mut(|t| *t = Some(h)),
        Err(_) => write(&hash),
    }
}

/// Replaces the page's URL by one with `hash` (none when empty), without a history entry.
fn write(hash: &str) {
    let w = window();
    let location = w.location();
    let now = location.hash().unwrap_or_default();
    if now.strip_prefix('#').unwrap_or(&now) == hash {
        return;
    }
    let url = if hash.is_empty() {
        format!(
            "{}{}",
            location.pathname().unwrap_or_default(),
            location.search().unwrap_or_default()
        )
    } else {
        format!("#{hash}")
    };
    if let Ok(history) = w.history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
    }
}

//! The diagrams of a module: one interactive canvas per memory space
//! ([`super::canvas::SpaceCanvas`]), sharing the height by what each space holds (a tiny
//! space is a slim strip that opens to its diagram), a first-time hint above them, the tooltip of the hovered value (`#tooltip`), the
//! overlay listing the keys (`?`, from [`BINDINGS`], the one table of the diagrams' keys
//! and mouse gestures; what each does is [`bufscope::render::interaction`]), and the
//! page's keys when nothing else has focus: they go to the focused diagram, or, when no
//! other element has focus, to the diagram last pointed at (else the first).
//!
//! Owns: the state in [`Shared`] (made here for each module's diagrams).

use bufscope::analysis::value_kind;
use bufscope::render::interaction::{key_action, Action, BINDINGS};
use bufscope::render::kind_color;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::KeyboardEvent;

use super::canvas::{self, Shared, SpaceCanvas};
use super::swatch;
use super::state::Focus;
use bufscope::text::clip_middle;
use bufscope::units;

#[component]
pub fn Diagrams(
    focus: Focus,
    /// The module's diagrams, as its Export menu reaches them too.
    diagrams: canvas::Diagrams,
) -> impl IntoView {
    let shared = Shared::new(focus, diagrams);
    // Read once: completion leaves the memory spaces as they are.
    let shown = focus.shown_untracked();
    let backend = shown.module.backend();
    let spaces = &shown.analysis.spaces;
    let fullest = spaces.iter().map(|s| s.peak_bytes).max().unwrap_or(0);
    let canvases = spaces
        .iter()
        .map(|s| {
            let share = space_share(s.peak_bytes, fullest);
            let tiny = is_tiny(s.peak_bytes, fullest);
            let label = bufscope::model::memory_space_label(s.color, backend);
            space_slot(label, s.color, s.peak_bytes, share, tiny, shared)
        })
        .collect_view();
    drop(shown);

    let keys = window_event_listener(ev::keydown, move |e: KeyboardEvent| page_key(shared, &e));
    on_cleanup(move || keys.remove());

    view! {
        <div class="diagrams">
            <button type="button" class="keys-button" aria-haspopup="dialog"
                title="Wheel: zoom · drag: pan · click: pin · double-click: zoom to a block"
                on:click=move |_| shared.help.update(|h| *h = !*h)>
                <kbd>"?"</kbd>" keys"
            </button>
            {canvases}
            <FirstHint />
            <Tooltip shared=shared />
            <KeysOverlay shared=shared />
        </div>
    }
}

/// The share of the diagrams' height a memory space gets, by what it holds: the square root
/// of its peak, so that a space of a hundredth of the largest one's bytes still gets a
/// tenth of its height (each space also has a minimum height, in style/diagram.css).
fn space_share(peak: u64, fullest: u64) -> f64 {
    if fullest == 0 {
        return 1.0;
    }
    (peak as f64 / fullest as f64).sqrt().max(0.05)
}

/// Whether a memory space holds so little beside the fullest one (under a hundredth of its
/// peak) that it is shown as a slim strip, opened to a diagram on request.
fn is_tiny(peak: u64, fullest: u64) -> bool {
    peak < fullest / 100
}

/// One memory space's place among the diagrams: its diagram, sharing the height by `share`;
/// or, for a `tiny` space, a slim strip (its label and peak) that opens to the diagram.
fn space_slot(
    space_label: String,
    color: u32,
    peak: u64,
    share: f64,
    tiny: bool,
    shared: Shared,
) -> impl IntoView {
    let open = RwSignal::new(!tiny);
    let label = format!("{space_label} · peak {}", units::human_bytes(peak));
    let strip = tiny.then(|| {
        view! {
            <button type="button" class="space-strip" data-color=color.to_string()
                aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                <span class=swatch::class(color)></span>
                <span class="strip-label">{label}</span>
                <span class="strip-action">{move || if open.get() { "hide diagram" } else { "show diagram" }}</span>
            </button>
        }
    });
    view! {
        <div class="space-slot" class:tiny=tiny class:open=move || open.get()
            data-color=color.to_string() style:flex-grow=format!("{share:.3}")>
            {strip}
            <Show when=move || open.get()>
                <SpaceCanvas space_label=space_label.clone() color=color shared=shared />
            </Show>
        </div>
    }
}

/// `localStorage[key]`, when the browser keeps one and it is set (through `js_sys`: a
/// private window or a page from `file://` may have no storage, or one that throws).
fn remembered(key: &str) -> Option<String> {
    storage_call("getItem", &[key])?.as_string()
}

/// Sets `localStorage[key]` when the browser keeps one.
fn remember(key: &str, value: &str) {
    let _ = storage_call("setItem", &[key, value]);
}

/// Calls `localStorage[method](...args)`; `None` when there is no storage or it threw.
fn storage_call(method: &str, args: &[&str]) -> Option<wasm_bindgen::JsValue> {
    use js_sys::{Array, Function, Reflect};
    let window = web_sys::window()?;
    let storage = Reflect::get(&window, &"localStorage".into()).ok()?;
    let f: Function = Reflect::get(&storage, &method.into())
        .ok()?
        .dyn_into()
        .ok()?;
    let args: Array = args
        .iter()
        .map(|a| wasm_bindgen::JsValue::from_str(a))
        .collect();
    f.apply(&storage, &args).ok()
}

/// Where the page remembers that the first-time hint was seen.
const HINT_SEEN: &str = "bufscope.hint-seen";

/// The first-time hint above the diagrams (how to zoom and pan; over the hover line, never
/// over a diagram nor taking room from one, style/workspace.css), gone at the first wheel,
/// press or key on them; shown once: remembered (`localStorage`) as soon as it is shown, so
/// that the next module opened, or the next visit, does not show it again.
#[component]
fn FirstHint() -> impl IntoView {
    let seen = remembered(HINT_SEEN).is_some();
    if !seen {
        remember(HINT_SEEN, "1");
    }
    let shown = RwSignal::new(!seen);
    let dismiss = move || {
        if shown.get_untracked() {
            shown.set(false);
            remember(HINT_SEEN, "1");
        }
    };
    let inside = |e: &web_sys::Event| {
        e.target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest(".diagrams").ok().flatten())
            .is_some()
    };
    if !seen {
        let wheel = window_event_listener(ev::wheel, move |e| {
            if inside(&e) {
                dismiss();
            }
        });
        let down = window_event_listener(ev::pointerdown, move |e| {
            if inside(&e) {
                dismiss();
            }
        });
        let key = window_event_listener(ev::keydown, move |e| {
            if inside(&e) {
                dismiss();
            }
        });
        on_cleanup(move || {
            wheel.remove();
            down.remove();
            key.remove();
        });
    }
    // In a notebook or a scrolling page the wheel scrolls on until a diagram is clicked.
    let zoom = if canvas::wheel_needs_click() {
        "Click a diagram, then wheel to zoom"
    } else {
        "Wheel to zoom"
    };
    view! {
        <Show when=move || shown.get()>
            <p class="first-hint" role="note">
                {zoom}" · drag to pan · click a block to pin it · "<kbd>"?"</kbd>" for keys"
                <button type="button" class="hint-close" aria-label="Dismiss the hint"
                    on:click=move |_| dismiss()>"×"</button>
            </p>
        </Show>
    }
}

/// A key pressed anywhere on the page.
fn page_key(shared: Shared, e: &KeyboardEvent) {
    if e.default_prevented() || e.ctrl_key() || e.meta_key() || e.alt_key() {
        return;
    }
    let action = key_action(&e.key());
    if action == Some(Action::Close) {
        if shared.help.get_untracked() {
            shared.help.set(false);
            e.prevent_default();
        } else if !typing(e) && shared.focus.selected.get_untracked().is_some() {
            shared.focus.selected.set(None);
        }
        return;
    }
    if typing(e) {
        return;
    }
    if action == Some(Action::Help) {
        shared.help.update(|h| *h = !*h);
        e.prevent_default();
        return;
    }
    // The focused diagram has had its turn; the others get keys only when nothing has focus.
    if !nothing_focused() {
        return;
    }
    let handled = (shared.diagrams)
        .with(shared.active.get_value(), |d| d.key(e))
        .or_else(|| shared.diagrams.with(None, |d| d.key(e)))
        .unwrap_or(false);
    if handled {
        e.prevent_default();
    }
}

/// Whether the key goes to a text field, a list or an editable element.
fn typing(e: &KeyboardEvent) -> bool {
    let Some(el) = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return false;
    };
    matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
        || el
            .get_attribute("contenteditable")
            .is_some_and(|v| v != "false")
}

/// Whether no element (other than the page itself) has focus.
fn nothing_focused() -> bool {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return true;
    };
    match (doc.active_element(), doc.body()) {
        (None, _) => true,
        (Some(a), Some(body)) => {
            a == *body.unchecked_ref::<web_sys::Element>() || a.tag_name() == "HTML"
        }
        (Some(a), None) => a.tag_name() == "HTML",
    }
}

/// The hovered value's tooltip, beside the pointer (on its left or above it near the
/// window's right or bottom edge).
#[component]
fn Tooltip(shared: Shared) -> impl IntoView {
    let focus = shared.focus;
    let content = move || {
        let v = focus.hovered.get()?;
        let shown = focus.shown();
        let m = &shown.module;
        let value = m.values.get(v as usize)?;
        let instr = m.instruction(value);
        let kind = value_kind(m, value);
        let c = kind_color(kind);
        let swatch = format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2);
        let live = value.live.map_or_else(
            || "—".to_string(),
            |r| {
                let steps = u64::from(r.end.saturating_sub(r.start)) + 1;
                format!(
                    "steps {} – {} ({})",
                    units::group_digits(u64::from(r.start)),
                    units::group_digits(u64::from(r.end)),
                    units::count(steps as usize, "step")
                )
            },
        );
        let alloc = m.allocation_of(value);
        let place = format!(
            "allocation {} + {}",
            alloc.index,
            units::group_digits(value.offset)
        );
        // A tooltip is a glance: long texts (a dump may hold 300,000-character names or
        // op_names) are cut in the middle; the details pane has them whole.
        let op_name = clip_middle(m.str(instr.op_name), TIP_CHARS);
        let opcode = clip_middle(m.str(instr.opcode), TIP_CHARS);
        Some(view! {
            <p class="tip-name"><span class="tip-swatch" style:background=swatch></span>{clip_middle(&bufscope::query::display_name(m, value), TIP_CHARS)}</p>
            <dl>
                <dt>"kind"</dt><dd>{kind.label()}{(!opcode.is_empty()).then(|| format!(" · {opcode}"))}</dd>
                <dt>"shape"</dt><dd class="mono">{clip_middle(m.str(value.shape), TIP_CHARS)}</dd>
                <dt>"size"</dt><dd>{units::exact_bytes(value.size)}</dd>
                <dt>"live"</dt><dd>{live}</dd>
                <dt>"at"</dt><dd>{place}</dd>
                {(!op_name.is_empty()).then(|| view! { <dt>"op_name"</dt><dd class="mono">{op_name}</dd> })}
            </dl>
        })
    };
    let position = move || shared.pointer.get();
    let window_size = || {
        web_sys::window().map_or((1e9, 1e9), |w| {
            let f = |v: Result<wasm_bindgen::JsValue, _>| {
                v.ok().and_then(|v| v.as_f64()).unwrap_or(1e9)
            };
            (f(w.inner_width()), f(w.inner_height()))
        })
    };
    view! {
        <div id="tooltip" class="tooltip" role="tooltip"
            class:shown=move || position().is_some() && focus.hovered.get().is_some()
            class:flip-x=move || position().is_some_and(|(x, _)| x > window_size().0 * 0.62)
            class:flip-y=move || position().is_some_and(|(_, y)| y > window_size().1 * 0.62)
            style:left=move || position().map(|(x, _)| format!("{x}px"))
            style:top=move || position().map(|(_, y)| format!("{y}px"))>
            {content}
        </div>
    }
}

/// The most characters of one text the tooltip shows (about four lines of it).
const TIP_CHARS: usize = 240;

/// The list of keys, over the page.
#[component]
fn KeysOverlay(shared: Shared) -> impl IntoView {
    let rows = BINDINGS
        .iter()
        .map(|b| view! { <tr><th scope="row"><kbd>{b.label}</kbd></th><td>{b.does}</td></tr> })
        .collect_view();
    view! {
        <Show when=move || shared.help.get()>
            <div class="keys-overlay" on:click=move |_| shared.help.set(false)>
                <div class="keys-panel" role="dialog" aria-modal="true" aria-labelledby="keys-title"
                    on:click=|e| e.stop_propagation()>
                    <h2 id="keys-title">"Diagram keys"</h2>
                    <p class="keys-note">"Keys go to the focused diagram, or to the one last pointed at when nothing else has focus."</p>
                    <table>
                        <tbody>{rows.clone()}</tbody>
                    </table>
                    <button type="button" class="button" on:click=move |_| shared.help.set(false)>"Close"</button>
                </div>
            </div>
        </Show>
    }
}

//! The table's body as a virtualised list: a scroll container (`.table-scroll`) of lines
//! of one fixed height ([`ROW_PX`]), in which only the lines scrolled to, and [`MARGIN`]
//! more on each side, are in the DOM; two spacer rows stand for the others. A container
//! out of sight (scrolled away in the dock, or off the window) keeps no margin, so that a
//! new step costs little while the user looks at another panel. The
//! window is measured again in an animation frame after a scroll (of the container or of
//! anything around it). A value selected anywhere (a block clicked, a search, a key) is
//! scrolled to (its group opened when grouped); with the table focused, the arrow keys,
//! Page Up / Down, Home and End move the selection.

use bufscope::query::{self, TableRow};
use leptos::ev;
use leptos::html::{Div, Thead};
use leptos::prelude::*;

use super::{header, rows, Table};

/// A line's height (CSS pixels); `style/panels.css` gives every body line this height.
pub(super) const ROW_PX: usize = 26;
/// Lines mounted above and below the visible ones.
const MARGIN: usize = 12;
/// The first mounted line is a multiple of this: scrolling mounts lines `CHUNK` at a time.
const CHUNK: usize = 10;
/// Lines taken as visible before the container has a height.
const GUESS: usize = 24;

/// Where the container was when last measured (CSS pixels).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct At {
    /// `scrollTop`.
    top: usize,
    /// `clientHeight` (0 before the first measurement).
    height: usize,
    /// Some of the box is on screen.
    seen: bool,
}

/// The lines `[start, end)` mounted for a list of `n` lines in a container at `at`: the
/// lines its box shows plus `MARGIN` on each side; without the margin when the box is off
/// screen.
fn window(at: At, n: usize) -> (usize, usize) {
    let (visible, margin) = match at.height {
        0 => (GUESS, MARGIN),
        h => (h.div_ceil(ROW_PX) + 1, if at.seen { MARGIN } else { 0 }),
    };
    let first = at.top / ROW_PX;
    let start = (first.saturating_sub(margin) / CHUNK * CHUNK).min(n);
    let end = (first + visible + margin).max(start + visible + 2 * margin);
    (start, end.min(n))
}

/// Whether some of `el`'s box is on screen: inside the window and every ancestor that
/// scrolls.
fn on_screen(el: &web_sys::Element) -> bool {
    let bx = el.get_bounding_client_rect();
    let inner = leptos::prelude::window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(f64::INFINITY);
    let (mut lo, mut hi) = (bx.top().max(0.0), bx.bottom().min(inner));
    let mut up = el.parent_element();
    while let Some(a) = up {
        if a.scroll_height() > a.client_height() && a.client_height() > 0 {
            let r = a.get_bounding_client_rect();
            lo = lo.max(r.top());
            hi = hi.min(r.bottom());
        }
        up = a.parent_element();
    }
    hi > lo
}

/// The scroll container and where it was when last measured.
#[derive(Clone, Copy)]
struct Scroll {
    el: NodeRef<Div>,
    /// The table's header, which covers the top rows of the container.
    head: NodeRef<Thead>,
    at: RwSignal<At>,
    /// A measurement is waiting for its animation frame.
    pending: StoredValue<bool>,
}

impl Scroll {
    fn measure(self) {
        // Called from animation frames: the table (all its signals at once) may be gone.
        if self.at.is_disposed() {
            return;
        }
        if let Some(el) = self.el.get_untracked() {
            let at = At {
                top: el.scroll_top().max(0) as usize,
                height: el.client_height().max(0) as usize,
                seen: on_screen(&el),
            };
            if self.at.get_untracked() != at {
                self.at.set(at);
            }
        }
    }

    fn measure_soon(self) {
        if self.pending.try_get_value() == Some(false) {
            self.pending.set_value(true);
            request_animation_frame(move || {
                self.pending.try_set_value(false);
                self.measure();
            });
        }
    }
}

/// Measures `s` again after any scroll of the page (captured: scroll events do not bubble),
/// and after a drag or a key that may have resized the panels, while the table lives.
fn measure_on_page_changes(s: Scroll) {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let Some(doc) = document().dyn_into::<web_sys::EventTarget>().ok() else {
        return;
    };
    let f = Closure::<dyn Fn()>::new(move || s.measure_soon());
    let events = ["scroll", "pointerup", "keyup"];
    for e in events {
        let _ = doc.add_event_listener_with_callback_and_bool(e, f.as_ref().unchecked_ref(), true);
    }
    let kept = StoredValue::new_local(Some(f));
    on_cleanup(move || {
        if let Some(f) = kept.try_update_value(Option::take).flatten() {
            for e in events {
                let _ = doc.remove_event_listener_with_callback_and_bool(
                    e,
                    f.as_ref().unchecked_ref(),
                    true,
                );
            }
        }
    });
}

/// The table: header, spacers and the mounted lines, in its scroll container.
pub(super) fn table(t: Table) -> impl IntoView {
    let s = Scroll {
        el: NodeRef::new(),
        head: NodeRef::new(),
        at: RwSignal::new(At::default()),
        pending: StoredValue::new(false),
    };
    let span = Memo::new(move |_| window(s.at.get(), t.lines.with(|l| l.rows.len())));
    // A group line's view is made from the groups of its generation; a value's from the value.
    let mounted = move || {
        let (start, end) = span.get();
        // Value lines are made again once the module is complete (their op_names) and once
        // its HLO text is joined (their source lines, found or inferred through it).
        let made = t
            .focus
            .shown
            .with(|s| u64::from(s.complete) | u64::from(s.module.hlo.is_some()) << 1);
        t.lines.with(|l| {
            let end = end.min(l.rows.len());
            l.rows[start.min(end)..end]
                .iter()
                .map(|&r| match r {
                    TableRow::Group(_) => (l.generation, r),
                    _ => (made, r),
                })
                .collect::<Vec<_>>()
        })
    };
    let before = move || format!("{}px", span.get().0 * ROW_PX);
    let after = move || {
        let rest = t.lines.with(|l| l.rows.len()).saturating_sub(span.get().1);
        format!("{}px", rest * ROW_PX)
    };
    follow(t, s);
    Effect::new(move |_| {
        if s.el.get().is_some() {
            s.measure_soon();
        }
    });
    let resize = window_event_listener(ev::resize, move |_| s.measure_soon());
    on_cleanup(move || resize.remove());
    measure_on_page_changes(s);
    view! {
        <div class="table-scroll value-scroll" node_ref=s.el tabindex="0" role="region"
            aria-label="Values; with focus, the arrow keys move the selection"
            on:scroll=move |_| s.measure_soon() on:keydown=move |e| key(t, s, &e)>
            <table id="peak-table" class="values" class:grouped=move || t.grouped.get()
                data-lines=move || t.lines.with(|l| l.rows.len()).to_string()>
                <thead node_ref=s.head><tr>{header::headers(t)}</tr></thead>
                <tbody>
                    <tr class="spacer" aria-hidden="true"><td colspan="8" style:height=before></td></tr>
                    <For each=mounted key=|k| *k children=move |(_, r)| line(t, r) />
                    <tr class="spacer" aria-hidden="true"><td colspan="8" style:height=after></td></tr>
                </tbody>
            </table>
        </div>
    }
}

/// One line's view.
fn line(t: Table, r: TableRow) -> AnyView {
    let shown = t.focus.shown();
    match r {
        TableRow::Value(v) => rows::value_row(t.focus, &shown.module, v, false).into_any(),
        TableRow::Member(v) => rows::value_row(t.focus, &shown.module, v, true).into_any(),
        TableRow::Group(i) => t
            .groups
            .with_untracked(|g| {
                g.get(i as usize)
                    .map(|g| rows::group_row(&shown.module, g, t.expanded))
            })
            .into_any(),
    }
}

/// Scrolls back to the first line when what the table lists changes (sort, grouping, space,
/// step, subset), and to the selected value whenever one is selected.
fn follow(t: Table, s: Scroll) {
    Effect::watch(
        move || {
            t.sort.track();
            t.grouped.track();
            t.space.track();
            t.step.track();
            t.focus.subset.track();
        },
        move |_, _, _| {
            // Mount the first lines now. A box scrolled down (as last measured, or with a
            // measurement on its way) is scrolled back in the next frame; one at the top is
            // left alone: reading its scroll position after the lines changed would lay the
            // page out before the frame does.
            let scrolled = s.at.get_untracked().top != 0 || s.pending.get_value();
            if s.at.get_untracked().top != 0 {
                s.at.update(|at| at.top = 0);
            }
            if scrolled {
                request_animation_frame(move || {
                    if let Some(el) = s.el.try_get_untracked().flatten() {
                        if el.scroll_top() != 0 {
                            el.set_scroll_top(0);
                        }
                    }
                    s.measure();
                });
            }
        },
        false,
    );
    Effect::new(move |_| {
        let Some(v) = t.focus.selected.get() else {
            return;
        };
        if t.grouped.get_untracked() {
            let group = t
                .groups
                .with_untracked(|gs| gs.iter().find(|g| g.values.contains(&v)).map(|g| g.op_name));
            if let Some(op) = group.filter(|op| !t.expanded.with_untracked(|e| e.contains(op))) {
                t.expanded.update(|e| {
                    e.insert(op);
                });
            }
        }
        // Once the DOM has the lines (an opened group's spacers).
        request_animation_frame(move || scroll_to(t, s, v));
    });
}

/// Scrolls the least that shows value `v`'s line below the sticky header (a line far away
/// comes to the middle), then mounts the lines there.
fn scroll_to(t: Table, s: Scroll, v: u32) {
    if s.at.is_disposed() {
        return;
    }
    let Some(el) = s.el.get_untracked() else {
        return;
    };
    let Some(i) = t
        .lines
        .with_untracked(|l| l.rows.iter().position(|r| r.value() == Some(v)))
    else {
        return;
    };
    let header = (s.head.get_untracked()).map_or(0.0, |h| h.get_bounding_client_rect().height());
    let top = f64::from(el.scroll_top().max(0));
    let height = (f64::from(el.client_height()) - header).max(ROW_PX as f64);
    let (y, row) = ((i * ROW_PX) as f64, ROW_PX as f64);
    let to = if y >= top && y + row <= top + height {
        top
    } else if y < top && top - y <= height {
        y
    } else if y + row > top + height && y + row - (top + height) <= height {
        y + row - height
    } else {
        y - (height - row) / 2.0
    };
    if to != top {
        el.set_scroll_top(to.max(0.0).round() as i32);
    }
    s.measure();
}

/// The keys of the focused table: ↓ ↑ one value, Page Down / Up a screen, Home / End the
/// first and last value.
fn key(t: Table, s: Scroll, e: &ev::KeyboardEvent) {
    if e.ctrl_key() || e.meta_key() || e.alt_key() || e.default_prevented() {
        return;
    }
    let page = (s.at.get_untracked().height / ROW_PX)
        .saturating_sub(1)
        .max(1) as isize;
    let selected = t.focus.selected.get_untracked();
    let (from, steps) = match e.key().as_str() {
        "ArrowDown" => (selected, 1),
        "ArrowUp" => (selected, -1),
        "PageDown" => (selected, page),
        "PageUp" => (selected, -page),
        "Home" => (None, 1),
        "End" => (None, -1),
        _ => return,
    };
    e.prevent_default();
    let to = t.lines.with_untracked(|l| {
        query::step_value(&l.rows, from, steps).and_then(|i| l.rows[i].value())
    });
    if let Some(v) = to.filter(|&v| Some(v) != selected) {
        t.focus.selected.set(Some(v));
    }
    // Keep the keys here when the focused line scrolls out of the DOM.
    if let Some(el) = s.el.get_untracked() {
        let _ = el.focus();
    }
}

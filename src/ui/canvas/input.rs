//! What a diagram does with the pointer and the keys: each event is turned into pixels of
//! the canvas and handed to the rules of [`bufscope::render::interaction`] (what part of
//! the panel it is in, the view a wheel, drag, key or double-click leads to, what a click
//! pins, the time cursor's step, the loop band a click zooms to, whether a wheel is the
//! diagram's or the page's); this file only applies their answers: the viewport (kept
//! inside the space by [`constrain`]), the shared hover, selection and cursor, and the
//! element's `data-dragging` / `data-hover` attributes.

use std::rc::Rc;

use bufscope::render::diff::{view_for_window, view_window};
use bufscope::render::interaction::{
    self, constrain, key_action, key_view, peak_step, region, time_step, zoom_to_block, Action,
    Drag, Region, Wheel, WheelPlace,
};
use bufscope::render::loops::{band_at, band_view, Band};
use bufscope::render::Viewport;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{KeyboardEvent, MouseEvent, PointerEvent, WheelEvent};

use super::draw::{Diagram, Layer, Press};
use crate::ui::state::{SpaceView, ViewWindow};

impl Diagram {
    // ------------------------------------------------------------------ the viewport

    /// Sets the viewport (kept inside the space, not thinner than a few steps or bytes).
    fn set_view(self: &Rc<Self>, view: Viewport) {
        let view = constrain(view, self.full);
        let mut st = self.st.borrow_mut();
        if view != st.view {
            st.view = view;
            drop(st);
            let (lo, hi) = view_window(&view, self.analysis.steps);
            let color = self.color;
            self.focus().window.set(Some(ViewWindow { color, lo, hi }));
            self.focus().zoom.set(Some(SpaceView { color, view }));
            self.request(Layer::Base);
        }
    }

    /// Shows the window `lo .. hi` of relative program position (the other side of a
    /// comparison moved there), offsets kept, without publishing it back.
    pub(super) fn follow(self: &Rc<Self>, lo: f64, hi: f64) {
        let steps = self.analysis.steps;
        let mut st = self.st.borrow_mut();
        let view = constrain(view_for_window(&st.view, (lo, hi), steps), self.full);
        if view != st.view {
            st.view = view;
            drop(st);
            self.request(Layer::Base);
        }
    }

    /// Zooms to the steps of the loop band under pixel `at` ([`band_at`], [`band_view`]);
    /// whether there was one.
    fn zoom_to_band(self: &Rc<Self>, at: (f64, f64)) -> bool {
        let Some(band) = self.band_under(at) else {
            return false;
        };
        let view = self.st.borrow().view;
        self.set_view(band_view(&view, &band));
        true
    }

    /// The loop band under pixel `at`, if any.
    fn band_under(&self, at: (f64, f64)) -> Option<Band> {
        let bands = self.shown().loops().bands.clone();
        let st = self.st.borrow();
        band_at(&st.layout, &st.view, &bands, at).map(|i| bands[i].clone())
    }

    /// Zooms to a value's block with a margin around it; whether it has one.
    fn zoom_to(self: &Rc<Self>, value: u32) -> bool {
        let Some(b) = self.index().block(value) else {
            return false;
        };
        self.set_view(zoom_to_block(&b));
        true
    }

    /// Brings `value` into view: zooms to its block and scrolls the diagram into the page.
    pub(super) fn reveal(self: &Rc<Self>, value: u32) {
        if self.zoom_to(value) {
            let options = web_sys::ScrollIntoViewOptions::new();
            options.set_block(web_sys::ScrollLogicalPosition::Nearest);
            self.wrapper
                .scroll_into_view_with_scroll_into_view_options(&options);
        }
    }

    // ------------------------------------------------------------------ pointer

    /// The event's position in device pixels of the canvas.
    fn device_px(&self, e: &MouseEvent) -> (f64, f64) {
        let scale = self.css_scale();
        (
            f64::from(e.offset_x()) * scale,
            f64::from(e.offset_y()) * scale,
        )
    }

    /// Device pixels per CSS pixel of the canvas as laid out.
    pub(super) fn css_scale(&self) -> f64 {
        let css = f64::from(self.canvas.client_width());
        if css > 0.0 {
            f64::from(self.canvas.width()) / css
        } else {
            1.0
        }
    }

    /// Whether this diagram has the keyboard focus (a click on it gives it).
    fn has_focus(&self) -> bool {
        let active = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.active_element());
        active.is_some_and(|a| {
            let a: &wasm_bindgen::JsValue = a.as_ref();
            a == AsRef::<wasm_bindgen::JsValue>::as_ref(&self.wrapper)
        })
    }

    /// Which part of the panel a device pixel is in.
    fn region(&self, at: (f64, f64)) -> Region {
        region(&self.st.borrow().layout, at)
    }

    pub(super) fn wheel(self: &Rc<Self>, e: &WheelEvent) {
        // In a notebook or a scrolling page the wheel scrolls on until the diagram is
        // clicked (or Ctrl, a pinch, is held): not prevented, it goes to the page.
        let place = WheelPlace {
            focused: self.has_focus(),
            embedded: embedded(),
            page_scrolls: page_scrolls(),
            ctrl: e.ctrl_key(),
        };
        if !interaction::wheel_is_diagrams(place) {
            return;
        }
        let unit = interaction::wheel_unit(e.delta_mode(), f64::from(self.canvas.client_height()));
        let w = Wheel {
            dx: e.delta_x() * unit,
            dy: e.delta_y() * unit,
            shift: e.shift_key(),
            alt: e.alt_key(),
        };
        let at = self.device_px(e);
        let view = {
            let st = self.st.borrow();
            interaction::wheel(st.view, &st.layout, at, w)
        };
        // The wheel is the diagram's, even at its zoom limits: the page around it does
        // not scroll.
        e.prevent_default();
        let Some(view) = view else { return };
        self.shared.active.set_value(Some(self.color));
        self.set_view(view);
    }

    pub(super) fn pointer_down(self: &Rc<Self>, e: &PointerEvent) {
        if e.button() != 0 {
            return;
        }
        // A press gives the diagram the focus (the wheel is then its own, `wheel_is_diagrams`),
        // also where the press's default is prevented, without scrolling the page (or the
        // notebook) to show the whole diagram.
        focus_in_place(&self.wrapper);
        let device = self.device_px(e);
        let mut region = self.region(device);
        if region == Region::Outside && self.band_under(device).is_some() {
            // The loop bands' strip is on the time axis: a press there is a click or a pan
            // of the steps.
            region = Region::Steps;
        }
        let at = (f64::from(e.offset_x()), f64::from(e.offset_y()));
        let view = self.st.borrow().view;
        let Some(drag) = Drag::press(region, at, view) else {
            return;
        };
        let _ = self.canvas.set_pointer_capture(e.pointer_id());
        self.st.borrow_mut().press = Some(Press {
            pointer: e.pointer_id(),
            drag,
        });
    }

    pub(super) fn pointer_move(self: &Rc<Self>, e: &PointerEvent) {
        let at = self.device_px(e);
        self.shared.active.set_value(Some(self.color));
        // A drag pans.
        let panned = {
            let mut st = self.st.borrow_mut();
            let plot = st.layout.diagram;
            match st.press.as_mut() {
                Some(p) if p.pointer == e.pointer_id() => {
                    let was_dragging = p.drag.dragging;
                    let to = (f64::from(e.offset_x()), f64::from(e.offset_y()));
                    let view = p.drag.moved(to, plot, self.css_scale());
                    if p.drag.dragging && !was_dragging {
                        let _ = self.wrapper.set_attribute("data-dragging", "");
                    }
                    view
                }
                _ => None,
            }
        };
        if let Some(view) = panned {
            self.set_view(view);
            self.shared.focus.hovered.set(None);
            self.shared.pointer.set(None);
            self.set_time_cursor(at);
            return;
        }
        self.st.borrow_mut().pointer = Some(at);
        self.hover(at, e);
    }

    /// Hover: the value under the pointer, the tooltip and the time cursor.
    fn hover(self: &Rc<Self>, at: (f64, f64), e: &MouseEvent) {
        let value = self.value_at(at);
        let focus = self.focus();
        if focus.hovered.get_untracked() != value {
            focus.hovered.set(value);
        }
        let _ = if value.is_some() {
            self.wrapper.set_attribute("data-hover", "")
        } else {
            self.wrapper.remove_attribute("data-hover")
        };
        let tip = value.map(|_| (f64::from(e.client_x()), f64::from(e.client_y())));
        if self.shared.pointer.get_untracked() != tip {
            self.shared.pointer.set(tip);
        }
        self.set_time_cursor(at);
    }

    fn set_time_cursor(&self, at: (f64, f64)) {
        let step = {
            let st = self.st.borrow();
            time_step(st.view, &st.layout, at, self.analysis.steps)
        };
        let cursor = self.focus().time_cursor;
        if cursor.get_untracked() != step {
            cursor.set(step);
        }
    }

    /// The value whose block is under device pixel `(px, py)`.
    fn hit(&self, px: i32, py: i32) -> Option<u32> {
        let st = self.st.borrow();
        self.index().hit(&st.view, st.layout.diagram, px, py)
    }

    fn value_at(&self, (px, py): (f64, f64)) -> Option<u32> {
        self.hit(px as i32, py as i32)
    }

    pub(super) fn pointer_up(self: &Rc<Self>, e: &PointerEvent) {
        let press = self.st.borrow_mut().press.take();
        let _ = self.canvas.release_pointer_capture(e.pointer_id());
        let _ = self.wrapper.remove_attribute("data-dragging");
        let Some(press) = press else { return };
        if press.drag.dragging {
            return;
        }
        let at = self.device_px(e);
        // A click on a loop band zooms to its steps.
        if self.zoom_to_band(at) {
            return;
        }
        // A click on the curve or the step axis chooses the step the answers are about.
        if self.region(at) == Region::Steps {
            let step = {
                let st = self.st.borrow();
                time_step(st.view, &st.layout, at, self.analysis.steps)
            };
            if step.is_some() {
                self.focus().step.set(step);
            }
            return;
        }
        // A click pins the value under the pointer; a click on empty diagram unpins.
        let layout = self.st.borrow().layout;
        if let Some(value) = interaction::click(&layout, self.device_px(e), |x, y| self.hit(x, y)) {
            let selected = self.focus().selected;
            if selected.get_untracked() != value {
                selected.set(value);
            }
        }
    }

    pub(super) fn pointer_leave(self: &Rc<Self>, e: &PointerEvent) {
        if self.st.borrow().press.is_some() && e.type_() != "pointercancel" {
            // Captured: the drag goes on outside the canvas.
            return;
        }
        self.st.borrow_mut().press = None;
        self.st.borrow_mut().pointer = None;
        let _ = self.wrapper.remove_attribute("data-dragging");
        let _ = self.wrapper.remove_attribute("data-hover");
        let focus = self.focus();
        if focus.hovered.get_untracked().is_some() {
            focus.hovered.set(None);
        }
        if focus.time_cursor.get_untracked().is_some() {
            focus.time_cursor.set(None);
        }
        self.shared.pointer.set(None);
    }

    pub(super) fn double_click(self: &Rc<Self>, e: &MouseEvent) {
        let (view, layout) = {
            let st = self.st.borrow();
            (st.view, st.layout)
        };
        let block = |x, y| self.hit(x, y).and_then(|v| self.index().block(v));
        if let Some(view) = interaction::double_click(view, &layout, self.device_px(e), block) {
            e.prevent_default();
            self.set_view(view);
        }
    }

    // ------------------------------------------------------------------ keys

    /// Handles a key meant for this diagram; whether it was one.
    pub(crate) fn key(self: &Rc<Self>, e: &KeyboardEvent) -> bool {
        if e.ctrl_key() || e.meta_key() || e.alt_key() {
            return false;
        }
        let Some(action) = key_action(&e.key()) else {
            return false;
        };
        match action {
            Action::Search => {
                // The search box answers (`SearchBox`); a page without one ignores it.
                self.focus().find.emit(());
                return true;
            }
            Action::NextPeak | Action::PreviousPeak => return self.peak_key(action),
            _ => {}
        }
        let view = {
            let st = self.st.borrow();
            let at = st
                .pointer
                .filter(|&p| region(&st.layout, p) == Region::Diagram);
            key_view(
                action,
                st.view,
                self.full,
                st.layout.diagram,
                e.shift_key(),
                at,
            )
        };
        let Some(view) = view else { return false };
        self.set_view(view);
        self.shared.active.set_value(Some(self.color));
        true
    }

    /// A peak key: the next or previous peak of this space's curve becomes the step the
    /// answers and the live set are about; whether there was one.
    fn peak_key(self: &Rc<Self>, action: Action) -> bool {
        let focus = self.focus();
        let Some(from) = untrack(|| focus.step_in(self.color)) else {
            return false;
        };
        let to = self.space().and_then(|s| peak_step(action, &s.curve, from));
        if to.is_some() {
            focus.step.set(to);
            self.shared.active.set_value(Some(self.color));
        }
        to.is_some()
    }

    // ------------------------------------------------------------------ exports

    /// The canvas as drawn now.
    pub(crate) fn canvas(&self) -> &web_sys::HtmlCanvasElement {
        &self.canvas
    }

    /// The view window on screen.
    pub(crate) fn view(&self) -> Viewport {
        self.st.borrow().view
    }
}

/// Focuses `el` as `el.focus({ preventScroll: true })` does: the page stays where it is.
fn focus_in_place(el: &web_sys::HtmlElement) {
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"preventScroll".into(), &true.into());
    let focus = js_sys::Reflect::get(el, &"focus".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    match focus {
        Some(f) => {
            let _ = f.call1(el, &options);
        }
        None => {
            let _ = el.focus();
        }
    }
}

/// Whether the page is shown inside another (a notebook's `<iframe>`).
fn embedded() -> bool {
    let Some(w) = web_sys::window() else { return false };
    match w.top() {
        Ok(Some(top)) => {
            let top: &wasm_bindgen::JsValue = top.as_ref();
            top != AsRef::<wasm_bindgen::JsValue>::as_ref(&w)
        }
        // A top the page may not see is another page's.
        _ => true,
    }
}

/// Whether the page itself scrolls (a narrow window, where the parts stack).
fn page_scrolls() -> bool {
    let root = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element());
    root.is_some_and(|r| r.scroll_height() > r.client_height() + 1)
}

/// Whether a wheel over a diagram scrolls the page until the diagram is clicked, as the
/// first-time hint says before the page is laid out: a window narrow enough that the parts
/// stack (style/workspace.css, under 56rem) is taken as one that scrolls.
pub(crate) fn wheel_needs_click() -> bool {
    let stacked = web_sys::window()
        .and_then(|w| w.match_media("(max-width: 56rem)").ok().flatten())
        .is_some_and(|m| m.matches());
    !interaction::wheel_is_diagrams(WheelPlace {
        embedded: embedded(),
        page_scrolls: stacked || page_scrolls(),
        ..WheelPlace::default()
    })
}

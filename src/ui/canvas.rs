//! One memory space's interactive diagram on a `<canvas>`: drawing (through
//! [`bufscope::render`] and the [`backend::Canvas2d`] plotters backend), zoom and pan
//! (wheel, drag, keys, double-click), hover and click on blocks, the time cursor, and
//! answering [`Focus::reveal`].
//!
//! Owns: the viewport of its space, and how drawing is paced. Nothing is drawn from an
//! event handler: handlers change state and ask for a frame, and at most one frame per
//! animation frame draws. A frame redraws only the layers that changed:
//! 1. *base* (offscreen): the diagram itself ([`render::draw_space_indexed`]); redrawn when
//!    the viewport, the size or the colour scheme changes;
//! 2. *marked* (offscreen): base + the marks ([`render::draw_marks`]: highlighted
//!    instruction, search matches, hovered and selected value); redrawn when those change;
//! 3. the visible canvas: a copy of 1 or 2 and the time cursor, drawn on every frame.
//!
//! Also registers every live diagram ([`with_diagram`]) for the page's keys and for the
//! test hook `window.__bufscope_block_px(color, valueName)`.

mod backend;

use std::cell::{Cell, OnceCell, RefCell};
use std::rc::{Rc, Weak};
use std::sync::Arc;

use bufscope::analysis::Space;
use bufscope::model::memory_space_name;
use bufscope::render::{
    draw_cursor, draw_marks, draw_space_indexed, wheel_zoom, IndexBuilder, Layout, Levels, Mapping,
    Marks, PxRect, SpaceIndex, Style, Viewport,
};
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use plotters::prelude::{IntoDrawingArea, RGBColor};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    CanvasRenderingContext2d, HtmlCanvasElement, HtmlElement, KeyboardEvent, MouseEvent,
    PointerEvent, ResizeObserver, WheelEvent,
};

use self::backend::Canvas2d;
use super::diagram::Shared;
use super::read::next_task;
use super::state::{Focus, Shown};

/// Keys: zoom factor per press of W / S.
const KEY_ZOOM: f64 = 0.8;
/// Keys: part of the view one press of A / D / an arrow pans by (Shift: three times that).
const KEY_PAN: f64 = 0.15;
/// Pointer movement (CSS pixels) before a press becomes a drag rather than a click.
const DRAG_SLOP: f64 = 4.0;
/// Double-click and reveal: margin around the block, as a part of its size.
const ZOOM_MARGIN: f64 = 0.25;

#[component]
pub fn SpaceCanvas(shown: Arc<Shown>, color: u32, shared: Shared) -> impl IntoView {
    let focus = shared.focus;
    let canvas_ref = NodeRef::<html::Canvas>::new();
    let wrapper_ref = NodeRef::<html::Figure>::new();
    let slot: Rc<OnceCell<Rc<Diagram>>> = Rc::new(OnceCell::new());

    {
        let (slot, shown) = (slot.clone(), shown.clone());
        Effect::new(move |_| {
            let (Some(canvas), Some(wrapper)) = (canvas_ref.get(), wrapper_ref.get()) else {
                return;
            };
            if slot.get().is_some() {
                return;
            }
            match Diagram::new(shown.clone(), color, shared, canvas, wrapper) {
                Ok(d) => {
                    register(&d);
                    d.request(Layer::Base);
                    let _ = slot.set(d);
                }
                Err(e) => leptos::logging::warn!("bufscope: diagram of space {color}: {e}"),
            }
        });
    }
    // Marks follow the shared selection, hover and search.
    {
        let slot = slot.clone();
        Effect::new(move |_| {
            focus.selected.track();
            focus.hovered.track();
            focus.matches.track();
            focus.match_index.track();
            if let Some(d) = slot.get() {
                d.request(Layer::Marks);
            }
        });
    }
    // The shared time cursor.
    {
        let slot = slot.clone();
        Effect::new(move |_| {
            focus.time_cursor.track();
            if let Some(d) = slot.get() {
                d.request(Layer::Cursor);
            }
        });
    }
    // A request to bring a value into view: answered by the diagram of its space.
    {
        let slot = slot.clone();
        Effect::new(move |previous: Option<()>| {
            let asked = focus.reveal.get();
            // Only requests made while this diagram is on screen.
            if previous.is_none() {
                return;
            }
            if let (Some((value, _)), Some(d)) = (asked, slot.get()) {
                d.reveal(value);
            }
        });
    }

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

    let selected_name = {
        let shown = shown.clone();
        move || {
            let m = &shown.module;
            focus
                .selected
                .get()
                .and_then(|v| m.values.get(v as usize))
                .filter(|v| m.value_color(v) == color)
                .map(|v| m.value_name(v))
        }
    };
    let label = format!(
        "Block diagram of memory space {color} ({}): wheel to zoom, drag to pan, ? for keys",
        memory_space_name(color)
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

/// Blocks placed into a level of detail per idle task (about 5 ms in wasm).
const LEVEL_PIECE: usize = 100_000;
/// Values gathered into a space's index per frame (about 15 ms in wasm).
const INDEX_PIECE: usize = 400_000;

/// An event handler calling `f` with the diagram, once there is one.
fn handler<E: 'static>(
    slot: &Rc<OnceCell<Rc<Diagram>>>,
    f: fn(&Rc<Diagram>, E),
) -> impl Fn(E) + 'static {
    let slot = slot.clone();
    move |e: E| {
        if let Some(d) = slot.get() {
            f(d, e);
        }
    }
}

/// What a frame has to redraw (each level includes the ones after it).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Layer {
    Base,
    Marks,
    Cursor,
}

/// An offscreen canvas.
struct Offscreen {
    canvas: HtmlCanvasElement,
    ctx: CanvasRenderingContext2d,
}

impl Offscreen {
    fn new() -> Result<Offscreen, String> {
        let canvas: HtmlCanvasElement = web_sys::window()
            .and_then(|w| w.document())
            .ok_or("no document")?
            .create_element("canvas")
            .map_err(|e| format!("{e:?}"))?
            .dyn_into()
            .map_err(|_| "not a canvas")?;
        let ctx = context(&canvas)?;
        Ok(Offscreen { canvas, ctx })
    }
}

fn context(canvas: &HtmlCanvasElement) -> Result<CanvasRenderingContext2d, String> {
    canvas
        .get_context("2d")
        .map_err(|e| format!("{e:?}"))?
        .ok_or("no 2D context")?
        .dyn_into()
        .map_err(|_| "not a 2D context".to_string())
}

/// A press on the canvas that may become a drag.
struct Press {
    pointer: i32,
    /// Where it started, CSS pixels of the canvas.
    at: (f64, f64),
    view: Viewport,
    /// Pan the steps only (the press was on the curve or the step axis).
    x_only: bool,
    /// Pan the offsets only (the press was on the byte axis).
    y_only: bool,
    dragging: bool,
}

/// A resize observer and its callback (which must live as long as it).
type Observer = (ResizeObserver, Closure<dyn FnMut()>);

/// One diagram: its elements, its space and its state.
pub(crate) struct Diagram {
    shown: Arc<Shown>,
    /// Built by the first frames ([`Diagram::frame`]), not when the diagram is made.
    index: OnceCell<SpaceIndex>,
    /// The index while the first frames build it.
    building: RefCell<Option<IndexBuilder>>,
    /// The whole space (known before its index).
    full: Viewport,
    shared: Shared,
    color: u32,
    canvas: HtmlCanvasElement,
    ctx: CanvasRenderingContext2d,
    wrapper: HtmlElement,
    base: Offscreen,
    marked: Offscreen,
    st: RefCell<State>,
    /// A frame has been asked for and not drawn yet.
    pending: Cell<bool>,
    /// Whether the levels of detail are being built ([`Diagram::prepare_levels`]).
    preparing: Cell<bool>,
    /// The resize observer, and its callback (which must live as long as it).
    observer: RefCell<Option<Observer>>,
}

struct State {
    view: Viewport,
    /// Canvas size in device pixels, and device pixels per CSS pixel.
    size: (u32, u32),
    scale: f64,
    style: Style,
    layout: Layout,
    /// The lowest layer that must be redrawn.
    dirty: Option<Layer>,
    /// Whether the marked layer holds anything (else the base is shown as it is).
    marked: bool,
    press: Option<Press>,
    /// The pointer over the canvas, device pixels.
    pointer: Option<(f64, f64)>,
}

impl Drop for Diagram {
    fn drop(&mut self) {
        if let Some((observer, _)) = self.observer.borrow_mut().take() {
            observer.disconnect();
        }
    }
}

impl Diagram {
    fn new(
        shown: Arc<Shown>,
        color: u32,
        shared: Shared,
        canvas: HtmlCanvasElement,
        wrapper: HtmlElement,
    ) -> Result<Rc<Diagram>, String> {
        let space = shown.analysis.space(color).ok_or("no such memory space")?;
        let full = Viewport::full(&shown.analysis, space);
        let ctx = context(&canvas)?;
        let style = Style::default();
        let d = Rc::new(Diagram {
            st: RefCell::new(State {
                view: full,
                size: (0, 0),
                scale: 1.0,
                layout: Layout::new((0, 0), style.font_size),
                style,
                dirty: Some(Layer::Base),
                marked: false,
                press: None,
                pointer: None,
            }),
            shown,
            index: OnceCell::new(),
            building: RefCell::new(None),
            full,
            shared,
            color,
            canvas,
            ctx,
            wrapper,
            base: Offscreen::new()?,
            marked: Offscreen::new()?,
            pending: Cell::new(false),
            preparing: Cell::new(false),
            observer: RefCell::new(None),
        });
        // Redraw when the width changes (window, scroll bar, panels beside).
        let weak = Rc::downgrade(&d);
        let callback = Closure::<dyn FnMut()>::new(move || {
            if let Some(d) = weak.upgrade() {
                d.request(Layer::Base);
            }
        });
        match ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            Ok(observer) => {
                observer.observe(&d.wrapper);
                *d.observer.borrow_mut() = Some((observer, callback));
            }
            Err(e) => leptos::logging::warn!("bufscope: no ResizeObserver: {e:?}"),
        }
        Ok(d)
    }

    fn focus(&self) -> Focus {
        self.shared.focus
    }

    /// The space's index, built now if the first frames have not built it yet.
    fn index(&self) -> &SpaceIndex {
        self.index.get_or_init(|| {
            let started = self.building.borrow_mut().take();
            match (started.or_else(|| self.start_index()), self.space()) {
                (Some(builder), Some(space)) => builder.finish(&self.shown.module, space),
                _ => SpaceIndex::default(),
            }
        })
    }

    fn space(&self) -> Option<&Space> {
        self.shown.analysis.space(self.color)
    }

    fn start_index(&self) -> Option<IndexBuilder> {
        let space = self.space()?;
        Some(SpaceIndex::builder(
            &self.shown.analysis,
            space,
            Levels::Auto,
        ))
    }

    /// Builds a piece of the index ([`INDEX_PIECE`] values); the last piece finishes it
    /// (ordering the blocks by first step).
    fn build_index(&self) {
        let done = {
            let mut building = self.building.borrow_mut();
            match (building.take().or_else(|| self.start_index()), self.space()) {
                (Some(mut builder), Some(space)) => {
                    let done = builder.step(&self.shown.module, space, INDEX_PIECE);
                    *building = Some(builder);
                    done
                }
                _ => true,
            }
        };
        if done {
            self.index();
        }
    }

    /// Asks for a frame that redraws `layer` and what is above it.
    fn request(self: &Rc<Self>, layer: Layer) {
        {
            let mut st = self.st.borrow_mut();
            st.dirty = Some(st.dirty.map_or(layer, |d| d.min(layer)));
        }
        if self.pending.replace(true) {
            return;
        }
        let weak = Rc::downgrade(self);
        request_animation_frame(move || {
            if let Some(d) = weak.upgrade() {
                d.pending.set(false);
                if d.frame() {
                    d.prepare_levels();
                }
            }
        });
    }

    /// Draws what is dirty; whether it drew. A big space's first drawing takes several
    /// frames, so that none holds the page long: the index is built a piece per frame,
    /// then the level of detail the view uses (as a zoom that needs a level not built yet
    /// does), then it draws.
    fn frame(self: &Rc<Self>) -> bool {
        let started = now();
        let mut st = self.st.borrow_mut();
        let Some(mut dirty) = st.dirty.take() else {
            return false;
        };
        if self.fit(&mut st) {
            dirty = Layer::Base;
        }
        if st.size.0 == 0 || st.size.1 == 0 {
            return false;
        }
        let built = if self.index.get().is_none() {
            self.build_index();
            true
        } else if dirty == Layer::Base {
            let font_size = Style::default().font_size * st.scale;
            let plot = Layout::new(st.size, font_size).diagram;
            self.index().prepare_view(&st.view, plot)
        } else {
            false
        };
        if built {
            drop(st);
            self.request(dirty);
            return false;
        }
        if let Err(e) = self.draw(&mut st, dirty) {
            leptos::logging::warn!("bufscope: drawing memory space {}: {e}", self.color);
        }
        drop(st);
        record_frame(now() - started);
        true
    }

    /// Builds the finer levels of detail of a big space while idle after the first
    /// drawing, [`LEVEL_PIECE`] blocks per task, so that zooming in does not wait for them
    /// and no task holds a frame back.
    fn prepare_levels(self: &Rc<Self>) {
        if self.preparing.replace(true) {
            return;
        }
        let weak = Rc::downgrade(self);
        spawn_local(async move {
            loop {
                next_task().await;
                let Some(d) = weak.upgrade() else { break };
                let plot = d.st.borrow().layout.diagram;
                if !d.index().prepare_next(plot, LEVEL_PIECE) {
                    break;
                }
            }
        });
    }

    /// Sizes the canvases to the element's width × device pixel ratio; whether it changed.
    fn fit(&self, st: &mut State) -> bool {
        let dpr = web_sys::window()
            .map_or(1.0, |w| w.device_pixel_ratio())
            .clamp(1.0, 4.0);
        let css_width = f64::from(self.wrapper.client_width().max(0));
        if css_width < 1.0 {
            return false;
        }
        let css_height = bufscope::render::panel_height(css_width);
        let size = (
            (css_width * dpr).round() as u32,
            (css_height * dpr).round() as u32,
        );
        if size == st.size && dpr == st.scale {
            return false;
        }
        for c in [&self.canvas, &self.base.canvas, &self.marked.canvas] {
            c.set_width(size.0);
            c.set_height(size.1);
        }
        let _ = HtmlElement::style(&self.canvas).set_property("height", &format!("{css_height}px"));
        st.size = size;
        st.scale = dpr;
        true
    }

    fn draw(&self, st: &mut State, dirty: Layer) -> Result<(), String> {
        let shown = &self.shown;
        let space = self.space().ok_or("no such memory space")?;
        let size = st.size;
        if dirty == Layer::Base {
            st.style = Style {
                font_size: Style::default().font_size * st.scale,
                ..page_style()
            };
            st.layout = Layout::new(size, st.style.font_size);
            let area = Canvas2d::new(&self.base.canvas, &self.base.ctx)?.into_drawing_area();
            draw_space_indexed(
                &area,
                &shown.module,
                &shown.analysis,
                space,
                self.index(),
                &st.view,
                &st.style,
            )
            .map_err(|e| e.to_string())?;
            let v = st.view;
            let _ = self
                .wrapper
                .set_attribute("data-view", &format!("{},{},{},{}", v.x0, v.x1, v.y0, v.y1));
        }
        if dirty <= Layer::Marks {
            let focus = self.focus();
            let matches = focus.matches.get_untracked();
            let current = matches.get(focus.match_index.get_untracked()).copied();
            let hovered = focus.hovered.get_untracked();
            let selected = focus.selected.get_untracked();
            let instruction = untrack(|| focus.highlighted_instruction());
            let marks = Marks {
                instruction,
                matches: &matches,
                current,
                hovered,
                selected,
            };
            st.marked = !marks.is_empty();
            if st.marked {
                let m = &self.marked;
                m.ctx
                    .clear_rect(0.0, 0.0, f64::from(size.0), f64::from(size.1));
                m.ctx
                    .draw_image_with_html_canvas_element(&self.base.canvas, 0.0, 0.0)
                    .map_err(|e| format!("{e:?}"))?;
                let area = Canvas2d::new(&m.canvas, &m.ctx)?.into_drawing_area();
                draw_marks(&area, self.index(), &st.view, &st.style, &marks)
                    .map_err(|e| e.to_string())?;
            }
        }
        let shown_layer = if st.marked { &self.marked } else { &self.base };
        self.ctx
            .draw_image_with_html_canvas_element(&shown_layer.canvas, 0.0, 0.0)
            .map_err(|e| format!("{e:?}"))?;
        if let Some(step) = self.focus().time_cursor.get_untracked() {
            let area = Canvas2d::new(&self.canvas, &self.ctx)?.into_drawing_area();
            draw_cursor(&area, &shown.analysis, space, &st.view, &st.style, step)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    // ------------------------------------------------------------------ the viewport

    /// Sets the viewport (kept inside the space, not thinner than a few steps or bytes).
    fn set_view(self: &Rc<Self>, view: Viewport) {
        let view = constrain(view, self.full);
        let mut st = self.st.borrow_mut();
        if view != st.view {
            st.view = view;
            drop(st);
            self.request(Layer::Base);
        }
    }

    fn view(&self) -> Viewport {
        self.st.borrow().view
    }

    fn reset(self: &Rc<Self>) {
        self.set_view(self.full);
    }

    /// Zooms by `factor` (below 1: in) on the axes asked, around the data point under
    /// device pixel `at`, or the view's centre.
    fn zoom(self: &Rc<Self>, factor: f64, x: bool, y: bool, at: Option<(f64, f64)>) {
        let (view, map) = {
            let st = self.st.borrow();
            (st.view, Mapping::new(st.view, st.layout.diagram))
        };
        let anchor = at.map_or(
            ((view.x0 + view.x1) / 2.0, (view.y0 + view.y1) / 2.0),
            |(px, py)| (map.step_at(px), map.bytes_at(py)),
        );
        let fx = if x { factor } else { 1.0 };
        let fy = if y { factor } else { 1.0 };
        self.set_view(view.zoom(fx, fy, anchor));
    }

    /// Pans by a part of the view's width and height.
    fn pan_by(self: &Rc<Self>, fx: f64, fy: f64) {
        let v = self.view();
        self.set_view(v.pan((v.x1 - v.x0) * fx, (v.y1 - v.y0) * fy));
    }

    /// Zooms to a value's block with a margin around it.
    fn zoom_to(self: &Rc<Self>, value: u32) -> bool {
        let Some(b) = self.index().block(value) else {
            return false;
        };
        let (x0, x1) = (f64::from(b.x0), f64::from(b.x1));
        let (y0, y1) = (b.y0 as f64, b.y1 as f64);
        let (mx, my) = ((x1 - x0) * ZOOM_MARGIN, (y1 - y0) * ZOOM_MARGIN);
        self.set_view(Viewport {
            x0: x0 - mx,
            x1: x1 + mx,
            y0: y0 - my,
            y1: y1 + my,
        });
        true
    }

    fn reveal(self: &Rc<Self>, value: u32) {
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
    fn css_scale(&self) -> f64 {
        let css = f64::from(self.canvas.client_width());
        if css > 0.0 {
            f64::from(self.canvas.width()) / css
        } else {
            1.0
        }
    }

    /// Which part of the panel a device pixel is in.
    fn region(&self, (px, py): (f64, f64)) -> Region {
        let l = self.st.borrow().layout;
        let (x, y) = (px as i32, py as i32);
        let (c, d) = (l.curve, l.diagram);
        if d.contains(x, y) {
            Region::Diagram
        } else if x >= d.x0
            && x < d.x1
            && ((y >= c.y0 && y < c.y1) || (y >= d.y1 && y < d.y1 + 2 * (d.y0 - c.y1).max(8)))
        {
            Region::Steps
        } else if y >= d.y0 && y < d.y1 && x < d.x0 {
            Region::Bytes
        } else {
            Region::Outside
        }
    }

    fn wheel(self: &Rc<Self>, e: &WheelEvent) {
        let at = self.device_px(e);
        let region = self.region(at);
        if region == Region::Outside {
            return;
        }
        e.prevent_default();
        self.shared.active.set_value(Some(self.color));
        let unit = match e.delta_mode() {
            1 => 16.0,
            2 => f64::from(self.canvas.client_height().max(1)),
            _ => 1.0,
        };
        let (mut dx, mut dy) = (e.delta_x() * unit, e.delta_y() * unit);
        if e.shift_key() && dy == 0.0 {
            // Chromium turns Shift + wheel into a horizontal wheel.
            (dx, dy) = (0.0, dx);
        }
        if !e.shift_key() && dx.abs() > dy.abs() {
            // A sideways swipe (touchpad) pans in time.
            let w = f64::from(self.st.borrow().layout.diagram.width().max(1));
            self.pan_by(dx / w, 0.0);
            return;
        }
        let factor = wheel_zoom(dy);
        let (x, y) = match region {
            Region::Steps => (true, false),
            Region::Bytes => (false, true),
            _ if e.shift_key() => (true, false),
            _ if e.alt_key() => (false, true),
            _ => (true, true),
        };
        self.zoom(factor, x, y, Some(at));
    }

    fn pointer_down(self: &Rc<Self>, e: &PointerEvent) {
        if e.button() != 0 {
            return;
        }
        let at = self.device_px(e);
        let region = self.region(at);
        if region == Region::Outside {
            return;
        }
        let _ = self.canvas.set_pointer_capture(e.pointer_id());
        let mut st = self.st.borrow_mut();
        st.press = Some(Press {
            pointer: e.pointer_id(),
            at: (f64::from(e.offset_x()), f64::from(e.offset_y())),
            view: st.view,
            x_only: region == Region::Steps,
            y_only: region == Region::Bytes,
            dragging: false,
        });
    }

    fn pointer_move(self: &Rc<Self>, e: &PointerEvent) {
        let at = self.device_px(e);
        self.shared.active.set_value(Some(self.color));
        // A drag pans.
        let panned = {
            let mut st = self.st.borrow_mut();
            let d = st.layout.diagram;
            let scale = self.css_scale();
            match st.press.as_mut() {
                Some(p) if p.pointer == e.pointer_id() => {
                    let (dx, dy) = (
                        f64::from(e.offset_x()) - p.at.0,
                        f64::from(e.offset_y()) - p.at.1,
                    );
                    if !p.dragging && dx.hypot(dy) >= DRAG_SLOP {
                        p.dragging = true;
                        let _ = self.wrapper.set_attribute("data-dragging", "");
                    }
                    p.dragging.then(|| {
                        let v = p.view;
                        let sx = (v.x1 - v.x0) / f64::from(d.width().max(1));
                        let sy = (v.y1 - v.y0) / f64::from(d.height().max(1));
                        let mx = if p.y_only { 0.0 } else { -dx * scale * sx };
                        let my = if p.x_only { 0.0 } else { dy * scale * sy };
                        v.pan(mx, my)
                    })
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
        let step = match self.region(at) {
            Region::Diagram | Region::Steps => {
                let st = self.st.borrow();
                let map = Mapping::new(st.view, st.layout.diagram);
                let s = map.step_at(at.0).floor();
                let last = f64::from(self.shown.analysis.steps.max(1) - 1);
                (s >= 0.0).then(|| s.min(last) as u32)
            }
            _ => None,
        };
        let cursor = self.focus().time_cursor;
        if cursor.get_untracked() != step {
            cursor.set(step);
        }
    }

    fn value_at(&self, (px, py): (f64, f64)) -> Option<u32> {
        let st = self.st.borrow();
        self.index()
            .hit(&st.view, st.layout.diagram, px as i32, py as i32)
    }

    fn pointer_up(self: &Rc<Self>, e: &PointerEvent) {
        let press = self.st.borrow_mut().press.take();
        let _ = self.canvas.release_pointer_capture(e.pointer_id());
        let _ = self.wrapper.remove_attribute("data-dragging");
        let Some(press) = press else { return };
        if press.dragging {
            return;
        }
        // A click pins the value under the pointer; a click on empty diagram unpins.
        let at = self.device_px(e);
        if self.region(at) == Region::Diagram {
            let value = self.value_at(at);
            let selected = self.focus().selected;
            if selected.get_untracked() != value {
                selected.set(value);
            }
        }
    }

    fn pointer_leave(self: &Rc<Self>, e: &PointerEvent) {
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

    fn double_click(self: &Rc<Self>, e: &MouseEvent) {
        let at = self.device_px(e);
        if self.region(at) != Region::Diagram {
            return;
        }
        e.prevent_default();
        match self.value_at(at) {
            Some(v) => {
                self.zoom_to(v);
            }
            None => self.zoom(0.5, true, true, Some(at)),
        }
    }

    // ------------------------------------------------------------------ keys

    /// Handles a key meant for this diagram; whether it was one.
    pub(crate) fn key(self: &Rc<Self>, e: &KeyboardEvent) -> bool {
        if e.ctrl_key() || e.meta_key() || e.alt_key() {
            return false;
        }
        let at = self
            .st
            .borrow()
            .pointer
            .filter(|&p| self.region(p) == Region::Diagram);
        let far = if e.shift_key() { 3.0 } else { 1.0 };
        match e.key().as_str() {
            "w" | "W" | "+" | "=" => self.zoom(KEY_ZOOM, true, true, at),
            "s" | "S" | "-" | "_" => self.zoom(1.0 / KEY_ZOOM, true, true, at),
            "a" | "A" | "ArrowLeft" => self.pan_by(-KEY_PAN * far, 0.0),
            "d" | "D" | "ArrowRight" => self.pan_by(KEY_PAN * far, 0.0),
            "ArrowUp" => self.pan_by(0.0, KEY_PAN * far),
            "ArrowDown" => self.pan_by(0.0, -KEY_PAN * far),
            "0" | "Home" => self.reset(),
            _ => return false,
        }
        self.shared.active.set_value(Some(self.color));
        true
    }

    // ------------------------------------------------------------------ test hook

    /// The centre of `name`'s visible block in CSS pixels of the viewport.
    fn block_centre(&self, name: &str) -> Option<(f64, f64)> {
        let value = self.index().find_by_name(&self.shown.module, name)?;
        let b = self.index().block(value)?;
        let st = self.st.borrow();
        let r: PxRect = Mapping::new(st.view, st.layout.diagram).block_px(&b)?;
        let rect = self.canvas.get_bounding_client_rect();
        let scale = self.css_scale();
        let cx = f64::from(r.x0 + r.x1) / 2.0 / scale;
        let cy = f64::from(r.y0 + r.y1) / 2.0 / scale;
        Some((
            rect.left() + f64::from(self.canvas.client_left()) + cx,
            rect.top() + f64::from(self.canvas.client_top()) + cy,
        ))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Region {
    /// The block diagram: zoom both ways, pan both ways.
    Diagram,
    /// The curve and the step axis: time only.
    Steps,
    /// The byte axis: offsets only.
    Bytes,
    Outside,
}

/// `view` inside `full`, no thinner than 2 steps or 16 bytes (or the whole space when that
/// is thinner), and valid.
fn constrain(view: Viewport, full: Viewport) -> Viewport {
    if !view.is_valid() {
        return full;
    }
    let widen = |a: f64, b: f64, min: f64| {
        if b - a >= min {
            (a, b)
        } else {
            let c = (a + b) / 2.0;
            (c - min / 2.0, c + min / 2.0)
        }
    };
    let (x0, x1) = widen(view.x0, view.x1, (full.x1 - full.x0).min(2.0));
    let (y0, y1) = widen(view.y0, view.y1, (full.y1 - full.y0).min(16.0));
    Viewport { x0, x1, y0, y1 }.clamped(&full)
}

/// The drawing colours: render's own on a light page, the page's on a dark one.
fn page_style() -> Style {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    if !dark {
        return Style::default();
    }
    Style {
        background: RGBColor(0x1f, 0x22, 0x26),
        text: RGBColor(0xe6, 0xe7, 0xe8),
        muted: RGBColor(0x9a, 0xa1, 0xa9),
        grid: RGBColor(0x2b, 0x2f, 0x34),
        frame: RGBColor(0x4a, 0x50, 0x58),
        band: RGBColor(0x26, 0x2a, 0x2f),
        boundary: RGBColor(0x3a, 0x40, 0x47),
        curve: RGBColor(0x7f, 0xa7, 0xd6),
        peak: RGBColor(0xff, 0x6b, 0x6b),
        highlight: RGBColor(0xff, 0x5c, 0xb0),
        mark: RGBColor(0xff, 0xc1, 0x2e),
        cursor: RGBColor(0xc9, 0xce, 0xd4),
        ..Style::default()
    }
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Benchmark hook: when the page defines `window.__bufscope_draw_ms` as an array, the
/// duration of every frame drawn is pushed to it.
fn record_frame(ms: f64) {
    let Some(w) = web_sys::window() else { return };
    if let Ok(list) = js_sys::Reflect::get(&w, &JsValue::from_str("__bufscope_draw_ms")) {
        if let Some(list) = list.dyn_ref::<js_sys::Array>() {
            list.push(&JsValue::from_f64(ms));
        }
    }
}

// ---------------------------------------------------------------------- registry

thread_local! {
    static DIAGRAMS: RefCell<Vec<Weak<Diagram>>> = const { RefCell::new(Vec::new()) };
    static HOOK: Cell<bool> = const { Cell::new(false) };
}

fn register(d: &Rc<Diagram>) {
    DIAGRAMS.with(|all| {
        let mut all = all.borrow_mut();
        all.retain(|w| w.strong_count() > 0);
        all.push(Rc::downgrade(d));
    });
    install_test_hook();
}

/// Calls `f` with the live diagram of memory space `color` (the first one on screen when
/// `color` is `None`).
pub(crate) fn with_diagram<R>(color: Option<u32>, f: impl FnOnce(&Rc<Diagram>) -> R) -> Option<R> {
    let d = DIAGRAMS.with(|all| {
        all.borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .find(|d| color.is_none_or(|c| d.color == c))
    })?;
    Some(f(&d))
}

/// Test hook: `window.__bufscope_block_px(color, valueName)` is `{x, y}`, the centre of the
/// value's block as drawn now in CSS pixels of the viewport (what a mouse event's
/// `clientX`/`clientY` would be), or `null` when the value has no block in view. A linear
/// search by name: for tests, not for the app.
fn install_test_hook() {
    if HOOK.with(|h| h.replace(true)) {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let hook =
        Closure::<dyn Fn(JsValue, JsValue) -> JsValue>::new(|color: JsValue, name: JsValue| {
            let (Some(color), Some(name)) = (color.as_f64(), name.as_string()) else {
                return JsValue::NULL;
            };
            let centre = with_diagram(Some(color as u32), |d| d.block_centre(&name)).flatten();
            match centre {
                Some((x, y)) => {
                    let o = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&o, &"x".into(), &x.into());
                    let _ = js_sys::Reflect::set(&o, &"y".into(), &y.into());
                    o.into()
                }
                None => JsValue::NULL,
            }
        });
    let _ = js_sys::Reflect::set(&window, &"__bufscope_block_px".into(), hook.as_ref());
    // Lives as long as the page.
    hook.forget();
}

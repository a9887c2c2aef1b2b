//! One diagram's elements, state and drawing. Nothing is drawn from an event handler:
//! handlers change state and ask for a frame ([`Diagram::request`]), and at most one frame
//! per animation frame draws, redrawing only the layers that changed:
//! 1. *base* (offscreen): the diagram itself ([`draw_space_indexed`]); redrawn when the
//!    viewport, the size or the colour scheme changes;
//! 2. *marked* (offscreen): base + the marks ([`draw_marks`]: highlighted instruction,
//!    search matches, hovered and selected value); redrawn when those change;
//! 3. the visible canvas: a copy of 1 or 2 and the time cursor, drawn on every frame.
//!
//! A big space's first drawing takes several frames (its index is built in pieces), and its
//! finer levels of detail are built while idle, with [`next_task`] between pieces.

use std::cell::{Cell, OnceCell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use bufscope::analysis::{Analysis, Space};
use bufscope::answers::capacity::Capacity;
use bufscope::render::estimate::EstimateCurve;
use bufscope::render::interaction::{constrain, Drag};
use bufscope::render::{
    draw_cursor, draw_marks, draw_space_indexed, IndexBuilder, Layout, Levels, Marks, SpaceIndex,
    Style, Viewport,
};
use leptos::prelude::*;
use leptos::task::spawn_local;
use plotters::prelude::IntoDrawingArea;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlElement, ResizeObserver};

use super::backend::Canvas2d;
use super::palette::page_style;
use super::Shared;
use crate::ui::state::{Focus, Shown};
use crate::ui::tasks::{next_task, now_ms};
use crate::ui::uses;

/// Blocks placed into a level of detail per idle task (about 5 ms in wasm).
const LEVEL_PIECE: usize = 100_000;
/// Values gathered into a space's index per frame (about 15 ms in wasm).
const INDEX_PIECE: usize = 400_000;
/// A frame that has built a piece of the first drawing (the index, a level of detail) goes
/// on to the next piece, or to drawing, while it has run for less than this (ms): a small
/// space is drawn in its first frame, not its third.
const FIRST_FRAME_MS: f64 = 20.0;

/// What a frame has to redraw (each level includes the ones after it).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) enum Layer {
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
pub(super) struct Press {
    pub(super) pointer: i32,
    pub(super) drag: Drag,
}

/// A resize observer and its callback (which must live as long as it).
type Observer = (ResizeObserver, Closure<dyn FnMut()>);

/// One diagram: its elements, its space and its state.
pub(crate) struct Diagram {
    /// The space's analysis (the module is read through [`Focus::shown`] when drawing:
    /// its complete form replaces it, with the same blocks, and the index is kept).
    pub(super) analysis: Arc<Analysis>,
    /// Built by the first frames ([`Diagram::frame`]), not when the diagram is made.
    index: OnceCell<SpaceIndex>,
    /// The index while the first frames build it.
    building: RefCell<Option<IndexBuilder>>,
    /// The whole space (known before its index).
    pub(super) full: Viewport,
    pub(super) shared: Shared,
    pub(super) color: u32,
    pub(super) canvas: HtmlCanvasElement,
    ctx: CanvasRenderingContext2d,
    pub(super) wrapper: HtmlElement,
    base: Offscreen,
    marked: Offscreen,
    pub(super) st: RefCell<State>,
    /// A frame has been asked for and not drawn yet.
    pending: Cell<bool>,
    /// The diagram itself (the base layer) has been drawn once.
    drawn: Cell<bool>,
    /// Whether the levels of detail are being built ([`Diagram::prepare_levels`]).
    preparing: Cell<bool>,
    /// The resize observer, and its callback (which must live as long as it).
    observer: RefCell<Option<Observer>>,
}

pub(super) struct State {
    pub(super) view: Viewport,
    /// Canvas size in device pixels, and device pixels per CSS pixel.
    size: (u32, u32),
    scale: f64,
    pub(super) style: Style,
    pub(super) layout: Layout,
    /// The lowest layer that must be redrawn.
    dirty: Option<Layer>,
    /// Whether the marked layer holds anything (else the base is shown as it is).
    marked: bool,
    pub(super) press: Option<Press>,
    /// The pointer over the canvas, device pixels.
    pub(super) pointer: Option<(f64, f64)>,
}

impl Drop for Diagram {
    fn drop(&mut self) {
        if let Some((observer, _)) = self.observer.borrow_mut().take() {
            observer.disconnect();
        }
    }
}

impl Diagram {
    pub(super) fn new(
        analysis: Arc<Analysis>,
        color: u32,
        shared: Shared,
        canvas: HtmlCanvasElement,
        wrapper: HtmlElement,
    ) -> Result<Rc<Diagram>, String> {
        let space = analysis.space(color).ok_or("no such memory space")?;
        let full = Viewport::full(&analysis, space);
        // The window the URL hash asked for (or the diagram was last moved to), else all.
        let zoomed = shared
            .focus
            .zoom
            .get_untracked()
            .filter(|z| z.color == color);
        let view = zoomed.map_or(full, |z| constrain(z.view, full));
        let ctx = context(&canvas)?;
        let style = Style::default();
        let d = Rc::new(Diagram {
            st: RefCell::new(State {
                view,
                size: (0, 0),
                scale: 1.0,
                layout: Layout::new((0, 0), style.font_size),
                style,
                dirty: Some(Layer::Base),
                marked: false,
                press: None,
                pointer: None,
            }),
            analysis,
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
            drawn: Cell::new(false),
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

    /// Whether the diagram waits for its first drawing: a frame is asked for and the
    /// diagram has never been drawn (one with no room on the page asks for none).
    pub(super) fn first_drawing_due(&self) -> bool {
        !self.drawn.get() && self.pending.get()
    }

    pub(super) fn focus(&self) -> Focus {
        self.shared.focus
    }

    /// The module on screen, as it is now.
    pub(super) fn shown(&self) -> Arc<Shown> {
        self.shared.focus.shown_untracked()
    }

    /// The space's index, built now if the first frames have not built it yet.
    pub(super) fn index(&self) -> &SpaceIndex {
        self.index.get_or_init(|| {
            let started = self.building.borrow_mut().take();
            match (started.or_else(|| self.start_index()), self.space()) {
                (Some(builder), Some(space)) => builder.finish(&self.shown().module, space),
                _ => SpaceIndex::default(),
            }
        })
    }

    pub(super) fn space(&self) -> Option<&Space> {
        self.analysis.space(self.color)
    }

    fn start_index(&self) -> Option<IndexBuilder> {
        let space = self.space()?;
        Some(SpaceIndex::builder(&self.analysis, space, Levels::Auto))
    }

    /// Builds a piece of the index ([`INDEX_PIECE`] values); the last piece finishes it
    /// (ordering the blocks by first step).
    fn build_index(&self) {
        let done = {
            let mut building = self.building.borrow_mut();
            match (building.take().or_else(|| self.start_index()), self.space()) {
                (Some(mut builder), Some(space)) => {
                    let done = builder.step(&self.shown().module, space, INDEX_PIECE);
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

    /// The capacity chosen for this space in the answers panel ([`Focus::capacity`]).
    fn capacity(&self) -> Option<Capacity> {
        self.focus()
            .capacity
            .with_untracked(|m| m.get(&self.color).map(|c| c.clone().on(self.color)))
    }

    /// This space's estimated curve, if the what-if has one.
    fn estimates(&self) -> Arc<Vec<EstimateCurve>> {
        let mine = self.focus().estimates.with_untracked(|e| e.iter().filter(|e| e.color == self.color).cloned().collect());
        Arc::new(mine)
    }

    /// Redraws when the estimate for this space is not the one drawn.
    pub(super) fn follow_estimates(self: &Rc<Self>) {
        let drawn = self.st.borrow().style.estimates.clone();
        if *drawn != *self.estimates() {
            self.request(Layer::Base);
        }
    }

    /// Redraws when the capacity chosen for this space is not the one drawn.
    pub(super) fn follow_capacity(self: &Rc<Self>) {
        let drawn = self.st.borrow().style.capacity.clone();
        if drawn != self.capacity() {
            self.request(Layer::Base);
        }
    }

    /// Pans (keeping the zoom) so that `step` is in view, when it is not; the cursor is
    /// redrawn either way.
    pub(super) fn show_step(self: &Rc<Self>, step: Option<u32>) {
        let panned = {
            let mut st = self.st.borrow_mut();
            let v = st.view;
            let at = step.map(|t| f64::from(t) + 0.5);
            match at.filter(|&x| x < v.x0 || x > v.x1) {
                Some(x) => {
                    let half = (v.x1 - v.x0) / 2.0;
                    let to = Viewport {
                        x0: x - half,
                        x1: x + half,
                        ..v
                    };
                    st.view = constrain(to, self.full);
                    st.view != v
                }
                None => false,
            }
        };
        self.request(if panned { Layer::Base } else { Layer::Cursor });
    }

    /// Asks for a frame that redraws `layer` and what is above it.
    pub(super) fn request(self: &Rc<Self>, layer: Layer) {
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
        let started = now_ms();
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
        let built = loop {
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
            if !built || now_ms() - started >= FIRST_FRAME_MS {
                break built;
            }
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
        record_frame(now_ms() - started);
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

    /// Sizes the canvases to the element's size × device pixel ratio; whether it changed.
    fn fit(&self, st: &mut State) -> bool {
        let dpr = web_sys::window()
            .map_or(1.0, |w| w.device_pixel_ratio())
            .clamp(1.0, 4.0);
        let css_width = f64::from(self.wrapper.client_width().max(0));
        if css_width < 1.0 {
            return false;
        }
        // In a workspace's slot the layout gives the diagram its height (style/diagram.css).
        let slot = self.wrapper.closest(".space-slot").ok().flatten().is_some();
        let laid_out = f64::from(self.wrapper.client_height());
        let css_height = if slot && laid_out >= 60.0 {
            laid_out
        } else {
            bufscope::render::panel_height(css_width)
        };
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
        let shown = self.shown();
        let space = self.space().ok_or("no such memory space")?;
        let size = st.size;
        if dirty == Layer::Base {
            st.style = Style {
                font_size: Style::default().font_size * st.scale,
                capacity: self.capacity(),
                loop_bands: shown.loops().bands.clone(),
                estimates: self.estimates(),
                ..page_style()
            };
            st.layout = Layout::new(size, st.style.font_size);
            let area = Canvas2d::new(&self.base.canvas, &self.base.ctx)?.into_drawing_area();
            draw_space_indexed(
                &area,
                &shown.module,
                &self.analysis,
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
            self.drawn.set(true);
        }
        if dirty <= Layer::Marks {
            let focus = self.focus();
            let matches = focus.matches.get_untracked();
            let current = matches.get(focus.match_index.get_untracked()).copied();
            let hovered = focus.hovered.get_untracked();
            let selected = focus.selected.get_untracked();
            let instruction = untrack(|| focus.highlighted_instruction());
            let uses = selected.and_then(|v| uses::value_uses(&shown, v));
            let use_steps: Vec<u32> = uses
                .iter()
                .flat_map(|u| u.uses.iter().filter_map(|u| u.step))
                .collect();
            let marks = Marks {
                instruction,
                matches: &matches,
                current,
                hovered,
                selected,
                idle: uses.as_ref().map_or(&[], |u| &u.stretches),
                uses: &use_steps,
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
        self.show_layers(st, space)
    }

    /// Puts the base or marked layer on the canvas, then the time cursor and the step the
    /// answers are about when it is elsewhere.
    fn show_layers(&self, st: &State, space: &Space) -> Result<(), String> {
        let shown_layer = if st.marked { &self.marked } else { &self.base };
        self.ctx
            .draw_image_with_html_canvas_element(&shown_layer.canvas, 0.0, 0.0)
            .map_err(|e| format!("{e:?}"))?;
        let cursor = self.focus().time_cursor.get_untracked();
        let chosen = self
            .focus()
            .step
            .get_untracked()
            .filter(|&s| Some(s) != cursor);
        for step in cursor.into_iter().chain(chosen) {
            let area = Canvas2d::new(&self.canvas, &self.ctx)?.into_drawing_area();
            draw_cursor(&area, &self.analysis, space, &st.view, &st.style, step)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// Pushes the duration of a frame drawn (`ms`) to `window.__bufscope_draw_ms` when the page
/// has made it an array (a test hook: only with the `test-hooks` feature).
#[cfg(feature = "test-hooks")]
fn record_frame(ms: f64) {
    use wasm_bindgen::{JsCast, JsValue};
    let Some(w) = web_sys::window() else { return };
    if let Ok(list) = js_sys::Reflect::get(&w, &JsValue::from_str("__bufscope_draw_ms")) {
        if let Some(list) = list.dyn_ref::<js_sys::Array>() {
            list.push(&JsValue::from_f64(ms));
        }
    }
}

#[cfg(not(feature = "test-hooks"))]
fn record_frame(_ms: f64) {}

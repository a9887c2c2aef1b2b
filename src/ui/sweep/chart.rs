//! One memory space's sweep chart on a `<canvas>` ([`bufscope::render::sweep::draw_sweep`]
//! through the page's plotters backend), sized to its column × the device pixel ratio, and
//! its click: the point under the pointer ([`bufscope::render::sweep::point_at`]) opens its
//! compilation. The points' positions in CSS pixels are kept in the canvas's `data-points`
//! (`x,y;x,y…`, the order of the sweep's points) for the browser tests.

use std::sync::Arc;

use bufscope::answers::capacity::Capacity;
use bufscope::answers::sweep::SpaceSweep;
use bufscope::render::capacity_label;
use bufscope::render::sweep::{draw_sweep, point_at, point_positions, sweep_height, SweepText};
use bufscope::render::Style;
use leptos::html;
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use wasm_bindgen::JsCast;

use crate::ui::canvas::{page_style, Canvas2d};

/// A space's chart and what a click on a point opens.
pub(super) struct SweepChart<O> {
    pub space: Arc<SpaceSweep>,
    /// The varied dimension, as the sweep names it.
    pub what: String,
    /// The capacity the sweep is held against, for the line's label.
    pub capacity: Option<Capacity>,
    /// Per point (in the sweep's order), the position of its module on screen.
    pub modules: Vec<Option<usize>>,
    pub open: O,
}

/// The chart's text size in CSS pixels (as [`Style::font_size`] counts it): larger than the
/// diagrams', so that the verdict and the axis read at a glance.
const FONT: f64 = 16.0;

/// The device pixel ratio, within 1 to 4.
fn pixel_ratio() -> f64 {
    web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()).clamp(1.0, 4.0)
}

/// Draws `space` on `canvas` at its width; the points' CSS pixel positions.
fn draw(canvas: &web_sys::HtmlCanvasElement, space: &SpaceSweep, what: &str, capacity: Option<&str>) -> Result<String, String> {
    let dpr = pixel_ratio();
    let css_width = f64::from(canvas.client_width().max(320));
    let css_height = f64::from(sweep_height(css_width as u32));
    let size = ((css_width * dpr).round() as u32, (css_height * dpr).round() as u32);
    canvas.set_width(size.0);
    canvas.set_height(size.1);
    let _ = web_sys::HtmlElement::style(canvas).set_property("height", &format!("{css_height}px"));
    let style = Style { font_size: FONT * dpr, ..page_style() };
    let ctx = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
        .ok_or("no 2D context")?;
    let area = Canvas2d::new(canvas, &ctx)?.into_drawing_area();
    let text = SweepText { what, capacity };
    draw_sweep(&area, space, &text, &style).map_err(|e| e.to_string())?;
    let at = point_positions(space, size, style.font_size);
    let css = |v: i32| (f64::from(v) / dpr).round() as i32;
    Ok(at.iter().map(|&(x, y)| format!("{},{}", css(x), css(y))).collect::<Vec<_>>().join(";"))
}

impl<O: Fn(usize) + Copy + Send + Sync + 'static> SweepChart<O> {
    pub fn view(self) -> impl IntoView {
        let canvas_ref = NodeRef::<html::Canvas>::new();
        let SweepChart { space, what, capacity, modules, open } = self;
        let label = capacity.as_ref().map(capacity_label);
        {
            let space = space.clone();
            Effect::new(move |_| {
                let Some(canvas) = canvas_ref.get() else { return };
                match draw(&canvas, &space, &what, label.as_deref()) {
                    Ok(points) => {
                        let _ = canvas.set_attribute("data-points", &points);
                    }
                    Err(e) => leptos::logging::warn!("bufscope: sweep chart of space {}: {e}", space.color),
                }
            });
        }
        let on_click = move |e: web_sys::MouseEvent| {
            let Some(canvas) = canvas_ref.get_untracked() else { return };
            let dpr = pixel_ratio();
            let at = ((f64::from(e.offset_x()) * dpr) as i32, (f64::from(e.offset_y()) * dpr) as i32);
            let size = (canvas.width(), canvas.height());
            let font = FONT * dpr;
            if let Some(m) = point_at(&space, size, font, at).and_then(|i| modules.get(i).copied().flatten()) {
                open(m);
            }
        };
        view! {
            <canvas node_ref=canvas_ref class="sweep-canvas"
                aria-label="The peak against the varied value: a click on a point opens that compilation"
                on:click=on_click></canvas>
        }
    }
}

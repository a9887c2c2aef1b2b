//! The hooks the browser tests and benchmarks read on `window`, compiled only with the
//! `test-hooks` cargo feature (`tests/e2e/run.sh` and the benchmark's browser build turn
//! it on; the release page has none of them). Without it, [`install`] does nothing.
//!
//! * `window.__bufscope_block_px(color, valueName)` is `{x, y}`, the centre of the value's
//!   block as drawn now in CSS pixels of the viewport (what a mouse event's
//!   `clientX`/`clientY` would be), or `null` when the value has no block in view. A linear
//!   search by name: for tests, not for the app.
//! * `window.__bufscope_step_px(color, step)` is `{x, y}`, a point of the curve panel at
//!   that step (the middle of its height) in CSS pixels of the viewport, or `null` when the
//!   step is not in view.
//! * `window.__bufscope_bytes_px(color, bytes)` is `{x, y}`: `y` the row of that many bytes
//!   on the curve as drawn now (with the capacity line's range, when one is drawn), `x` the
//!   curve's left edge, in CSS pixels of the viewport; `null` when there is no such space.
//! * `window.__bufscope_axis_labels(color)` is `[{text, x, y, w, h}]`: every label of the
//!   diagram's axes (step ticks, byte ticks, the two axis titles) as drawn for the current
//!   view, its box in CSS pixels of the viewport ([`bufscope::render::axis_labels`], measured
//!   on the canvas); `null` when there is no such diagram.
//! * `window.__bufscope_curve_labels(color)` is the same for the curve strip's labels (the
//!   peak's, a capacity's, its verdict: [`bufscope::render::curve_labels`]), with the strip
//!   itself as `{strip: {x, y, w, h}, labels: [...]}`.
//! * `window.__bufscope_loop_bands(color)` is `[{label, x, y, w, h}]`: every loop band in
//!   view ([`bufscope::render::loops::band_rects`]), its box in CSS pixels of the viewport;
//!   `null` when there is no such diagram.
//! * `window.__bufscope_estimate_drawn(color)` is `{peak, area}` of the what-if's estimate
//!   last drawn dashed on that diagram (its peak and its sum over the steps, bytes), `null`
//!   when its last drawing had none (what the tick benchmark waits for).
//! * When the page defines `window.__bufscope_draw_ms` as an array, the duration of every
//!   frame drawn is pushed to it (by [`super::draw`], which draws the frames).

#[cfg(feature = "test-hooks")]
pub(super) use self::on::install;

/// Installs the page's hooks (once).
#[cfg(not(feature = "test-hooks"))]
pub(super) fn install() {}

#[cfg(feature = "test-hooks")]
mod on {
    use std::cell::Cell;

    use bufscope::render::{axis_labels, curve_labels, curve_mapping, Mapping, PxRect, Style};
    use plotters::prelude::IntoDrawingArea;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::{JsCast, JsValue};
    use web_sys::CanvasRenderingContext2d;

    use super::super::backend::Canvas2d;
    use super::super::draw::Diagram;
    use super::super::palette::page_style;
    use super::super::registry::with_diagram;

    thread_local! {
        static INSTALLED: Cell<bool> = const { Cell::new(false) };
    }

    /// Installs `window.__bufscope_block_px` (once).
    pub(in super::super) fn install() {
        if INSTALLED.with(|h| h.replace(true)) {
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
                let centre = with_diagram(Some(color as u32), |d| block_centre(d, &name));
                point(centre.flatten())
            });
        let _ = js_sys::Reflect::set(&window, &"__bufscope_block_px".into(), hook.as_ref());
        // Lives as long as the page.
        hook.forget();
        numeric_hook(&window, "__bufscope_step_px", step_point);
        numeric_hook(&window, "__bufscope_bytes_px", bytes_point);
        let hook = Closure::<dyn Fn(JsValue) -> JsValue>::new(|color: JsValue| {
            let Some(color) = color.as_f64() else {
                return JsValue::NULL;
            };
            with_diagram(Some(color as u32), |d| label_boxes(d))
                .flatten()
                .unwrap_or(JsValue::NULL)
        });
        let _ = js_sys::Reflect::set(&window, &"__bufscope_axis_labels".into(), hook.as_ref());
        hook.forget();
        let hook = Closure::<dyn Fn(JsValue) -> JsValue>::new(|color: JsValue| {
            let Some(color) = color.as_f64() else {
                return JsValue::NULL;
            };
            with_diagram(Some(color as u32), |d| curve_boxes(d))
                .flatten()
                .unwrap_or(JsValue::NULL)
        });
        let _ = js_sys::Reflect::set(&window, &"__bufscope_curve_labels".into(), hook.as_ref());
        hook.forget();
        let hook = Closure::<dyn Fn(JsValue) -> JsValue>::new(|color: JsValue| {
            let Some(color) = color.as_f64() else {
                return JsValue::NULL;
            };
            with_diagram(Some(color as u32), |d| band_boxes(d)).unwrap_or(JsValue::NULL)
        });
        let _ = js_sys::Reflect::set(&window, &"__bufscope_loop_bands".into(), hook.as_ref());
        hook.forget();
        let hook = Closure::<dyn Fn(JsValue) -> JsValue>::new(|color: JsValue| {
            let Some(color) = color.as_f64() else {
                return JsValue::NULL;
            };
            let drawn = with_diagram(Some(color as u32), |d| {
                let st = d.st.borrow();
                let e = st.style.estimates.first()?;
                let area: u128 = e.curve.iter().map(|&b| u128::from(b)).sum();
                Some((e.peak_bytes as f64, area as f64))
            });
            let Some((peak, area)) = drawn.flatten() else {
                return JsValue::NULL;
            };
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"peak".into(), &JsValue::from_f64(peak));
            let _ = js_sys::Reflect::set(&o, &"area".into(), &JsValue::from_f64(area));
            o.into()
        });
        let _ = js_sys::Reflect::set(&window, &"__bufscope_estimate_drawn".into(), hook.as_ref());
        hook.forget();
    }

    /// `{x, y, w, h}` of `r` (device pixels of `d`'s canvas) in CSS pixels of the viewport.
    fn css_box(d: &Diagram, r: PxRect) -> js_sys::Object {
        let (x0, y0) = to_viewport(d, (f64::from(r.x0), f64::from(r.y0)));
        let (x1, y1) = to_viewport(d, (f64::from(r.x1), f64::from(r.y1)));
        let o = js_sys::Object::new();
        for (k, v) in [("x", x0), ("y", y0), ("w", x1 - x0), ("h", y1 - y0)] {
            let _ = js_sys::Reflect::set(&o, &k.into(), &v.into());
        }
        o
    }

    /// The curve strip of `d` and its labels as drawn now, as `{strip, labels}`.
    fn curve_boxes(d: &Diagram) -> Option<JsValue> {
        let ctx: CanvasRenderingContext2d = d.canvas.get_context("2d").ok()??.dyn_into().ok()?;
        let space = d.analysis.space(d.color)?;
        let (style, view, strip) = {
            let st = d.st.borrow();
            (st.style.clone(), st.view, st.layout.curve)
        };
        let area = Canvas2d::new(&d.canvas, &ctx).ok()?.into_drawing_area();
        let list = js_sys::Array::new();
        for (text, r) in curve_labels(&area, &d.analysis, space, &view, &style) {
            let o = css_box(d, r);
            let _ = js_sys::Reflect::set(&o, &"text".into(), &text.into());
            list.push(&o);
        }
        let out = js_sys::Object::new();
        let strip = css_box(d, strip);
        let _ = js_sys::Reflect::set(&out, &"strip".into(), &strip);
        let _ = js_sys::Reflect::set(&out, &"labels".into(), &list);
        Some(out.into())
    }

    /// The loop bands of `d`'s current view, as `[{label, x, y, w, h}]` in CSS pixels of the
    /// viewport.
    fn band_boxes(d: &Diagram) -> JsValue {
        let bands = d.shown().loops().bands.clone();
        let (layout, view) = {
            let st = d.st.borrow();
            (st.layout, st.view)
        };
        let list = js_sys::Array::new();
        for (i, r) in bufscope::render::loops::band_rects(&layout, &view, &bands) {
            let (x0, y0) = to_viewport(d, (f64::from(r.x0), f64::from(r.y0)));
            let (x1, y1) = to_viewport(d, (f64::from(r.x1), f64::from(r.y1)));
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"label".into(), &bands[i].label.clone().into());
            for (k, v) in [("x", x0), ("y", y0), ("w", x1 - x0), ("h", y1 - y0)] {
                let _ = js_sys::Reflect::set(&o, &k.into(), &v.into());
            }
            list.push(&o);
        }
        list.into()
    }

    /// Installs `window[name](color, number)`: `{x, y}` of `at` for the diagram of that
    /// colour, or `null`.
    fn numeric_hook(
        window: &web_sys::Window,
        name: &str,
        at: fn(&Diagram, f64) -> Option<(f64, f64)>,
    ) {
        let hook = Closure::<dyn Fn(JsValue, JsValue) -> JsValue>::new(
            move |color: JsValue, n: JsValue| {
                let (Some(color), Some(n)) = (color.as_f64(), n.as_f64()) else {
                    return JsValue::NULL;
                };
                point(with_diagram(Some(color as u32), |d| at(d, n)).flatten())
            },
        );
        let _ = js_sys::Reflect::set(window, &name.into(), hook.as_ref());
        // Lives as long as the page.
        hook.forget();
    }

    /// The axis labels of `d`'s current view, as `[{text, x, y, w, h}]` in CSS pixels of
    /// the viewport; measured with the style the diagram is drawn with.
    fn label_boxes(d: &Diagram) -> Option<JsValue> {
        let ctx: CanvasRenderingContext2d = d.canvas.get_context("2d").ok()??.dyn_into().ok()?;
        let space = d.analysis.space(d.color)?;
        let shown = d.shown();
        let style = Style {
            font_size: Style::default().font_size * d.css_scale(),
            ..page_style()
        };
        let area = Canvas2d::new(&d.canvas, &ctx).ok()?.into_drawing_area();
        let view = d.st.borrow().view;
        let labels = axis_labels(&area, &shown.module, &d.analysis, space, &view, &style);
        let list = js_sys::Array::new();
        for (text, r) in labels {
            let (x0, y0) = to_viewport(d, (f64::from(r.x0), f64::from(r.y0)));
            let (x1, y1) = to_viewport(d, (f64::from(r.x1), f64::from(r.y1)));
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"text".into(), &text.into());
            for (k, v) in [("x", x0), ("y", y0), ("w", x1 - x0), ("h", y1 - y0)] {
                let _ = js_sys::Reflect::set(&o, &k.into(), &v.into());
            }
            list.push(&o);
        }
        Some(list.into())
    }

    /// `{x, y}`, or `null`.
    fn point(at: Option<(f64, f64)>) -> JsValue {
        match at {
            Some((x, y)) => {
                let o = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&o, &"x".into(), &x.into());
                let _ = js_sys::Reflect::set(&o, &"y".into(), &y.into());
                o.into()
            }
            None => JsValue::NULL,
        }
    }

    /// A device-pixel point of the canvas in CSS pixels of the viewport.
    fn to_viewport(d: &Diagram, (px, py): (f64, f64)) -> (f64, f64) {
        let rect = d.canvas.get_bounding_client_rect();
        let scale = d.css_scale();
        (
            rect.left() + f64::from(d.canvas.client_left()) + px / scale,
            rect.top() + f64::from(d.canvas.client_top()) + py / scale,
        )
    }

    /// The middle of the curve panel's height at `step`, when the step is in view.
    fn step_point(d: &Diagram, step: f64) -> Option<(f64, f64)> {
        let st = d.st.borrow();
        let (c, plot) = (st.layout.curve, st.layout.diagram);
        let x = Mapping::new(st.view, plot).x_px(step + 0.5);
        if x < f64::from(plot.x0) || x >= f64::from(plot.x1) {
            return None;
        }
        Some(to_viewport(d, (x, f64::from(c.y0 + c.y1) / 2.0)))
    }

    /// The curve's left edge at the row of `bytes`, as the curve is drawn now.
    fn bytes_point(d: &Diagram, bytes: f64) -> Option<(f64, f64)> {
        let space = d.space()?;
        let st = d.st.borrow();
        let c = st.layout.curve;
        let capacity = st.style.capacity_of(space.color).map(|c| c.bytes);
        let cm = curve_mapping(space, &st.view, c, capacity);
        Some(to_viewport(d, (f64::from(c.x0), cm.y_px(bytes))))
    }

    /// The centre of `name`'s visible block in CSS pixels of the viewport.
    fn block_centre(d: &Diagram, name: &str) -> Option<(f64, f64)> {
        let value = d.index().find_by_name(&d.shown().module, name)?;
        let b = d.index().block(value)?;
        let st = d.st.borrow();
        let r: PxRect = Mapping::new(st.view, st.layout.diagram).block_px(&b)?;
        let centre = (f64::from(r.x0 + r.x1) / 2.0, f64::from(r.y0 + r.y1) / 2.0);
        Some(to_viewport(d, centre))
    }
}

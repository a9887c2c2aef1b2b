//! The rules of moving around a diagram, as plain functions over the geometry types: which
//! part of a panel a pixel is in ([`region`]), whether a wheel there is the diagram's or the page's
//! ([`wheel_is_diagrams`]), what a wheel movement, a drag, a key, a click
//! and a double-click do to the viewport, how far a viewport may go ([`constrain`]), the step
//! the time cursor shows ([`time_step`]), the step a peak key goes to ([`peak_step`]), and
//! the one table of the diagram keys ([`BINDINGS`]). The browser's diagrams call them with device pixels of their canvas;
//! `bufscope bench`'s scripted pan and zoom can call the same ([`zoom_at`], [`drag_pan`],
//! [`constrain`]).

use super::geometry::{wheel_zoom, Layout, Mapping, PxRect, Viewport};
use crate::analysis::Block;
use crate::answers::peaks;

/// Keys: zoom factor per press of W / S.
pub const KEY_ZOOM: f64 = 0.8;
/// Keys: part of the view one press of A / D / an arrow pans by.
pub const KEY_PAN: f64 = 0.15;
/// Keys: how many times farther a pan goes with Shift.
pub const KEY_PAN_FAR: f64 = 3.0;
/// Pointer movement (CSS pixels) before a press becomes a drag rather than a click.
pub const DRAG_SLOP: f64 = 4.0;
/// Double-click and reveal: margin around the block, as a part of its size.
pub const ZOOM_MARGIN: f64 = 0.25;
/// Double-click on empty diagram: zoom factor.
pub const DOUBLE_CLICK_ZOOM: f64 = 0.5;

/// Which part of a panel a pixel is in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Region {
    /// The block diagram: zoom both ways, pan both ways.
    Diagram,
    /// The curve and the step axis: time only.
    Steps,
    /// The byte axis: offsets only.
    Bytes,
    Outside,
}

/// The part of the panel laid out as `layout` that pixel `(px, py)` is in.
pub fn region(layout: &Layout, (px, py): (f64, f64)) -> Region {
    let (x, y) = (px as i32, py as i32);
    let (c, d) = (layout.curve, layout.diagram);
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

/// The axes a zoom or a pan moves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Axes {
    pub steps: bool,
    pub bytes: bool,
}

impl Axes {
    pub const BOTH: Axes = Axes {
        steps: true,
        bytes: true,
    };
    pub const STEPS: Axes = Axes {
        steps: true,
        bytes: false,
    };
    pub const BYTES: Axes = Axes {
        steps: false,
        bytes: true,
    };

    /// The axes a drag or a wheel over `region` moves by itself.
    pub fn of(region: Region) -> Axes {
        match region {
            Region::Steps => Axes::STEPS,
            Region::Bytes => Axes::BYTES,
            Region::Diagram | Region::Outside => Axes::BOTH,
        }
    }
}

/// `view` inside `full`, no thinner than 2 steps or 16 bytes (or the whole space when that
/// is thinner), and valid (`full` when `view` is not).
pub fn constrain(view: Viewport, full: Viewport) -> Viewport {
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

/// `view` zoomed by `factor` (below 1: in) on `axes`, around the data point under pixel `at`
/// of a diagram drawn in `plot`, or around the view's centre.
pub fn zoom_at(
    view: Viewport,
    plot: PxRect,
    factor: f64,
    axes: Axes,
    at: Option<(f64, f64)>,
) -> Viewport {
    let map = Mapping::new(view, plot);
    let anchor = at.map_or(
        ((view.x0 + view.x1) / 2.0, (view.y0 + view.y1) / 2.0),
        |(px, py)| (map.step_at(px), map.bytes_at(py)),
    );
    let fx = if axes.steps { factor } else { 1.0 };
    let fy = if axes.bytes { factor } else { 1.0 };
    view.zoom(fx, fy, anchor)
}

/// `view` panned by a part of its width (`fx`, positive: later steps) and height (`fy`,
/// positive: higher offsets).
pub fn pan_by(view: Viewport, fx: f64, fy: f64) -> Viewport {
    view.pan((view.x1 - view.x0) * fx, (view.y1 - view.y0) * fy)
}

/// The view of a block with a margin of [`ZOOM_MARGIN`] of its size around it.
pub fn zoom_to_block(b: &Block) -> Viewport {
    let (x0, x1) = (f64::from(b.x0), f64::from(b.x1));
    let (y0, y1) = (b.y0 as f64, b.y1 as f64);
    let (mx, my) = ((x1 - x0) * ZOOM_MARGIN, (y1 - y0) * ZOOM_MARGIN);
    Viewport {
        x0: x0 - mx,
        x1: x1 + mx,
        y0: y0 - my,
        y1: y1 + my,
    }
}

/// A wheel movement: the deltas in CSS pixels ([`wheel_unit`]) and the modifier keys.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Wheel {
    pub dx: f64,
    pub dy: f64,
    pub shift: bool,
    pub alt: bool,
}

/// Where a wheel movement over a diagram happens: whether the diagram has the keyboard focus
/// (it was clicked or tabbed to), whether the page is embedded in another (a notebook's
/// `<iframe>`), whether the page itself scrolls (a narrow window: the parts stacked), and
/// whether Ctrl is held (a touchpad's pinch arrives as Ctrl + wheel).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WheelPlace {
    pub focused: bool,
    pub embedded: bool,
    pub page_scrolls: bool,
    pub ctrl: bool,
}

/// Whether a wheel movement over a diagram is the diagram's (zoom and pan, the page kept
/// still) rather than the page's (it scrolls the page, or the notebook around it): the
/// diagram's when it has focus or Ctrl is held, or when the page is the whole window and
/// does not scroll (the one-screen layout, where nothing else could scroll). In a notebook
/// or a scrolling page a wheel passing over a diagram scrolls on, as a map embedded in a
/// page does, until the diagram is clicked.
pub fn wheel_is_diagrams(p: WheelPlace) -> bool {
    p.focused || p.ctrl || !(p.embedded || p.page_scrolls)
}

/// CSS pixels per unit of a wheel delta, by the event's `deltaMode` (0 pixels, 1 lines,
/// 2 pages of `page_px`).
pub fn wheel_unit(delta_mode: u32, page_px: f64) -> f64 {
    match delta_mode {
        1 => 16.0,
        2 => page_px.max(1.0),
        _ => 1.0,
    }
}

/// The view after a wheel movement over pixel `at` of a panel laid out as `layout`: a zoom
/// at the pointer (Shift: steps only, Alt: offsets only; over the curve or the step axis
/// steps only, over the byte axis offsets only), or a pan in time for a sideways
/// (touchpad) swipe. `None` when `at` is outside the parts that take the wheel.
pub fn wheel(view: Viewport, layout: &Layout, at: (f64, f64), w: Wheel) -> Option<Viewport> {
    let region = region(layout, at);
    if region == Region::Outside {
        return None;
    }
    let (mut dx, mut dy) = (w.dx, w.dy);
    if w.shift && dy == 0.0 {
        // Chromium turns Shift + wheel into a horizontal wheel.
        (dx, dy) = (0.0, dx);
    }
    if !w.shift && dx.abs() > dy.abs() {
        let width = f64::from(layout.diagram.width().max(1));
        return Some(pan_by(view, dx / width, 0.0));
    }
    let axes = match region {
        Region::Steps | Region::Bytes => Axes::of(region),
        _ if w.shift => Axes::STEPS,
        _ if w.alt => Axes::BYTES,
        _ => Axes::BOTH,
    };
    Some(zoom_at(
        view,
        layout.diagram,
        wheel_zoom(dy),
        axes,
        Some(at),
    ))
}

/// `start` panned by a drag of `(dx, dy)` pixels of a diagram drawn in `plot` (the data
/// follows the pointer), on `axes`.
pub fn drag_pan(start: Viewport, plot: PxRect, (dx, dy): (f64, f64), axes: Axes) -> Viewport {
    let sx = (start.x1 - start.x0) / f64::from(plot.width().max(1));
    let sy = (start.y1 - start.y0) / f64::from(plot.height().max(1));
    let mx = if axes.steps { -dx * sx } else { 0.0 };
    let my = if axes.bytes { dy * sy } else { 0.0 };
    start.pan(mx, my)
}

/// A press on a panel that may become a drag.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drag {
    /// Where it started, CSS pixels.
    pub at: (f64, f64),
    /// The view when it started.
    pub view: Viewport,
    /// What it pans: both axes on the diagram, steps on the curve and the step axis,
    /// offsets on the byte axis.
    pub axes: Axes,
    /// The pointer has gone [`DRAG_SLOP`] from where it was pressed.
    pub dragging: bool,
}

impl Drag {
    /// A press at `at` (CSS pixels) in `region`, with `view` on screen; `None` outside.
    pub fn press(region: Region, at: (f64, f64), view: Viewport) -> Option<Drag> {
        (region != Region::Outside).then_some(Drag {
            at,
            view,
            axes: Axes::of(region),
            dragging: false,
        })
    }

    /// The pointer has moved to `to` (CSS pixels): the view the drag pans to once it is a
    /// drag, else `None` (still a click). `scale`: device pixels per CSS pixel; `plot`:
    /// the diagram's rectangle in device pixels.
    pub fn moved(&mut self, to: (f64, f64), plot: PxRect, scale: f64) -> Option<Viewport> {
        let (dx, dy) = (to.0 - self.at.0, to.1 - self.at.1);
        if !self.dragging && dx.hypot(dy) >= DRAG_SLOP {
            self.dragging = true;
        }
        self.dragging
            .then(|| drag_pan(self.view, plot, (dx * scale, dy * scale), self.axes))
    }
}

/// A click (a press that did not become a drag) at pixel `at`: on the diagram it pins the
/// value `hit` finds under it, or unpins on empty space (`Some(hit)`); elsewhere it changes
/// nothing (`None`).
pub fn click(
    layout: &Layout,
    at: (f64, f64),
    hit: impl FnOnce(i32, i32) -> Option<u32>,
) -> Option<Option<u32>> {
    (region(layout, at) == Region::Diagram).then(|| hit(at.0 as i32, at.1 as i32))
}

/// A double-click at pixel `at`: on a block (`block` finds the one under a pixel) the view
/// of it ([`zoom_to_block`]), on empty diagram a zoom in there; `None` outside the diagram.
pub fn double_click(
    view: Viewport,
    layout: &Layout,
    at: (f64, f64),
    block: impl FnOnce(i32, i32) -> Option<Block>,
) -> Option<Viewport> {
    if region(layout, at) != Region::Diagram {
        return None;
    }
    Some(match block(at.0 as i32, at.1 as i32) {
        Some(b) => zoom_to_block(&b),
        None => zoom_at(
            view,
            layout.diagram,
            DOUBLE_CLICK_ZOOM,
            Axes::BOTH,
            Some(at),
        ),
    })
}

/// The step the time cursor shows for the pointer at pixel `at` (over the diagram, the
/// curve or the step axis), of a program of `steps` steps.
pub fn time_step(view: Viewport, layout: &Layout, at: (f64, f64), steps: u32) -> Option<u32> {
    match region(layout, at) {
        Region::Diagram | Region::Steps => {
            let s = Mapping::new(view, layout.diagram).step_at(at.0).floor();
            let last = f64::from(steps.max(1) - 1);
            (s >= 0.0).then(|| s.min(last) as u32)
        }
        Region::Bytes | Region::Outside => None,
    }
}

/// What a key does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Action {
    ZoomIn,
    ZoomOut,
    PanLeft,
    PanRight,
    PanUp,
    PanDown,
    Reset,
    /// Close the keys overlay, else unpin the value.
    Close,
    /// Show or hide the keys overlay.
    Help,
    /// Put the cursor in the search box.
    Search,
    /// Choose the next / previous peak of the curve as the step the answers and the live
    /// set are about ([`peak_step`]).
    NextPeak,
    PreviousPeak,
}

/// One row of the keys overlay: what it shows, what it says, and the keys (the names of
/// `KeyboardEvent.key`) it stands for with what each does. Mouse rows have no keys.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub label: &'static str,
    pub does: &'static str,
    pub keys: &'static [(&'static str, Action)],
}

/// The diagrams' keys and mouse gestures, in the order the overlay lists them.
pub const BINDINGS: &[Binding] = {
    use Action::*;
    &[
        Binding {
            label: "W  or  +",
            does: "zoom in (at the pointer when it is over a diagram)",
            keys: &[("w", ZoomIn), ("W", ZoomIn), ("+", ZoomIn), ("=", ZoomIn)],
        },
        Binding {
            label: "S  or  −",
            does: "zoom out",
            keys: &[
                ("s", ZoomOut),
                ("S", ZoomOut),
                ("-", ZoomOut),
                ("_", ZoomOut),
            ],
        },
        Binding {
            label: "A  D  ←  →",
            does: "pan in time (with Shift: farther)",
            keys: &[
                ("a", PanLeft),
                ("A", PanLeft),
                ("ArrowLeft", PanLeft),
                ("d", PanRight),
                ("D", PanRight),
                ("ArrowRight", PanRight),
            ],
        },
        Binding {
            label: "↑  ↓",
            does: "pan in offsets",
            keys: &[("ArrowUp", PanUp), ("ArrowDown", PanDown)],
        },
        Binding {
            label: "0",
            does: "reset the view",
            keys: &[("0", Reset), ("Home", Reset)],
        },
        Binding {
            label: "]  [  or  n  N",
            does: "next / previous peak: the step the live set and the answers are about",
            keys: &[
                ("]", NextPeak),
                ("n", NextPeak),
                ("[", PreviousPeak),
                ("N", PreviousPeak),
            ],
        },
        Binding {
            label: "/",
            does: "search values",
            keys: &[("/", Search)],
        },
        Binding {
            label: "Esc",
            does: "close this list; unpin the value",
            keys: &[("Escape", Close)],
        },
        Binding {
            label: "?",
            does: "show or hide this list",
            keys: &[("?", Help)],
        },
        Binding {
            label: "wheel",
            does: "zoom at the pointer (Shift: steps only, Alt: offsets only); in a notebook or a scrolling page, once the diagram is clicked (or with Ctrl)",
            keys: &[],
        },
        Binding {
            label: "drag",
            does: "pan",
            keys: &[],
        },
        Binding {
            label: "click",
            does: "pin a value (its details show); on empty space: unpin",
            keys: &[],
        },
        Binding {
            label: "double-click",
            does: "zoom to the block",
            keys: &[],
        },
    ]
};

/// What the key named `key` (`KeyboardEvent.key`) does, if it is one of [`BINDINGS`].
pub fn key_action(key: &str) -> Option<Action> {
    BINDINGS
        .iter()
        .flat_map(|b| b.keys)
        .find(|(k, _)| *k == key)
        .map(|&(_, action)| action)
}

/// The view after `action` on a diagram showing `view` of `full` in `plot`; zooms go
/// around the pointer at pixel `at` when it is over the diagram, and Shift (`far`) pans
/// [`KEY_PAN_FAR`] times farther. `None` for the actions that do not move the view.
pub fn key_view(
    action: Action,
    view: Viewport,
    full: Viewport,
    plot: PxRect,
    far: bool,
    at: Option<(f64, f64)>,
) -> Option<Viewport> {
    let pan = KEY_PAN * if far { KEY_PAN_FAR } else { 1.0 };
    Some(match action {
        Action::ZoomIn => zoom_at(view, plot, KEY_ZOOM, Axes::BOTH, at),
        Action::ZoomOut => zoom_at(view, plot, 1.0 / KEY_ZOOM, Axes::BOTH, at),
        Action::PanLeft => pan_by(view, -pan, 0.0),
        Action::PanRight => pan_by(view, pan, 0.0),
        Action::PanUp => pan_by(view, 0.0, pan),
        Action::PanDown => pan_by(view, 0.0, -pan),
        Action::Reset => full,
        Action::Close | Action::Help | Action::Search | Action::NextPeak | Action::PreviousPeak => {
            return None
        }
    })
}

/// The step a peak key goes to from `step` on the occupied-bytes `curve`: the next or
/// previous of its prominent peaks (the answers panel's list, [`peaks::prominent_peaks`]);
/// `None` for other actions or when there is no peak that way.
pub fn peak_step(action: Action, curve: &[u64], step: u32) -> Option<u32> {
    let go: fn(&[peaks::Peak], u32) -> Option<peaks::Peak> = match action {
        Action::NextPeak => peaks::next_peak,
        Action::PreviousPeak => peaks::previous_peak,
        _ => return None,
    };
    let list = peaks::prominent_peaks(curve, peaks::DEFAULT_FRACTION, peaks::DEFAULT_PROMINENCE);
    go(&list, step).map(|p| p.step)
}

#[cfg(test)]
mod tests;

//! The live diagrams of the page, so that the page's keys (and the test hooks) can reach
//! the diagram of a memory space. A diagram registers itself when it is made and leaves
//! when it is dropped (the registry holds weak references).

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use super::draw::Diagram;
use super::hooks;
use crate::ui::tasks::{next_frame, now_ms};

thread_local! {
    static DIAGRAMS: RefCell<Vec<Weak<Diagram>>> = const { RefCell::new(Vec::new()) };
}

/// Adds a new diagram (and forgets the dropped ones).
pub(super) fn register(d: &Rc<Diagram>) {
    DIAGRAMS.with(|all| {
        let mut all = all.borrow_mut();
        all.retain(|w| w.strong_count() > 0);
        all.push(Rc::downgrade(d));
    });
    hooks::install();
}

/// Calls `f` with the live diagram of memory space `color` (the first one on screen when
/// `color` is `None`).
pub(crate) fn with_diagram<R>(color: Option<u32>, f: impl FnOnce(&Rc<Diagram>) -> R) -> Option<R> {
    let d = DIAGRAMS.with(|all| {
        all.borrow()
            .iter()
            .filter_map(Weak::upgrade)
            // A diagram no longer on the page may outlive its component for a while.
            .find(|d| color.is_none_or(|c| d.color == c) && d.canvas.is_connected())
    })?;
    Some(f(&d))
}

/// Waits a frame (by which diagrams just put on the page have asked for theirs), then a
/// frame at a time, `most_ms` at most, until no diagram on the page waits for its first
/// drawing ([`Diagram::first_drawing_due`]), so that what can wait (completing the modules,
/// the panels around the diagrams) lets the diagrams be drawn first.
pub(crate) async fn first_drawings(most_ms: f64) {
    let since = now_ms();
    if !next_frame().await {
        return;
    }
    while first_drawing_due() && now_ms() - since < most_ms {
        if !next_frame().await {
            return;
        }
    }
}

fn first_drawing_due() -> bool {
    DIAGRAMS.with(|all| {
        all.borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .any(|d| d.canvas.is_connected() && d.first_drawing_due())
    })
}

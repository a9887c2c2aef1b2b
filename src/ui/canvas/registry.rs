//! Where the diagrams can be reached from outside their components. A module's views reach
//! its diagrams through the [`Diagrams`] handed to them (the page's keys, the Export menu);
//! what is about the whole page — whether every diagram on it has had its first drawing
//! ([`first_drawings`]), and the test hooks — goes through the page's list. A diagram is
//! added to both when it is made and leaves them when it is dropped (they hold weak
//! references).

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use leptos::prelude::*;

use super::draw::Diagram;
use crate::ui::tasks::{next_frame, now_ms};

thread_local! {
    static DIAGRAMS: RefCell<Vec<Weak<Diagram>>> = const { RefCell::new(Vec::new()) };
}

/// The diagrams of one module, as its views reach them: `Copy`, made by the workspace
/// (or a comparison's side) and handed to its diagrams and its Export menu.
#[derive(Clone, Copy)]
pub struct Diagrams(StoredValue<Vec<Weak<Diagram>>, LocalStorage>);

impl Diagrams {
    pub fn new() -> Diagrams {
        Diagrams(StoredValue::new_local(Vec::new()))
    }

    /// Adds a new diagram (and forgets the dropped ones).
    pub(super) fn add(&self, d: &Rc<Diagram>) {
        self.0.update_value(|all| {
            all.retain(|w| w.strong_count() > 0);
            all.push(Rc::downgrade(d));
        });
    }

    /// Calls `f` with the diagram of memory space `color` on the page (the first one when
    /// `color` is `None`).
    pub fn with<R>(&self, color: Option<u32>, f: impl FnOnce(&Rc<Diagram>) -> R) -> Option<R> {
        let d = self.0.with_value(|all| find(all, color))?;
        Some(f(&d))
    }
}

/// The live diagram of memory space `color` in `all` (the first when `None`).
fn find(all: &[Weak<Diagram>], color: Option<u32>) -> Option<Rc<Diagram>> {
    all.iter()
        .filter_map(Weak::upgrade)
        // A diagram no longer on the page may outlive its component for a while.
        .find(|d| color.is_none_or(|c| d.color == c) && d.canvas.is_connected())
}

/// Adds a new diagram to the page's list (and forgets the dropped ones).
pub(super) fn register(d: &Rc<Diagram>) {
    DIAGRAMS.with(|all| {
        let mut all = all.borrow_mut();
        all.retain(|w| w.strong_count() > 0);
        all.push(Rc::downgrade(d));
    });
}

/// Calls `f` with the diagram of memory space `color` on the page (the test hooks').
#[cfg(feature = "test-hooks")]
pub(super) fn with_diagram<R>(color: Option<u32>, f: impl FnOnce(&Rc<Diagram>) -> R) -> Option<R> {
    let d = DIAGRAMS.with(|all| find(&all.borrow(), color))?;
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

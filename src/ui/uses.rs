//! The uses of a value placed on the schedule ([`idle::value_uses`]), for the diagrams (the
//! selected value's idle stretches) and the details panel (its uses as steps). The module's
//! [`ScheduleIndex`] (a map of every instruction) is built once per module on screen, when
//! a value is first asked about, and the last answer is kept, so that every diagram and the
//! panel asking about one selection cost one lookup. What it keeps is the module's
//! [`Shown::uses`], and goes with the module.

use std::sync::Arc;

use bufscope::answers::idle::{self, ScheduleIndex, ValueUses};

use super::state::Shown;

fn has_uses(shown: &Shown) -> bool {
    *shown
        .kept
        .has_uses
        .get_or_init(|| idle::has_uses(&shown.module))
}

/// `value`'s uses and idle stretches in `shown`'s module; `None` when the dump has no
/// `Used values` entry for it (see [`needs_values`]).
pub fn value_uses(shown: &Arc<Shown>, value: u32) -> Option<Arc<ValueUses>> {
    if value as usize >= shown.module.values.len() || !has_uses(shown) {
        return None;
    }
    let kept = &shown.kept.last;
    let known = kept.lock().ok().and_then(|l| {
        l.as_ref()
            .filter(|(v, _)| *v == value)
            .map(|(_, uses)| uses.clone())
    });
    if let Some(uses) = known {
        return uses;
    }
    let index = schedule_index(shown);
    let uses = idle::value_uses(&shown.module, &index, value).map(Arc::new);
    if let Ok(mut l) = kept.lock() {
        *l = Some((value, uses.clone()));
    }
    uses
}

/// The module's schedule index, built on the first call for that module.
pub fn schedule_index(shown: &Arc<Shown>) -> Arc<ScheduleIndex> {
    shown
        .kept
        .index
        .get_or_init(|| Arc::new(ScheduleIndex::new(&shown.module)))
        .clone()
}

/// Whether the module lacks the `Used values` section, so that no value's uses can be
/// placed ([`idle::NEEDS_VALUES`] says what is needed).
pub fn needs_values(shown: &Arc<Shown>) -> bool {
    !has_uses(shown)
}

//! The uses of a value placed on the schedule ([`idle::value_uses`]), for the diagrams (the
//! selected value's idle stretches) and the details panel (its uses as steps). The module's
//! [`ScheduleIndex`] (a map of every instruction) is built once per module on screen, when
//! a value is first asked about, and the last answer is kept, so that every diagram and the
//! panel asking about one selection cost one lookup.

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use bufscope::answers::idle::{self, ScheduleIndex, ValueUses};

use super::state::Shown;

/// The module the cache is for, whether it has uses at all, its index, and the last value
/// answered.
struct Cache {
    shown: Weak<Shown>,
    has_uses: bool,
    index: Option<Arc<ScheduleIndex>>,
    last: Option<(u32, Option<Arc<ValueUses>>)>,
}

thread_local! {
    static CACHE: RefCell<Option<Cache>> = const { RefCell::new(None) };
}

/// `f` of the cache of `shown`'s module (made anew for another module).
fn with_cache<R>(shown: &Arc<Shown>, f: impl FnOnce(&mut Cache) -> R) -> R {
    CACHE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let c = match cell.as_mut() {
            Some(c) if std::ptr::eq(c.shown.as_ptr(), Arc::as_ptr(shown)) => c,
            _ => cell.insert(Cache {
                shown: Arc::downgrade(shown),
                has_uses: idle::has_uses(&shown.module),
                index: None,
                last: None,
            }),
        };
        f(c)
    })
}

/// `value`'s uses and idle stretches in `shown`'s module; `None` when the dump has no
/// `Used values` entry for it (see [`needs_values`]).
pub fn value_uses(shown: &Arc<Shown>, value: u32) -> Option<Arc<ValueUses>> {
    if value as usize >= shown.module.values.len() {
        return None;
    }
    let known = with_cache(shown, |c| {
        if !c.has_uses {
            return Some(None);
        }
        c.last
            .as_ref()
            .filter(|(v, _)| *v == value)
            .map(|(_, uses)| uses.clone())
    });
    if let Some(uses) = known {
        return uses;
    }
    let index = schedule_index(shown);
    let uses = idle::value_uses(&shown.module, &index, value).map(Arc::new);
    with_cache(shown, |c| c.last = Some((value, uses.clone())));
    uses
}

/// The module's schedule index, built on the first call for that module.
pub fn schedule_index(shown: &Arc<Shown>) -> Arc<ScheduleIndex> {
    with_cache(shown, |c| {
        c.index
            .get_or_insert_with(|| Arc::new(ScheduleIndex::new(&shown.module)))
            .clone()
    })
}

/// Whether the module lacks the `Used values` section, so that no value's uses can be
/// placed ([`idle::NEEDS_VALUES`] says what is needed).
pub fn needs_values(shown: &Arc<Shown>) -> bool {
    with_cache(shown, |c| !c.has_uses)
}

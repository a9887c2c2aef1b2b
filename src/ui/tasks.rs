//! The yield between pieces of work: [`next_task`] resolves in a later task of the event
//! loop (a message the page posts itself), after a frame when one is due ([`let_paint`]).
//! Reading, joining, analysing, indexing a space and building its levels of detail all go
//! in pieces with it between them, so that no task holds the page for long.
//!
//! Owns: the page's message channel to itself and when it last let a frame be drawn.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Longest time, in ms, the page goes without a frame while work is done in pieces: a
/// browser may run several queued tasks back to back before it paints.
const FRAME_DUE_MS: f64 = 33.0;

thread_local! {
    /// When the page last let a frame be drawn ([`let_paint`]).
    static LAST_FRAME: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
}

/// Milliseconds since the page started (`performance.now()`).
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

/// Waits for the next frame when none was drawn for [`FRAME_DUE_MS`] and the page is
/// visible (a hidden page draws no frames), so that work in pieces lets the page paint.
pub async fn let_paint() {
    if now_ms() - LAST_FRAME.with(Cell::get) >= FRAME_DUE_MS {
        next_frame().await;
    }
}

/// Waits for the next animation frame; whether it did (a hidden page draws none, and
/// this returns at once).
pub async fn next_frame() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    if window.document().is_none_or(|d| d.hidden()) {
        return false;
    }
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if window.request_animation_frame(&resolve).is_err() {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
    LAST_FRAME.with(|t| t.set(now_ms()));
    true
}

/// Resolves in a later task of the event loop, after a frame if one is due
/// ([`let_paint`]), so that the browser can handle input and paint between pieces of
/// work. The task is a message the page posts itself: unlike `setTimeout(0)` it is not
/// clamped to 4 ms when nested, nor throttled to one a second in a background tab.
pub async fn next_task() {
    let_paint().await;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let posted = TASKS.with(|t| {
            let Some(tasks) = t else { return false };
            tasks.waiting.borrow_mut().push_back(resolve.clone());
            tasks
                .channel
                .port2()
                .post_message(&JsValue::UNDEFINED)
                .is_ok()
        });
        if !posted {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// The channel [`next_task`] posts to itself on, and who waits for its messages (one
/// message each, in order).
struct Tasks {
    channel: web_sys::MessageChannel,
    waiting: Rc<RefCell<VecDeque<js_sys::Function>>>,
}

thread_local! {
    static TASKS: Option<Tasks> = {
        let channel = web_sys::MessageChannel::new().ok();
        channel.map(|channel| {
            let waiting: Rc<RefCell<VecDeque<js_sys::Function>>> = Rc::default();
            let queue = waiting.clone();
            let on_message = Closure::<dyn FnMut()>::new(move || {
                let next = queue.borrow_mut().pop_front();
                if let Some(resolve) = next {
                    let _ = resolve.call0(&JsValue::NULL);
                }
            });
            channel
                .port1()
                .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            // Lives as long as the page, as the channel does.
            on_message.forget();
            Tasks { channel, waiting }
        })
    };
}

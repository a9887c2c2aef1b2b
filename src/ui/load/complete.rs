//! The loading flow's last step: the bodies of `Used values` that the first read left for
//! later ([`DeferredUses`]) are read from their files' bytes ([`read::read_range`]) into a
//! copy of each module ([`UsesReader`]), joined in pieces, and the complete modules replace
//! the first ones on screen, the view (module, zoom, step, value, search, capacity) carried
//! over as a switch of module carries it ([`hash::carry`]). Where a body does not read as
//! one pass would have read it, the files are read again in one pass.

use std::sync::Arc;

use leptos::prelude::*;

use bufscope::parse::{DeferredUses, UsesReader};

use super::super::read::{self, Picked};
use super::super::state::Shown;
use super::super::{hash, Outcome};
use super::{describe, start, Flow, JOIN_PIECE};

impl Flow {
    /// Step 4: the modules on screen (`partial`) completed from `deferred`.
    pub(super) async fn complete(
        &self,
        files: &[Picked],
        partial: Vec<Arc<Shown>>,
        deferred: Vec<DeferredUses>,
        started: f64,
    ) {
        let st = self.st;
        while held() {
            if !self.pause().await {
                return;
            }
        }
        let total: u64 = deferred.iter().map(|d| d.bytes.end - d.bytes.start).sum();
        let mut done = 0.0;
        st.details.set(Some(0.0));
        let mut modules = Vec::with_capacity(partial.len());
        for shown in partial {
            if shown.complete {
                modules.push(shown);
                continue;
            }
            let bodies: Vec<&DeferredUses> = deferred
                .iter()
                .filter(|d| d.module == shown.module.name)
                .collect();
            let mut advanced = |bytes: f64| {
                done += bytes;
                if self.current() && total > 0 {
                    st.details.set(Some(done / total as f64));
                }
            };
            match self
                .complete_one(files, &shown, &bodies, &mut advanced)
                .await
            {
                None => return,
                Some(Ok(module)) => {
                    modules.push(Arc::new(Shown::new(module, shown.analysis.clone())))
                }
                Some(Err(why)) => {
                    // The skip guessed wrong (a damaged dump): read it all in one pass.
                    leptos::logging::log!("bufscope: reading again in one pass: {why}");
                    st.details.set(None);
                    start(st, files.to_vec(), self.target, false);
                    return;
                }
            }
        }
        if !self.current() {
            return;
        }
        hash::carry();
        st.details.set(None);
        let complete = js_sys::Date::now() - started;
        st.report.update(|r| {
            if let Some(r) = r {
                let mut report = (**r).clone();
                if let Some(t) = report.timings.as_mut() {
                    t.complete = complete;
                }
                *r = Arc::new(report);
            }
        });
        st.view.set(Some(Arc::new(Outcome {
            what: describe(&self.names),
            modules,
        })));
    }

    /// One module completed: its bodies read and joined. `None` when the read was
    /// abandoned; an error when the files must be read again in one pass.
    async fn complete_one(
        &self,
        files: &[Picked],
        shown: &Shown,
        bodies: &[&DeferredUses],
        advanced: &mut impl FnMut(f64),
    ) -> Option<Result<bufscope::model::Module, String>> {
        let Some(first) = bodies.first() else {
            return Some(Ok(shown.module.clone()));
        };
        let mut reader = UsesReader::new(shown.module.clone(), first);
        for (i, d) in bodies.iter().enumerate() {
            if i > 0 {
                reader.body(d);
            }
            let Some(picked) = files.iter().find(|p| p.name == d.file) else {
                return Some(Err(format!("{} is not among the files read", d.file)));
            };
            let cancelled = || !self.current();
            let feed = |bytes: &[u8]| reader.feed(bytes);
            match read::read_range(picked, d.bytes.clone(), feed, advanced, &cancelled).await? {
                Ok(()) => {}
                Err(e) => return Some(Err(e)),
            }
        }
        let mut completing = match reader.finish() {
            Ok(c) => c,
            Err(why) => return Some(Err(why)),
        };
        while !completing.step(JOIN_PIECE) {
            if !self.pause().await {
                return None;
            }
        }
        Some(Ok(completing.into_module()))
    }
}

/// Browser tests hold the modules incomplete while `window.__bufscope_hold_details` is
/// true (only with the `test-hooks` feature), to look at the page in between.
#[cfg(feature = "test-hooks")]
fn held() -> bool {
    let key = wasm_bindgen::JsValue::from_str("__bufscope_hold_details");
    js_sys::Reflect::get(&window(), &key).is_ok_and(|v| v.is_truthy())
}

#[cfg(not(feature = "test-hooks"))]
fn held() -> bool {
    false
}

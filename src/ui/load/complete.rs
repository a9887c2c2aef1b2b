//! The loading flow's last step: the bodies of `Used values` that the first read left for
//! later ([`DeferredUses`]) are read from their files' bytes ([`read::read_range`]) while
//! the first modules stay on screen ([`UsesReader`], into arenas of its own); then the modules give way for a frame, each is completed in place ([`UsedPart`],
//! joined in pieces) and put back, the view (module, zoom, step, value, search, capacity)
//! carried over as a switch of module carries it ([`hash::carry`]). Where a body does not
//! read as one pass would have read it, the files are read again in one pass.

use std::sync::Arc;

use leptos::prelude::*;

use bufscope::parse::{lines_known, DeferredUses, UsedPart, UsesReader};

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
        if !lines_known(partial.iter().map(|s| &s.module), &deferred) {
            // A warning's line number after bytes jumped over is unknown: read it all.
            st.details.set(None);
            start(st, files.to_vec(), self.target, false);
            return;
        }
        let total: u64 = deferred.iter().map(|d| d.bytes.end - d.bytes.start).sum();
        let mut done = 0.0;
        let mut parts = Vec::with_capacity(partial.len());
        for shown in &partial {
            let bodies: Vec<&DeferredUses> = deferred
                .iter()
                .filter(|d| !shown.complete && d.module == shown.module.name)
                .collect();
            let mut advanced = |bytes: f64| {
                done += bytes;
                if self.current() && total > 0 {
                    st.details.set(Some(done / total as f64));
                }
            };
            match self.read_bodies(files, &bodies, &mut advanced).await {
                None => return,
                Some(Ok(part)) => parts.push(part),
                Some(Err(why)) => {
                    // The skip guessed wrong (a damaged dump): read it all in one pass.
                    leptos::logging::log!("bufscope: reading again in one pass: {why}");
                    st.details.set(None);
                    start(st, files.to_vec(), self.target, false);
                    return;
                }
            }
        }
        // The modules on screen give way, so that each one's memory goes to its complete
        // form instead of a copy (wasm memory never shrinks): the view is carried over.
        hash::carry();
        st.view.set(Some(Arc::new(Outcome {
            what: describe(&self.names),
            modules: Vec::new(),
        })));
        if !self.pause().await || !self.pause().await {
            return;
        }
        let mut modules = Vec::with_capacity(partial.len());
        for (shown, part) in partial.into_iter().zip(parts) {
            let Some(part) = part else {
                modules.push(shown);
                continue;
            };
            let (module, analysis) = match Arc::try_unwrap(shown) {
                Ok(s) => (s.module, s.analysis),
                Err(shared) => (shared.module.clone(), shared.analysis.clone()),
            };
            let mut completing = part.complete(module);
            while !completing.step(JOIN_PIECE) {
                if !self.pause().await {
                    return;
                }
            }
            modules.push(Arc::new(Shown::new(completing.into_module(), analysis)));
        }
        self.put_back(modules, started);
    }

    /// The complete modules on screen, and the time it took in the report.
    fn put_back(&self, modules: Vec<Arc<Shown>>, started: f64) {
        let st = self.st;
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

    /// The skipped bodies of one module read (none for a module read whole). `None` when
    /// the read was abandoned; an error when the files must be read again in one pass.
    async fn read_bodies(
        &self,
        files: &[Picked],
        bodies: &[&DeferredUses],
        advanced: &mut impl FnMut(f64),
    ) -> Option<Result<Option<UsedPart>, String>> {
        let Some(first) = bodies.first() else {
            return Some(Ok(None));
        };
        let mut reader = UsesReader::new(first);
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
        Some(reader.finish().map(Some))
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

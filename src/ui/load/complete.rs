//! The loading flow's last step, begun once every diagram has drawn once: the bodies of
//! `Used values` that the first read left for later ([`DeferredUses`]) are read from their
//! files' bytes (the core's read behind, [`BehindLane`], driven by [`read::read_behind`]) while the first modules stay on
//! screen (into arenas of their own), and what can be done with those modules only
//! read is done in pieces ([`UsedPart::prepare`], [`UsedPart::choose`]); then, in one task,
//! each module is taken from the view, completed in place ([`UsedPart`]) and put back. The
//! views read their module through their `Focus` and keep none, so they stay as they are
//! (scroll, panels, zoom, selection; the diagrams keep their index: the blocks do not
//! change) and show the complete module from the next frame. Where a body does not
//! read as one pass would have read it, the files are read again in one pass.

use std::sync::Arc;

use leptos::prelude::*;

use bufscope::parse::{lines_known, DeferredUses, Note, UsedPart};

use super::super::read::{self, Picked};
use super::super::state::Shown;
use super::super::read::uses_worker::{Answer, UsesJobs};
use crate::ui::app::{AppState, Outcome};
use super::{start, PageRead, Target, JOIN_PIECE};
use crate::ui::canvas::first_drawings;
use crate::ui::hash;

/// Longest wait (ms) for the diagrams' first drawing before completing the modules.
const FIRST_DRAWING_WAIT_MS: f64 = 2000.0;

/// Instruction facts per task ([`UsedPart::prepare`]): three strings each looked up.
const PREPARE_PIECE: usize = JOIN_PIECE / 3;
/// Instruction facts per task ([`UsedPart::choose`]): a value and an instruction each
/// looked up, both far apart in memory.
const CHOOSE_PIECE: usize = JOIN_PIECE / 2;

impl PageRead {
    /// Step 4: the modules on screen completed from `deferred`.
    pub(super) async fn complete(
        &self,
        files: &[Picked],
        deferred: Vec<DeferredUses>,
        started: f64,
        mut jobs: Option<UsesJobs>,
    ) {
        let st = self.st;
        while held() {
            if !self.pause().await {
                return;
            }
        }
        // The diagrams are drawn first (a frame or two); completing can wait for them.
        first_drawings(FIRST_DRAWING_WAIT_MS).await;
        // In a task of its own, not the frame's that puts the panels on the page.
        if !self.pause().await {
            return;
        }
        // What is on screen, by name; the modules themselves stay where the views read them.
        let (known, names) = st.view.with_untracked(|o| {
            let modules = o.as_ref().map_or(&[][..], |o| &o.modules[..]);
            let known = lines_known(modules.iter().map(|s| &s.module), &deferred);
            let names: Vec<Option<String>> = modules
                .iter()
                .map(|s| (!s.complete).then(|| s.module.name.clone()))
                .collect();
            (known, names)
        });
        if !known {
            // A warning's line number after bytes jumped over is unknown: read it all.
            leptos::logging::log!(
                "bufscope: reading again in one pass: a warning's line is unknown"
            );
            self.read_again(files);
            return;
        }
        let read = match self.read_parts(files, &deferred, &names, &mut jobs).await {
            None => return,
            // A module one pass would not give (no buffer assignment) is one pass's too.
            Some(read) => read.and_then(|read| refused(st, &read.0).map_or(Ok(read), Err)),
        };
        let (mut parts, worker_bytes) = match read {
            Ok(read) => read,
            Err(why) => {
                // The skip guessed wrong (a damaged dump): read it all in one pass.
                leptos::logging::log!("bufscope: reading again in one pass: {why}");
                self.read_again(files);
                return;
            }
        };
        if !self.prepare(&mut parts).await {
            return;
        }
        if self.current() {
            self.put_back(parts);
        }
        // The views follow in the next task, so that the frame between shows the page.
        if self.pause().await {
            self.show_complete(started, worker_bytes);
        }
    }

    /// The files read again in one pass; the view on screen (the one the URL hash restored,
    /// or what the user did since) is the one the read puts back.
    fn read_again(&self, files: &[Picked]) {
        if self.target == Target::Page {
            hash::keep_for_reread();
        }
        self.st.completing.set(None);
        start(self.st, self.with_hlo(files), self.target, false);
    }

    /// What can be done with the modules still on screen, in pieces: each part's strings
    /// found ([`UsedPart::prepare`]) and the facts its instructions take chosen, reading its
    /// module on screen ([`UsedPart::choose`]). False when the read was abandoned.
    async fn prepare(&self, parts: &mut [Option<UsedPart>]) -> bool {
        for (i, part) in parts.iter_mut().enumerate() {
            let Some(part) = part else { continue };
            while !part.prepare(PREPARE_PIECE) {
                if !self.pause().await {
                    return false;
                }
            }
            loop {
                let chose = self.st.view.with_untracked(|o| {
                    let shown = o.as_ref()?.modules.get(i)?;
                    Some(part.choose(&shown.module, CHOOSE_PIECE))
                });
                if chose != Some(false) {
                    break;
                }
                if !self.pause().await {
                    return false;
                }
            }
        }
        true
    }

    /// The modules on screen replaced by their complete forms, in one task (no frame shows
    /// anything between): each is taken from the view, completed in place (its memory
    /// becomes the complete module's, not a copy's: wasm memory never shrinks) and put
    /// back, for the views to follow ([`PageRead::show_complete`]).
    fn put_back(&self, parts: Vec<Option<UsedPart>>) {
        let st = self.st;
        let Some(Outcome {
            what,
            modules,
            read,
        }) = super::take_outcome(st.view)
        else {
            return;
        };
        let mut parts = parts.into_iter();
        let modules = modules
            .into_iter()
            .map(|shown| match parts.next().flatten() {
                Some(part) => Arc::new(completed(shown, part)),
                None => shown,
            })
            .collect();
        let complete = Some(Arc::new(Outcome {
            what,
            modules,
            read,
        }));
        st.view.update_untracked(|v| *v = complete);
    }

    /// The views, which read their module through their `Focus`, follow its complete form
    /// as they are; and the time it took in the report.
    fn show_complete(&self, started: f64, worker_bytes: f64) {
        let st = self.st;
        st.completing.set(None);
        let complete = js_sys::Date::now() - started;
        st.report.update(|r| {
            if let Some(r) = r {
                let mut report = (**r).clone();
                if let Some(t) = report.timings.as_mut() {
                    t.complete = complete;
                    t.uses_worker = worker_bytes;
                }
                *r = Arc::new(report);
            }
        });
        st.view.notify();
    }

    /// The part of each module `names` lists (none for one read whole, or not shown), from
    /// the worker's job or read here; and the worker's memory (bytes, 0 without it). `None`
    /// when the read was abandoned; an error when the files must be read again in one pass.
    async fn read_parts(
        &self,
        files: &[Picked],
        deferred: &[DeferredUses],
        names: &[Option<String>],
        jobs: &mut Option<UsesJobs>,
    ) -> Option<Result<(Vec<Option<UsedPart>>, f64), String>> {
        let st = self.st;
        let total: u64 = deferred.iter().map(|d| d.bytes.end - d.bytes.start).sum();
        let mut done = 0.0;
        let mut parts = Vec::with_capacity(names.len());
        let mut worker_bytes: f64 = 0.0;
        for name in names {
            let bodies: Vec<&DeferredUses> = deferred
                .iter()
                .filter(|d| name.as_ref() == Some(&d.module))
                .collect();
            let mut advanced = |bytes: f64| {
                done += bytes;
                if self.current() && total > 0 {
                    st.completing.set(Some(done / total as f64));
                }
            };
            let from_worker = match jobs.as_mut() {
                Some(jobs) if jobs.has(&bodies) => Some(jobs.answer(&bodies).await),
                _ => None,
            };
            if !self.current() {
                return None;
            }
            let read = match from_worker {
                Some(Answer::Part(part, bytes)) => Ok((Some(part), bytes)),
                Some(Answer::Inexact(why)) => Err(why),
                Some(Answer::Failed(why)) => {
                    leptos::logging::warn!("bufscope: the worker did not read the uses: {why}");
                    self.read_bodies(files, &bodies, &mut advanced).await?
                }
                None => self.read_bodies(files, &bodies, &mut advanced).await?,
            };
            let read = read.map(|(part, bytes)| {
                worker_bytes = worker_bytes.max(bytes);
                part
            });
            match read {
                Ok(part) => parts.push(part),
                Err(why) => return Some(Err(why)),
            }
        }
        Some(Ok((parts, worker_bytes)))
    }

    /// The skipped bodies of one module read (none for a module read whole), in pieces where
    /// the page has piece workers; with the largest one's memory (bytes, 0 without). `None`
    /// when the read was abandoned; an error when the files must be read again in one pass.
    async fn read_bodies(
        &self,
        files: &[Picked],
        bodies: &[&DeferredUses],
        advanced: &mut impl FnMut(f64),
    ) -> Option<Result<(Option<UsedPart>, f64), String>> {
        let workers = self.st.workers.get_value();
        let mut behind = workers.behind_lane();
        bodies.iter().for_each(|&d| behind.post(Note::Body(d.clone())));
        behind.post(Note::Over);
        let cancelled = || !self.current();
        let memory = read::read_behind(&mut behind, files, &workers, advanced, &cancelled).await?;
        let read = behind.finish().into_read();
        Some(read.map(|read| (read.parts.into_iter().next().map(|(_, p)| p), memory)))
    }
}

/// Why one pass would not give one of the modules on screen, completed by `parts` (one
/// per module, none for those read whole), if it would not ([`UsedPart::refused`]).
fn refused(st: AppState, parts: &[Option<UsedPart>]) -> Option<String> {
    st.view.with_untracked(|o| {
        let modules = o.as_ref().map_or(&[][..], |o| &o.modules[..]);
        modules
            .iter()
            .zip(parts)
            .find_map(|(s, p)| p.as_ref()?.refused(&s.module))
    })
}

/// `shown` completed by `part`: in place when nothing else holds it (the views do not),
/// else from a copy.
fn completed(shown: Arc<Shown>, part: UsedPart) -> Shown {
    let shown = super::owned(shown, "completed");
    let mut completing = part.complete(shown.module);
    while !completing.step(usize::MAX) {}
    // Its kept answers are made again for the complete module.
    Shown { module: completing.into_module(), kept: Default::default(), complete: true, ..shown }
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

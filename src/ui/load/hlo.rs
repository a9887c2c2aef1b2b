//! The last step of a read: the HLO module texts beside the dump (`*after_optimizations.txt`),
//! read once the diagrams are on screen (they never wait for them), in slices as the core's
//! read behind (`parse::BehindLane`) asks for them, and joined to its module on screen by file stem; the
//! views follow from the next frame (source lines, stacks, instructions, names).

use std::sync::Arc;

use bufscope::parse::hlo::{self, HloRead};
use bufscope::parse::{BehindLane, Note, Read};
use leptos::prelude::*;

use super::{PageRead, Target};
use crate::ui::read::{self, Picked};
use crate::ui::app::Outcome;

impl PageRead {
    /// The files of this read again, HLO texts included (for a read again in one pass).
    pub(super) fn with_hlo(&self, files: &[Picked]) -> Vec<Picked> {
        let more = self.hlo.iter().filter(|h| !files.iter().any(|f| f.name == h.name));
        files.iter().chain(more).cloned().collect()
    }

    /// Step 5: each HLO text read and given to its module on screen as the core joins a
    /// folder's ([`hlo::place_texts`]); a text whose module is not there (one before
    /// optimizations too) is one sentence in the report.
    pub(super) async fn read_hlo(&self) {
        let mut behind = BehindLane::alone();
        for p in &self.hlo {
            let (file, size) = (p.name.clone(), p.file.size() as u64);
            behind.post(Note::Hlo { file, size });
        }
        behind.post(Note::Over);
        let workers = self.st.workers.get_value();
        let cancelled = || !self.current();
        let mut advanced = |_| {};
        let read = read::read_behind(&mut behind, &self.hlo, &workers, &mut advanced, &cancelled);
        if read.await.is_none() {
            return;
        }
        // An HLO text cut short or unreadable is one of `errors`, never a failure of all.
        let Ok(Read {
            hlo: reads,
            mut errors,
            ..
        }) = behind.finish().into_read()
        else {
            return;
        };
        errors.extend(self.attach(reads));
        let st = self.st;
        if !errors.is_empty() {
            st.report.update(|r| {
                if let Some(r) = r {
                    let mut report = (**r).clone();
                    report.errors.extend(errors);
                    *r = Arc::new(report);
                }
            });
        }
    }

    /// The texts given to the modules on screen, in one task: the outcome taken from the
    /// view, each module with a text taken out of its `Arc` (the views keep none) and put
    /// back; the views notified.
    fn attach(&self, reads: Vec<HloRead>) -> Vec<String> {
        let st = self.st;
        let signal = match self.target {
            // A configuration added to a sweep joined the read on screen.
            Target::Page | Target::Sweep => st.view,
            Target::Compare => st.compare,
        };
        let Some(Outcome {
            what,
            mut modules,
            read,
        }) = super::take_outcome(signal)
        else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        let placed = {
            let shown: Vec<&bufscope::model::Module> = modules.iter().map(|s| &s.module).collect();
            hlo::place_texts(&shown, &reads)
        };
        let mut reads: Vec<Option<HloRead>> = reads.into_iter().map(Some).collect();
        for (r, to) in placed {
            let (k, text) = match (to, reads[r].take()) {
                (Ok(k), Some(text)) => (k, text),
                (Err(e), _) => {
                    errors.push(e);
                    continue;
                }
                (Ok(_), None) => continue,
            };
            let shown = std::mem::replace(&mut modules[k], crate::ui::state::Shown::none());
            let mut shown = super::owned(shown, "given its HLO text");
            hlo::attach_to(&mut shown.module, text);
            modules[k] = Arc::new(shown);
        }
        signal.update_untracked(|v| {
            *v = Some(Arc::new(Outcome {
                what,
                modules,
                read,
            }))
        });
        signal.notify();
        errors
    }
}

//! Waste per device (`#answers-waste`, issue 35): values replicated that their peers shard,
//! values all-gathered from a parameter, and donation (left over, moved, double buffered),
//! from the HLO texts beside the dump ([`bufscope::answers::waste`]); where a text is
//! missing, the sentence saying what each answer needs. A row's click highlights its
//! values (the parameter's allocation, the gathered value).

use std::sync::Arc;

use bufscope::answers::waste::{waste, Waste};
use bufscope::text::clip_middle;
use bufscope::units;
use leptos::prelude::*;

use super::{Ans, Computed};

const NAME_CHARS: usize = 48;

/// One row: its kind, path, detail, bytes; a click highlights `values`.
fn row(ans: Ans, kind: &'static str, path: &str, detail: String, bytes: u64, values: Vec<u32>) -> impl IntoView {
    view! {
        <tr class="waste-row" data-kind=kind data-path=path.to_string() data-bytes=bytes.to_string()
            on:click=move |_| ans.highlight(values.clone())>
            <td>{kind}</td>
            <td class="mono name" title=path.to_string()>{clip_middle(path, NAME_CHARS)}</td>
            <td>{detail}</td>
            <td class="num" title=units::exact_bytes(bytes)>{units::human_bytes(bytes)}</td>
        </tr>
    }
}

/// Every row of the answer, largest finding first within each kind.
fn rows(ans: Ans, w: &Waste) -> Vec<AnyView> {
    let mut out = Vec::new();
    for v in &w.replicated.values {
        let detail = format!("{} in {} piece(s), {} per device; cut in {} like {}", v.global_shape, v.shards,
            units::human_bytes(v.per_device_bytes), v.peer_shards, v.peer);
        out.push(row(ans, "replicated", &v.path, detail, v.saving_bytes, v.values.clone()).into_any());
    }
    for g in &w.gathered.values {
        let at = if g.live_at_peak { "live at the peak" } else { "not live at the peak" };
        let detail = format!("{} gathered, {at}", g.instruction);
        let path = g.from.clone().unwrap_or_default();
        out.push(row(ans, "gathered", &path, detail, g.bytes, g.values.clone()).into_any());
    }
    let d = &w.donation;
    for (kind, list) in [("left over", &d.left_over), ("moved", &d.moved), ("double buffered", &d.double_buffered)] {
        for r in list {
            let detail = format!("{}: {}", r.shape, r.why);
            out.push(row(ans, kind, &r.path, detail, r.bytes, r.values.clone()).into_any());
        }
    }
    out
}

#[component]
pub(super) fn WasteAnswer(ans: Ans) -> impl IntoView {
    let computed = Memo::new(move |_| {
        let shown = ans.focus.shown();
        Computed(Arc::new(waste(&shown.module, &shown.analysis)))
    });
    let summary = move || {
        let w = computed.get();
        let d = &w.donation;
        format!(
            "replicated: {} saved if cut like their peers (a lower bound) · gathered from parameters: {} of {} all-gathers, {} live at the peak · donation: {} aliased, {} left over, {} double buffered",
            units::human_bytes(w.replicated.saving_bytes),
            w.gathered.values.len(),
            w.gathered.total,
            units::human_bytes(w.gathered.bytes_at_peak),
            d.aliased,
            units::human_bytes(d.left_over_bytes),
            units::human_bytes(d.double_buffered_bytes),
        )
    };
    let needs = move || {
        let w = computed.get();
        let all = [w.replicated.needs.clone(), w.gathered.needs.clone(), w.donation.needs.clone()];
        let mut said: Vec<String> = Vec::new();
        for n in all.into_iter().flatten() {
            if !said.contains(&n) {
                said.push(n);
            }
        }
        said.into_iter().map(|n| view! { <p class="note waste-needs">{n}</p> }).collect::<Vec<_>>()
    };
    let body = move || rows(ans, &computed.get());
    view! {
        <div class="answer" id="answers-waste">
            <h4>"Waste per device"</h4>
            <p class="note waste-summary">{summary}</p>
            {needs}
            <table class="answer-table">
                <thead><tr><th>"kind"</th><th>"value"</th><th>"why"</th><th class="num">"bytes"</th></tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
}

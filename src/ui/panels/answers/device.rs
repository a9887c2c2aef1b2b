//! The device ledger (`#answers-device`, issue 35): when the read has several modules (a
//! dump folder: init, train step, eval step…), each module's jit name, peak and argument
//! bytes, the bytes of its arguments another module shares and how many times its jit name
//! was compiled, and the device's worst case held against the capacity chosen for memory
//! space 0 ([`bufscope::answers::waste::device`]). A row's click opens that module, as the
//! module picker does (its position in the read, carrying the search and capacity over).

use bufscope::answers::capacity;
use bufscope::answers::waste::device::{device, Device};
use bufscope::text::clip_middle;
use bufscope::units;
use leptos::prelude::*;

use super::Ans;
use crate::ui::hash;
use crate::ui::state::ReadModules;

const NAME_CHARS: usize = 48;

/// A byte figure's cell: human, its exact bytes on hover and in `data-bytes`.
fn bytes_cell(bytes: u64) -> impl IntoView {
    view! { <td class="num" data-bytes=bytes.to_string() title=units::exact_bytes(bytes)>{units::human_bytes(bytes)}</td> }
}

/// The ledger's rows, in the read's order; the module on screen is marked.
fn rows(d: &Device, read: ReadModules) -> Vec<AnyView> {
    let on_screen = read.chosen.get();
    (d.modules.iter().enumerate())
        .map(|(i, l)| {
            let open = move |_| {
                if i != read.chosen.get_untracked() {
                    hash::carry();
                    read.chosen.set(i);
                }
            };
            view! {
                <tr class="device-row" class:current=i == on_screen data-name=l.name.clone()
                    data-jit=l.jit_name.clone() on:click=open>
                    <td class="mono name" title=l.name.clone()>{clip_middle(&l.jit_name, NAME_CHARS)}</td>
                    {bytes_cell(l.peak_bytes)}
                    {bytes_cell(l.argument_bytes)}
                    {bytes_cell(d.shared_bytes(&l.name))}
                    <td class="num compiles">{d.compiles(&l.jit_name)}</td>
                </tr>
            }
            .into_any()
        })
        .collect()
}

/// The worst case, and the verdict against the capacity chosen for space 0 when there is one.
fn worst_case(d: &Device, ans: Ans) -> Option<AnyView> {
    let worst = d.worst_module.clone()?;
    let against = ans.focus.capacity.with(|m| m.get(&0).cloned());
    let verdict = against.map(|c| capacity::verdict(d.worst_case_bytes, &c));
    let sentence = format!(
        "worst case {} ({}), of which {} are arguments other modules share (resident between calls){}",
        units::human_bytes(d.worst_case_bytes),
        bufscope::model::xla_module_name(&worst),
        units::human_bytes(d.resident_bytes),
        verdict.as_ref().map_or_else(String::new, |v| format!(": {}", v.sentence)),
    );
    Some(
        view! {
            <p class="note device-worst" data-module=worst data-bytes=d.worst_case_bytes.to_string()
                data-resident=d.resident_bytes.to_string()
                data-capacity=d.capacity_bytes.map(|c| c.to_string())
                data-fits=verdict.map(|v| v.fits.to_string())>{sentence}</p>
        }
        .into_any(),
    )
}

#[component]
pub(super) fn DeviceLedger(ans: Ans, read: ReadModules) -> impl IntoView {
    let computed = Memo::new(move |_| {
        let cap = ans.focus.capacity.with(|m| m.get(&0).map(|c| c.bytes));
        read.modules.with(|all| {
            (all.len() > 1).then(|| device(all.iter().map(|s| (&s.module, &*s.analysis)), cap))
        })
    });
    move || {
        let d = computed.get()?;
        let recompiles = (!d.recompiles.is_empty()).then(|| {
            let said: Vec<String> = (d.recompiles.iter())
                .map(|(j, n)| format!("{j} compiled {n} times"))
                .collect();
            view! { <p class="note device-recompiles">{said.join(" · ")}</p> }
        });
        Some(view! {
            <div class="answer" id="answers-device">
                <h4>"The device: the read's modules side by side"</h4>
                {worst_case(&d, ans)}
                {recompiles}
                <table class="answer-table">
                    <thead><tr><th>"jit name"</th><th class="num">"peak"</th><th class="num">"arguments"</th>
                        <th class="num">"shared arguments"</th><th class="num">"compiled"</th></tr></thead>
                    <tbody>{rows(&d, read)}</tbody>
                </table>
                <p class="note">{format!("{} arguments shared between modules (by pytree path and shape). A row opens its module.", d.shared_arguments.len())}</p>
            </div>
        })
    }
}

//! The selected value's HLO instruction and call stack, from the HLO text beside the dump
//! (`bufscope::query::instruction_view`, `source_stack`): layout only. The instruction line
//! (shape, opcode, operands, each a link selecting the operand's value), the computation it
//! lives in, what it calls, the custom call target and the sharding; long attributes
//! shortened, the whole behind an expander. The stack innermost first, library frames folded
//! under the user frame they follow.

use bufscope::model::{Module, Value};
use bufscope::query::{self, StackRow};
use leptos::prelude::*;

use crate::ui::state::Focus;

/// The instruction's section, when the module has the HLO text and it has the instruction.
pub(super) fn instruction(
    focus: Focus,
    m: &Module,
    value: &Value,
) -> Option<impl IntoView + use<>> {
    let view = query::instruction_view(m, value)?;
    let operands = view
        .operands
        .iter()
        .enumerate()
        .map(|(k, o)| {
            let sep = (k > 0).then_some(", ");
            let name = format!("%{}", o.name);
            let link = match o.value {
                Some(v) => view! {
                    <button type="button" class="operand-link" data-value=v.to_string()
                        title="Select this operand's value"
                        on:click=move |_| { focus.selected.set(Some(v)); focus.reveal(v); }>{name}</button>
                }
                .into_any(),
                None => view! { <span class="operand-plain" title="No value of the dump">{name}</span> }.into_any(),
            };
            view! { {sep}{link} }
        })
        .collect_view();
    let literal = view
        .literal
        .clone()
        .map(|l| view! { <span class="literal">{l}</span> });
    let attributes = view
        .attributes
        .iter()
        .map(|a| {
            let shown = if a.shortened {
                view! {
                    <details class="attr-more"><summary><code>{format!("{}={}", a.key, a.short)}</code></summary>
                        <code class="attr-full">{a.full.clone()}</code></details>
                }
                .into_any()
            } else {
                view! { <code>{format!("{}={}", a.key, a.full)}</code> }.into_any()
            };
            view! { <li>{shown}</li> }
        })
        .collect_view();
    let calls = view
        .calls
        .iter()
        .map(|(role, c)| format!("{role}={c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let computation = if view.in_entry {
        format!("{} (the entry computation)", view.computation)
    } else {
        view.computation.clone()
    };
    Some(view! {
        <section class="hlo-instruction" aria-label="HLO instruction">
            <h4>"HLO instruction" <span class="hlo-line">{format!("line {}", view.line)}</span></h4>
            <p class="hlo-text"><code>
                {format!("%{} = ", view.name)}<span class="shape">{view.shape.clone()}</span>" "
                <span class="opcode">{view.opcode.clone()}</span>"("{operands}{literal}")"
            </code></p>
            <dl class="facts">
                <dt>"Computation"</dt><dd class="hlo-computation"><code>{computation}</code></dd>
                {(!calls.is_empty()).then(|| view! { <dt>"Calls"</dt><dd class="hlo-calls"><code>{calls}</code></dd> })}
                {view.custom_call_target.clone().map(|t| view! { <dt>"Custom call"</dt><dd class="hlo-target"><code>{t}</code></dd> })}
                {view.sharding.clone().map(|s| view! { <dt>"Sharding"</dt><dd class="hlo-sharding"><code>{s}</code></dd> })}
            </dl>
            {(!view.attributes.is_empty()).then(|| view! { <ul class="hlo-attrs">{attributes}</ul> })}
        </section>
    })
}

fn frame_text(r: &StackRow) -> String {
    format!("{}:{} {}", r.file, r.line, r.function)
}

/// The call stack, innermost first, when the HLO text resolves the value's stack frame.
pub(super) fn stack(m: &Module, value: &Value) -> Option<impl IntoView + use<>> {
    let rows = query::source_stack(m, value);
    if rows.is_empty() {
        return None;
    }
    let mut items = Vec::new();
    let mut k = 0;
    while k < rows.len() {
        let r = &rows[k];
        let folded: Vec<String> = rows[k + 1..]
            .iter()
            .take(r.folds as usize)
            .map(frame_text)
            .collect();
        let user = !query::is_library_file(&r.file);
        let text = frame_text(r);
        let item = if folded.is_empty() {
            view! { <li class:user=user><code>{text}</code></li> }.into_any()
        } else {
            let n = folded.len();
            let inner = folded
                .into_iter()
                .map(|f| view! { <li class="library"><code>{f}</code></li> })
                .collect_view();
            view! {
                <li class:user=user><code>{text}</code>
                    <details class="folded"><summary>{format!("{n} library frames")}</summary><ul>{inner}</ul></details>
                </li>
            }
            .into_any()
        };
        items.push(item);
        k += 1 + r.folds as usize;
    }
    Some(view! {
        <section class="call-stack" aria-label="Call stack">
            <h4>"Call stack" <span class="hint">"innermost first"</span></h4>
            <ol class="stack">{items}</ol>
        </section>
    })
}

//! The listed buffers of one message: how much of the reported total they cover, a table
//! with a bar per buffer (its padding drawn apart), and the buffers added up by op_name
//! (numbered layers folded) and by source line, as bars. The groupings and the coverage
//! come from [`bufscope::parse::oom`]; this only lays them out.

use bufscope::answers::oom::{coverage, group_by_op_name, group_by_source, OomGroup};
use bufscope::model::oom::{OomBuffer, OomMessage};
use bufscope::text::{clip_middle, clip_source};
use leptos::prelude::*;

use super::{signed, size_view};
use bufscope::summary::oom::reported_total;
use bufscope::units;

/// Longest op_name shown in a cell or a group (the full text is in the title).
const NAME_CHARS: usize = 90;
/// Longest source file, shape and XLA label shown.
const FILE_CHARS: usize = 48;
const SHAPE_CHARS: usize = 48;
const LABEL_CHARS: usize = 70;

/// The buffers' part of message `m`.
pub(super) fn view(m: &OomMessage) -> impl IntoView {
    if m.buffers.is_empty() {
        return view! { <p class="oom-none">"The message lists no buffers."</p> }.into_any();
    }
    view! {
        <h4>{format!("Listed buffers ({})", m.buffers.len())}</h4>
        {covered(m)}
        {table(&m.buffers)}
        <div class="oom-groupings">
            {groups("By op_name (numbered layers folded)", "op_name", group_by_op_name(&m.buffers))}
            {groups("By source line", "source line", group_by_source(&m.buffers))}
        </div>
    }
    .into_any()
}

/// How much of the reported total the listed buffers add up to.
fn covered(m: &OomMessage) -> impl IntoView {
    let n = m.buffers.len();
    // The core's choice of total (the GPU's `total allocation`, the TPU's `Program …
    // requirement`, else the memory used), as the CLI compares with.
    let (name, total) = reported_total(m)?;
    let name = format!("the {}", name.to_lowercase());
    let c = coverage(m, &total)?;
    let buffers = if n == 1 {
        "The listed buffer is".to_string()
    } else {
        format!("The {n} listed buffers add up to")
    };
    let rest = if c.fraction < 0.995 {
        " The rest is in buffers the message does not list."
    } else {
        ""
    };
    Some(view! {
        <p class="oom-coverage">
            {format!(
                "{buffers} {}: {:.0}% of {name} ({}).{rest}",
                signed(c.listed),
                c.fraction * 100.0,
                signed(total.bytes)
            )}
        </p>
    })
}

/// An op_name for a cell: the parameters of its last op (`dot_general[dimension_numbers=…]`)
/// shortened to `[…]`, then clipped in the middle (the full name is in the title).
fn short_op_name(name: &str) -> String {
    let mut depth = 0i32;
    let mut open = None;
    if name.ends_with(']') {
        for (i, c) in name.char_indices().rev() {
            match c {
                ']' => depth += 1,
                '[' => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    match open {
        Some(i) if i > 0 => clip_middle(&format!("{}[…]", &name[..i]), NAME_CHARS),
        _ => clip_middle(name, NAME_CHARS),
    }
}

/// `text` with a line-break opportunity (`<wbr>`) after each `/`, `,` and `)`, so that
/// long shapes, paths and names wrap where they read best.
fn breakable(text: &str) -> impl IntoView {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '/' | ',' | ')') {
            parts.push(text[start..=i].to_string());
            start = i + 1;
        }
    }
    parts.push(text[start..].to_string());
    parts
        .into_iter()
        .map(|p| view! { {p}<wbr /> })
        .collect_view()
}

/// The padding of a buffer: as printed, else its size less its unpadded size.
fn padding(b: &OomBuffer) -> Option<i64> {
    if let Some(p) = &b.padding {
        return Some(p.bytes);
    }
    let (size, unpadded) = (b.size.as_ref()?, b.unpadded_size.as_ref()?);
    (size.bytes > unpadded.bytes).then(|| size.bytes - unpadded.bytes)
}

/// The table of the listed buffers; the columns no buffer fills (GPU messages print no
/// unpadded size, padding or allocation type) are left out.
fn table(buffers: &[OomBuffer]) -> impl IntoView {
    let scale = buffers
        .iter()
        .filter_map(|b| b.size.as_ref())
        .map(|s| s.bytes)
        .max()
        .unwrap_or(0);
    let tpu = buffers
        .iter()
        .any(|b| b.unpadded_size.is_some() || b.padding.is_some() || b.allocation_type.is_some());
    let rows = buffers
        .iter()
        .map(|b| {
            let size = b.size.as_ref().map_or(0, |s| s.bytes);
            let pad = padding(b).unwrap_or(0);
            let op = b.operator.clone().unwrap_or_default();
            let op_name = op.op_name.clone().unwrap_or_default();
            let source_title = match (&op.source_file, op.source_line) {
                (Some(f), Some(l)) => format!("{f}:{l}"),
                (Some(f), None) => f.clone(),
                _ => String::new(),
            };
            // The directory folded, never the file name.
            let source = clip_source(&source_title, FILE_CHARS);
            let shape = b.shape.clone().unwrap_or_default();
            let param = b.entry_parameter.then(|| view! { <span class="oom-tag">"entry parameter"</span> });
            let label = b.xla_label.clone().unwrap_or_default();
            let tpu_cells = tpu.then(|| {
                let expansion = b.expansion.as_ref().map(|x| format!(" ({x}×)"));
                view! {
                    <td class="num">{b.unpadded_size.as_ref().map(size_view)}</td>
                    <td class="num">{padding(b).filter(|p| *p > 0).map(signed)}{expansion}</td>
                }
            });
            let kind = tpu.then(|| view! { <td class="oom-kind">{b.allocation_type.clone()}</td> });
            view! {
                <tr class="oom-buffer" data-rank=b.rank>
                    <td class="num rank">{b.rank}</td>
                    <td class="bar-cell">{bar(size, pad, scale)}</td>
                    <td class="num">{b.size.as_ref().map(size_view)}</td>
                    {tpu_cells}
                    <td class="mono shape" title=shape.clone()>{param}{breakable(&clip_middle(&shape, SHAPE_CHARS))}</td>
                    <td class="mono op" title=op_name.clone()>{breakable(&short_op_name(&op_name))}</td>
                    <td class="mono source" title=source_title>{breakable(&source)}</td>
                    <td class="mono label" title=label.clone()>{breakable(&clip_middle(&label, LABEL_CHARS))}</td>
                    {kind}
                </tr>
            }
        })
        .collect_view();
    let tpu_heads =
        tpu.then(|| view! { <th class="num">"Unpadded"</th><th class="num">"Padding"</th> });
    let kind_head = tpu.then(|| view! { <th>"Allocation type"</th> });
    view! {
        <div class="table-scroll">
            <table class="oom-buffers" class:tpu=tpu>
                <thead>
                    <tr>
                        <th class="num">"#"</th>
                        <th class="bar-cell"><span class="visually-hidden">"Size as a bar"</span></th>
                        <th class="num">"Size"</th>
                        {tpu_heads}
                        <th>"Shape"</th><th>"op_name"</th><th>"Source"</th><th>"XLA label"</th>
                        {kind_head}
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// A horizontal bar for `bytes` of a scale of `scale`, its last `padding` bytes drawn apart.
fn bar(bytes: i64, padding: i64, scale: i64) -> impl IntoView {
    let share = |n: i64, of: i64| {
        if of > 0 {
            (n.max(0) as f64 / of as f64).min(1.0) * 100.0
        } else {
            0.0
        }
    };
    let width = format!("{:.2}%", share(bytes, scale));
    let pad = format!("{:.2}%", share(padding, bytes));
    let title = (padding > 0).then(|| format!("{} of it padding", signed(padding)));
    view! {
        <span class="oom-bar" title=title>
            <span class="oom-fill" style:width=width>
                <span class="oom-pad" style:width=pad></span>
            </span>
        </span>
    }
}

/// One grouping as a list of bars, largest first.
fn groups(heading: &'static str, what: &'static str, groups: Vec<OomGroup>) -> impl IntoView {
    if groups.iter().all(|g| g.key.is_none()) {
        return view! { <p class="oom-none">{format!("No listed buffer names its {what}.")}</p> }
            .into_any();
    }
    let scale = groups.iter().map(|g| g.bytes).max().unwrap_or(0);
    let items = groups
        .into_iter()
        .map(|g| {
            let full = g.key.clone().unwrap_or_default();
            let key = g
                .key
                .as_deref()
                .map_or_else(|| format!("(no {what})"), short_op_name);
            let title = if g.folded.is_empty() {
                full
            } else {
                format!("{full}\nfolds:\n{}", g.folded.join("\n"))
            };
            let pad = if g.unpadded_count == g.buffers.len() {
                g.bytes - g.unpadded
            } else {
                0
            };
            let count = units::count(g.buffers.len(), "buffer");
            let folded =
                (!g.folded.is_empty()).then(|| format!(", {} layers folded", g.folded.len()));
            view! {
                <li class="oom-group" class:unnamed=g.key.is_none()>
                    <span class="oom-group-key mono" title=title>{key}</span>
                    <span class="oom-group-note">{count}{folded}</span>
                    <span class="num">{signed(g.bytes)}</span>
                    {bar(g.bytes, pad, scale)}
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="oom-grouping">
            <h5>{heading}</h5>
            <ol class="oom-group-list">{items}</ol>
        </div>
    }
    .into_any()
}

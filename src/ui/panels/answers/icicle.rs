//! The live bytes over the op_name path as an icicle chart (`#answers-icicle`): one row per
//! path depth, each frame as wide as its bytes, numbered repeats folded into one frame
//! (`×500`) unless unticked. A click on a frame zooms into it, highlights its values in the
//! diagrams and limits the table to them; the trail above zooms back out. The zoom and the
//! table's limit are kept as op_name paths, so that at another step (or folded otherwise)
//! they stand for the same frame with that step's values, or, when it has none there, are
//! dropped with a note. The frame chosen has the what-if's ticks in the bar: its values
//! rematerialised or offloaded.
//!
//! Frames are `<div>`s placed with percentages, with one click handler for all of them;
//! only frames at least [`MIN_WIDTH`] wide and at most [`MAX_DEPTH`] rows deep are in the
//! DOM, at most [`FIRST_FRAMES`] of them until "more frames" adds [`MORE_FRAMES`], and a
//! frame's label is clipped to what its width can show (the title has it whole).

use std::sync::Arc;

use bufscope::answers::groups::{self, OpNode};
use bufscope::text::clip_middle;
use bufscope::units;
use leptos::prelude::*;

use super::{clicked_index, whatif, Ans, Computed};
use crate::ui::panels::live_table::frame_subset;

/// The narrowest frame drawn, as a fraction of the chart's width.
const MIN_WIDTH: f64 = 0.002;
/// Rows below the zoomed frame.
const MAX_DEPTH: usize = 24;
/// Frames in the DOM at first, and how many "more frames" adds.
const FIRST_FRAMES: usize = 250;
const MORE_FRAMES: usize = 500;
/// The most characters of a frame's label.
const LABEL_CHARS: usize = 120;
/// CSS pixels a label character takes, at most (the chart's font is 0.8 em).
const CHAR_PX: f64 = 6.0;
/// A row's height (CSS pixels; the frames are 20 px high).
const ROW_PX: usize = 22;

/// One frame as laid out.
struct Frame {
    /// Child indices from the zoomed frame.
    path: Vec<usize>,
    depth: usize,
    left: f64,
    width: f64,
    label: String,
    bytes: u64,
    count: u32,
}

/// The node at `path` from `root` (as far as the path still leads).
fn node_at<'a>(root: &'a OpNode, path: &[usize]) -> (&'a OpNode, usize) {
    let mut node = root;
    for (i, &c) in path.iter().enumerate() {
        match node.children.get(c) {
            Some(n) => node = n,
            None => return (node, i),
        }
    }
    (node, path.len())
}

/// The labels of the nodes along `path` (child indices from `root`).
fn labels_of(root: &OpNode, path: &[usize]) -> Vec<String> {
    let mut node = root;
    let mut out = Vec::with_capacity(path.len());
    for &c in path {
        let Some(n) = node.children.get(c) else { break };
        out.push(n.label.clone());
        node = n;
    }
    out
}

/// The child indices from `root` of the node at the op_name path `labels`; `None` when the
/// tree has no such node.
fn indices_of(root: &OpNode, labels: &[String]) -> Option<Vec<usize>> {
    let mut node = root;
    let mut out = Vec::with_capacity(labels.len());
    for l in labels {
        let i = node.children.iter().position(|c| &c.label == l)?;
        out.push(i);
        node = &node.children[i];
    }
    Some(out)
}

fn label(n: &OpNode) -> String {
    let name = if n.label.is_empty() {
        "all live values"
    } else {
        &n.label
    };
    let name = clip_middle(name, LABEL_CHARS);
    if n.repeats > 1 {
        format!("{name} ×{}", units::group_digits(u64::from(n.repeats)))
    } else {
        name
    }
}

/// The frames of `top` and below, breadth first (so the cap keeps the upper rows whole), at
/// most `max`; and whether frames wide enough were left out by the cap.
fn layout(top: &OpNode, max: usize) -> (Vec<Frame>, bool) {
    let mut frames = Vec::new();
    let mut queue = std::collections::VecDeque::new();
    queue.push_back((top, Vec::new(), 0usize, 0.0f64, 1.0f64));
    while let Some((n, path, depth, left, width)) = queue.pop_front() {
        if frames.len() >= max {
            return (frames, true);
        }
        frames.push(Frame {
            path: path.clone(),
            depth,
            left,
            width,
            label: label(n),
            bytes: n.bytes,
            count: n.count,
        });
        if depth + 1 >= MAX_DEPTH || n.bytes == 0 {
            continue;
        }
        let mut x = left;
        for (i, c) in n.children.iter().enumerate() {
            let w = width * c.bytes as f64 / n.bytes as f64;
            if w >= MIN_WIDTH {
                let mut p = path.clone();
                p.push(i);
                queue.push_back((c, p, depth + 1, x, w));
            }
            x += w;
        }
    }
    (frames, false)
}

/// What a frame's click does: the values it highlights and limits the table to (child
/// indices from the root) and the frame zoomed to.
#[derive(Clone)]
struct Target {
    full: Vec<usize>,
    zoom: Vec<usize>,
}

#[component]
pub(super) fn Icicle(ans: Ans) -> impl IntoView {
    let fold = RwSignal::new(true);
    // The zoomed frame and the frame limiting the table, as op_name paths from the root.
    let zoom = RwSignal::new(Vec::<String>::new());
    let filtered = StoredValue::new(None::<(Vec<String>, String)>);
    let note = RwSignal::new(None::<String>);
    let max = RwSignal::new(FIRST_FRAMES);
    let el = NodeRef::<leptos::html::Div>::new();
    // A frame limiting the table follows each step at once (the table shows its values).
    let live = ans.live_in(el, move || {
        filtered.try_with_value(Option::is_some) == Some(true)
    });
    let tree = Memo::new(move |_| {
        let live = live.get();
        let shown = ans.focus.shown();
        Computed(Arc::new(groups::op_name_tree(
            &shown.module,
            &live,
            fold.get(),
        )))
    });
    // Another folding makes other frames: the zoom into one is dropped.
    Effect::watch(
        move || fold.get(),
        move |_, _, _| zoom.set(Vec::new()),
        false,
    );
    Effect::new(move |_| follow_tree(ans, tree.get(), zoom, filtered, note));
    let targets = StoredValue::new(Vec::<Target>::new());
    let frames = move || {
        let (view, t) = frames_view(tree.get(), &zoom.get(), max);
        targets.set_value(t);
        view
    };
    let on_click = move |e: leptos::ev::MouseEvent| {
        let Some(i) = clicked_index(&e, ".frame") else {
            return;
        };
        let Some(t) = targets.with_value(|t| t.get(i).cloned()) else {
            return;
        };
        let tree = tree.get_untracked();
        let (n, _) = node_at(&tree, &t.full);
        ans.highlight(n.all_values());
        let subset = frame_subset(&tree, &t.full);
        filtered.set_value(
            subset
                .as_ref()
                .map(|s| (labels_of(&tree, &t.full), s.label.clone())),
        );
        ans.focus.subset.set(subset);
        note.set(None);
        zoom.set(labels_of(&tree, &t.zoom));
    };
    let crumbs = move || trail(ans, tree.get(), zoom);
    view! {
        <div class="answer icicle" id="answers-icicle" node_ref=el
            data-highlighted=move || ans.focus.matches.with(|m| m.len()).to_string()>
            <h4>"By op_name path"</h4>
            <p class="icicle-bar">
                <label><input type="checkbox" id="icicle-fold" prop:checked=move || fold.get()
                    on:change=move |e| fold.set(event_target_checked(&e)) />" fold numbered repeats"</label>
                <span class="icicle-trail">{crumbs}</span>
                {move || frame_ticks(ans)}
                <button type="button" class="button" id="icicle-clear"
                    on:click=move |_| { ans.highlight(Vec::new()); ans.focus.subset.set(None); note.set(None); }>"clear highlight"</button>
            </p>
            {move || note.get().map(|n| view! { <p class="note" id="icicle-note">{n}</p> })}
            <div class="icicle-frames" on:click=on_click>{frames}</div>
        </div>
    }
}

/// The what-if's ticks of the frame chosen (the one limiting the table): its values
/// rematerialised or offloaded.
fn frame_ticks(ans: Ans) -> Option<impl IntoView> {
    let subset = ans.focus.subset.get()?;
    let name = clip_middle(&subset.label, 48);
    Some(view! {
        <span class="icicle-ticks" title=format!("what-if: the values of {}", subset.label)>
            <span class="note">"what if this frame's values were"</span>
            <label>{whatif::group_tick(ans, subset.values.clone(), false)}" remat"</label>
            <label>{whatif::group_tick(ans, subset.values.clone(), true)}" offload"</label>
            <span class="mono">" "{name}</span>
        </span>
    })
}

/// The zoomed frame's path as buttons: "all", then each frame down to it.
fn trail(ans: Ans, tree: Computed<OpNode>, zoom: RwSignal<Vec<String>>) -> impl IntoView {
    let path = indices_of(&tree, &zoom.get()).unwrap_or_default();
    let mut node = &*tree;
    let mut crumbs = vec![(Vec::new(), "all".to_string())];
    for (i, &c) in path.iter().enumerate() {
        let Some(n) = node.children.get(c) else { break };
        crumbs.push((labels_of(&tree, &path[..=i]), label(n)));
        node = n;
    }
    crumbs
        .into_iter()
        .map(|(p, name)| {
            view! {
                <button type="button" class="crumb" on:click=move |_| {
                    if p.is_empty() { ans.focus.subset.set(None); }
                    zoom.set(p.clone())
                }>{name}</button>
            }
        })
        .collect_view()
}

/// At a new tree (another step, or folded otherwise): the zoom and the frame limiting the
/// table follow their op_name paths into it; the frame's values are those of the new step,
/// or, where the path has no values there, the limit and the highlight are dropped and
/// `note` says so. A limit the table's chip has cleared is forgotten.
fn follow_tree(
    ans: Ans,
    tree: Computed<OpNode>,
    zoom: RwSignal<Vec<String>>,
    filtered: StoredValue<Option<(Vec<String>, String)>>,
    note: RwSignal<Option<String>>,
) {
    if note.get_untracked().is_some() {
        note.set(None);
    }
    let z = zoom.get_untracked();
    if !z.is_empty() && indices_of(&tree, &z).is_none() {
        zoom.set(Vec::new());
    }
    let Some((labels, chip)) = filtered.get_value() else {
        return;
    };
    let current = ans
        .focus
        .subset
        .with_untracked(|s| s.as_ref().map(|s| s.label.clone()));
    if current.as_deref() != Some(chip.as_str()) {
        filtered.set_value(None);
        return;
    }
    let subset = indices_of(&tree, &labels).and_then(|p| frame_subset(&tree, &p));
    let step = ans.step.get_untracked();
    match subset {
        Some(s) => {
            if ans.focus.matches.with_untracked(|m| **m != *s.values) {
                ans.highlight(s.values.to_vec());
            }
            filtered.set_value(Some((labels, s.label.clone())));
            if ans.focus.subset.with_untracked(|c| c.as_ref() != Some(&s)) {
                ans.focus.subset.set(Some(s));
            }
        }
        None => {
            filtered.set_value(None);
            ans.highlight(Vec::new());
            ans.focus.subset.set(None);
            note.set(Some(format!(
                "{chip} has no live values at step {}: the table shows every live value.",
                units::group_digits(u64::from(step))
            )));
        }
    }
}

/// The frames below the zoomed one, placed in rows, with "more frames" when the cap left
/// some out; and what each frame's click does, by its `data-i`.
fn frames_view(
    tree: Computed<OpNode>,
    zoom: &[String],
    max: RwSignal<usize>,
) -> (impl IntoView, Vec<Target>) {
    let path = indices_of(&tree, zoom).unwrap_or_default();
    let (top, _) = node_at(&tree, &path);
    let (rows, capped) = layout(top, max.get());
    let depth = rows.iter().map(|f| f.depth + 1).max().unwrap_or(1);
    // The chart is at most the window wide.
    let chart_px = window()
        .inner_width()
        .ok()
        .and_then(|w| w.as_f64())
        .unwrap_or(1280.0);
    let mut targets = Vec::with_capacity(rows.len());
    let frames = rows
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            // The top frame zooms out one level; any other zooms into itself.
            let mut full = path.clone();
            full.extend(&f.path);
            let zoom = if f.path.is_empty() {
                path[..path.len().saturating_sub(1)].to_vec()
            } else {
                full.clone()
            };
            targets.push(Target { full, zoom });
            let title = format!(
                "{} · {} · {} values",
                f.label,
                units::exact_bytes(f.bytes),
                units::group_digits(u64::from(f.count))
            );
            let fits = (f.width * chart_px / CHAR_PX) as usize;
            let text = if fits >= 2 {
                clip_middle(&f.label, fits)
            } else {
                String::new()
            };
            view! {
                <div class="frame" data-i=i.to_string() data-bytes=f.bytes.to_string() data-count=f.count.to_string()
                    data-depth=f.depth.to_string() title=title
                    style:left=format!("{:.4}%", f.left * 100.0)
                    style:width=format!("{:.4}%", f.width * 100.0)
                    style:top=format!("{}px", f.depth * ROW_PX)>
                    {text}
                </div>
            }
        })
        .collect_view();
    let more = capped.then(|| {
        view! {
            <button type="button" class="button answers-more" id="icicle-more"
                on:click=move |_| max.update(|m| *m += MORE_FRAMES)>"more frames"</button>
        }
    });
    let view = view! {
        <div class="icicle-rows" style:height=format!("{}px", depth * ROW_PX)>{frames}</div>
        {more}
    };
    (view, targets)
}

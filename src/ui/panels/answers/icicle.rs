//! The live bytes over the op_name path as an icicle chart (`#answers-icicle`): one row per
//! path depth, each frame as wide as its bytes, numbered repeats folded into one frame
//! (`×500`) unless unticked. A click on a frame zooms into it and highlights its values in
//! the diagrams; the trail above zooms back out.
//!
//! Frames are `<div>`s placed with percentages; only frames at least [`MIN_WIDTH`] wide and
//! at most [`MAX_DEPTH`] rows deep are in the DOM, and at most [`MAX_FRAMES`] of them.

use std::sync::Arc;

use bufscope::answers::groups::{self, OpNode};
use bufscope::text::clip_middle;
use leptos::prelude::*;

use super::{Ans, Computed};
use crate::ui::fmt;
use crate::ui::panels::peak_table::frame_subset;

/// The narrowest frame drawn, as a fraction of the chart's width.
const MIN_WIDTH: f64 = 0.002;
/// Rows below the zoomed frame.
const MAX_DEPTH: usize = 24;
const MAX_FRAMES: usize = 600;
/// The most characters of a frame's label.
const LABEL_CHARS: usize = 120;
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

fn label(n: &OpNode) -> String {
    let name = if n.label.is_empty() {
        "all live values"
    } else {
        &n.label
    };
    let name = clip_middle(name, LABEL_CHARS);
    if n.repeats > 1 {
        format!("{name} ×{}", fmt::grouped(u64::from(n.repeats)))
    } else {
        name.into_owned()
    }
}

/// The frames of `top` and below, breadth first (so the cap keeps the upper rows whole).
fn layout(top: &OpNode) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut queue = std::collections::VecDeque::new();
    queue.push_back((top, Vec::new(), 0usize, 0.0f64, 1.0f64));
    while let Some((n, path, depth, left, width)) = queue.pop_front() {
        if frames.len() >= MAX_FRAMES {
            break;
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
    frames
}

#[component]
pub(super) fn Icicle(ans: Ans) -> impl IntoView {
    let fold = RwSignal::new(true);
    // The zoomed frame: child indices from the root.
    let zoom = RwSignal::new(Vec::<usize>::new());
    let tree = Memo::new(move |_| {
        let live = ans.live.get();
        let shown = ans.focus.shown();
        Computed(Arc::new(groups::op_name_tree(
            &shown.module,
            &live,
            fold.get(),
        )))
    });
    Effect::new(move |_| {
        fold.track();
        zoom.set(Vec::new());
    });
    let frames = move || frames_view(ans, tree.get(), zoom);
    let trail = move || {
        let tree = tree.get();
        let path = zoom.get();
        let mut node = &*tree;
        let mut crumbs = vec![(Vec::new(), "all".to_string())];
        for (i, &c) in path.iter().enumerate() {
            let Some(n) = node.children.get(c) else { break };
            crumbs.push((path[..=i].to_vec(), label(n)));
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
    };
    view! {
        <div class="answer icicle" id="answers-icicle"
            data-highlighted=move || ans.focus.matches.with(|m| m.len()).to_string()>
            <h4>"By op_name path"</h4>
            <p class="icicle-bar">
                <label><input type="checkbox" id="icicle-fold" prop:checked=move || fold.get()
                    on:change=move |e| fold.set(event_target_checked(&e)) />" fold numbered repeats"</label>
                <span class="icicle-trail">{trail}</span>
                <button type="button" class="button" id="icicle-clear"
                    on:click=move |_| { ans.highlight(Vec::new()); ans.focus.subset.set(None); }>"clear highlight"</button>
            </p>
            {frames}
        </div>
    }
}

/// The frames below the zoomed one, placed in rows.
fn frames_view(ans: Ans, tree: Computed<OpNode>, zoom: RwSignal<Vec<usize>>) -> impl IntoView {
    let path = zoom.get();
    let (top, _) = node_at(&tree, &path);
    let rows = layout(top);
    let depth = rows.iter().map(|f| f.depth + 1).max().unwrap_or(1);
    let frames = rows
        .into_iter()
        .map(|f| {
            // The top frame zooms out one level; any other zooms into itself.
            let mut full = path.clone();
            full.extend(&f.path);
            let target = if f.path.is_empty() {
                path[..path.len().saturating_sub(1)].to_vec()
            } else {
                full.clone()
            };
            let title = format!(
                "{} · {} · {} values",
                f.label,
                fmt::bytes(f.bytes),
                fmt::grouped(u64::from(f.count))
            );
            let on_click = {
                let tree = tree.clone();
                move |_| {
                    let (n, _) = node_at(&tree, &full);
                    ans.highlight(n.all_values());
                    ans.focus.subset.set(frame_subset(&tree, &full));
                    zoom.set(target.clone());
                }
            };
            view! {
                <div class="frame" data-bytes=f.bytes.to_string() data-depth=f.depth.to_string()
                    title=title on:click=on_click
                    style:left=format!("{:.4}%", f.left * 100.0)
                    style:width=format!("{:.4}%", f.width * 100.0)
                    style:top=format!("{}px", f.depth * ROW_PX)>
                    {f.label}
                </div>
            }
        })
        .collect_view();
    view! {
        <div class="icicle-rows" style:height=format!("{}px", depth * ROW_PX)>{frames}</div>
    }
}

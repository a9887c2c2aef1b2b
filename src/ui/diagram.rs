//! The diagrams of a module: one per memory space, each with its occupied-bytes curve.

use leptos::prelude::*;

use super::canvas::SpaceCanvas;
use super::state::Focus;

#[component]
pub fn Diagrams(focus: Focus) -> impl IntoView {
    let shown = focus.shown();
    let canvases = shown
        .analysis
        .spaces
        .iter()
        .map(|s| view! { <SpaceCanvas shown=shown.clone() color=s.color /> })
        .collect_view();
    view! { <div class="diagrams">{canvases}</div> }
}

//! One module on screen: the header, a sticky tool bar (search box, hovered value), a
//! diagram per memory space, the answers for the chosen step
//! ([`super::panels::Answers`]), then the table of values live at the peak (with the values
//! without a live range) beside the details of the selected value, all sharing one
//! [`Focus`]. Owns the layout only; each part is its own component.

use std::sync::Arc;

use leptos::prelude::*;

use super::diagram::Diagrams;
use super::export::ExportMenu;
use super::panels::{Answers, Details, Header, HoverLine, PeakTable, SearchBox};
use super::state::{Focus, Shown};

#[component]
pub fn Workspace(shown: Arc<Shown>) -> impl IntoView {
    let focus = Focus::new(shown);
    super::hash::follow(focus);
    view! {
        <article class="module">
            <Header focus=focus />
            <div class="toolbar">
                <SearchBox focus=focus />
                <HoverLine focus=focus />
                <ExportMenu focus=focus />
            </div>
            <Diagrams focus=focus />
            <Answers focus=focus />
            <div class="panes">
                <PeakTable focus=focus />
                <Details focus=focus />
            </div>
        </article>
    }
}

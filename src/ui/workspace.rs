//! One module on screen: the header, the search box, a diagram per memory space, the table
//! of values live at the peak, the values without a live range, and the details of the
//! selected value, all sharing one [`Focus`].

use std::sync::Arc;

use leptos::prelude::*;

use super::diagram::Diagrams;
use super::panels::Header;
use super::state::{Focus, Shown};

#[component]
pub fn Workspace(shown: Arc<Shown>) -> impl IntoView {
    let focus = Focus::new(shown);
    view! {
        <article class="module">
            <Header focus=focus />
            <Diagrams focus=focus />
        </article>
    }
}

//! Capacity and headroom: a device from [`capacity::offers`] (a TPU's usable HBM as its
//! compiler reports it, or its published HBM; a GPU's published memory or JAX's 75 % of it),
//! each said with its bytes ("TPU v5e: 15.75 GiB usable by XLA of 16 GiB HBM"), or a size
//! typed (shown as typed), and the
//! verdict at the space's peak ("exceeds by X" / "X of headroom"). The choice is the
//! space's [`Focus::capacity`](crate::ui::state::Focus::capacity), which its curve draws as
//! a line; choosing another space shows that space's own choice.

use std::sync::Arc;

use bufscope::answers::capacity::{self, Capacity};
use leptos::prelude::*;

use super::Ans;

#[component]
pub(super) fn CapacityVerdict(ans: Ans) -> impl IntoView {
    let focus = ans.focus;
    // The capacity of the space answered for, as stored.
    let stored = move || focus.capacity.with(|m| m.get(&ans.space.get()).cloned());
    // A text that is neither a size nor a device, with the space it was typed for.
    let error = RwSignal::new(Option::<(u32, String)>::None);
    let devices = capacity::offers()
        .into_iter()
        .map(|o| {
            let text = format!("{}: {}", o.name, o.what);
            view! { <option value=o.name>{text}</option> }
        })
        .collect_view();
    let choose = move |text: String| {
        let color = ans.space.get_untracked();
        let text = text.trim();
        let chosen: Result<Option<Capacity>, String> = if text.is_empty() {
            Ok(None)
        } else {
            capacity::parse_capacity(text).map(Some)
        };
        match chosen {
            Ok(c) => {
                error.set(None);
                focus.capacity.update(|m| {
                    let m = Arc::make_mut(m);
                    match c {
                        Some(c) => m.insert(color, c.on(color)),
                        None => m.remove(&color),
                    };
                });
            }
            Err(e) => error.set(Some((color, e))),
        }
    };
    let on_device = move |e: leptos::ev::Event| choose(event_target_value(&e));
    let on_size = move |e: leptos::ev::Event| choose(event_target_value(&e));
    // What the controls show for the stored choice: a device in the list, a size in the box.
    let device = move || {
        stored()
            .filter(|c| c.device.is_some())
            .map_or_else(String::new, |c| c.label)
    };
    let size = move || {
        stored()
            .filter(|c| c.device.is_none())
            .map_or_else(String::new, |c| c.label)
    };
    let verdict = move || {
        let color = ans.space.get();
        if let Some((_, e)) = error.get().filter(|(c, _)| *c == color) {
            return Some(view! { <p class="capacity-error" role="alert">{e}</p> }.into_any());
        }
        let c = stored()?;
        let v = ans.with_space(|_, s| capacity::verdict(s.peak_bytes, &c))?;
        Some(
            view! {
                <p class="capacity-verdict" data-fits=v.fits.to_string()
                    data-capacity=v.capacity_bytes.to_string()>{v.sentence}</p>
            }
            .into_any(),
        )
    };
    view! {
        <div class="answer" id="answers-capacity">
            <h4>"Capacity"</h4>
            <div class="capacity-inputs">
                <select id="capacity-device" aria-label="device" on:change=on_device prop:value=device>
                    <option value="">"a device…"</option>
                    {devices}
                </select>
                <input id="capacity-size" type="text" placeholder="or a size: 16GiB, 40e9"
                    aria-label="capacity" on:change=on_size prop:value=size />
            </div>
            {verdict}
            <p class="note">"Drawn as a line on the space's curve. A TPU is what XLA can use of its HBM, as its out-of-memory errors print it (TPU v5e: 15.75 GiB of 16 GiB), its whole HBM beside it; a GPU its published memory, and beside it the 75 % JAX preallocates by default. A size typed is shown as typed. An error message read with its dump sets its own figure."</p>
        </div>
    }
}

//! Capacity and headroom: a device from [`capacity::DEVICES`] or a size typed, and the
//! verdict at the space's peak ("exceeds by X" / "X of headroom").

use bufscope::answers::capacity::{self, Capacity, DEVICES};
use leptos::prelude::*;

use super::Ans;
use crate::ui::fmt;

#[component]
pub(super) fn CapacityVerdict(ans: Ans) -> impl IntoView {
    // What the user chose: a device name or a typed size, parsed by the core.
    let asked = RwSignal::new(Option::<Result<Capacity, String>>::None);
    let devices = DEVICES
        .iter()
        .map(|d| {
            view! {
                <option value=d.name>{format!("{} · {} {}", d.name, fmt::human(d.bytes), d.memory)}</option>
            }
        })
        .collect_view();
    let choose = move |text: String| {
        let text = text.trim().to_string();
        asked.set((!text.is_empty()).then(|| capacity::parse_capacity(&text)));
    };
    let on_device = move |e: leptos::ev::Event| choose(event_target_value(&e));
    let on_size = move |e: leptos::ev::Event| choose(event_target_value(&e));
    let verdict = move || match asked.get()? {
        Ok(c) => {
            let v = ans.with_space(|_, s| capacity::verdict(s.peak_bytes, &c))?;
            Some(view! {
                <p class="capacity-verdict" data-fits=v.fits.to_string()
                    data-capacity=v.capacity_bytes.to_string()>{v.sentence}</p>
            }
            .into_any())
        }
        Err(e) => Some(view! { <p class="capacity-error" role="alert">{e}</p> }.into_any()),
    };
    view! {
        <div class="answer" id="answers-capacity">
            <h4>"Capacity"</h4>
            <div class="capacity-inputs">
                <select id="capacity-device" aria-label="device" on:change=on_device>
                    <option value="">"a device…"</option>
                    {devices}
                </select>
                <input id="capacity-size" type="text" placeholder="or a size: 16GiB, 40e9"
                    aria-label="capacity" on:change=on_size />
            </div>
            {verdict}
            <p class="note">"Published figures; the usable share is smaller (runtime, code, allocator; JAX on GPU preallocates 75 % by default)."</p>
        </div>
    }
}

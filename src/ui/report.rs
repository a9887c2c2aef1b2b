//! What the page says about reads, above the modules: the progress bar of a read under way
//! (with Cancel), the report of the last read (what was read, what could not be, its
//! timings), and how far the `Used values` read after the diagrams has got.

use bufscope::units;
use std::sync::Arc;

use leptos::prelude::*;

use super::app::{AppState, Report, Timings};
use super::load::cancel;

/// The progress bar of a read under way, with its Cancel button. Made once per read (its
/// numbers update in place), so that a click on Cancel is never lost to a re-render.
pub fn progress_view(st: AppState) -> impl IntoView {
    let percent = move || {
        st.reading
            .with(|r| r.as_ref().map_or(100.0, |r| r.fraction * 100.0))
            .clamp(0.0, 100.0)
    };
    let what = move || {
        st.reading.with(|r| {
            r.as_ref().map(|r| {
                let verb = if r.analysing { "Analysing" } else { "Reading" };
                format!("{verb} {} ({})", units::count(r.files, "file"), units::human_bytes(r.bytes))
            })
        })
    };
    view! {
        <section class="progress" role="status" aria-label="Reading">
            <progress max="100" prop:value=move || format!("{:.1}", percent())></progress>
            <span class="percent">{move || format!("{:.0}%", percent())}</span>
            <span class="what">{what}</span>
            <button type="button" class="button secondary small cancel" title="Stop reading (Esc)"
                on:click=move |_| cancel(st)>"Cancel"</button>
        </section>
    }
}

/// While the modules' `Used values` are read after their diagrams: how far.
pub fn details_view(fraction: f64) -> impl IntoView {
    let percent = (fraction * 100.0).clamp(0.0, 100.0);
    view! {
        <p class="details-status" id="details-status" role="status">
            {format!("Reading op_names, source lines and uses… {percent:.0}%")}
        </p>
    }
}

/// The report of the last read: what was read, what could not be, and (when this read
/// opened nothing) that the module below is the one read before. Brought into view when
/// the page is scrolled past it and `st` asks ([`AppState::reveal_report`]).
pub fn report_view(st: AppState, report: Arc<Report>) -> impl IntoView {
    let section = NodeRef::<leptos::html::Section>::new();
    st.reveal_report.on(move |()| {
        if let Some(el) = section.get_untracked() {
            if el.get_bounding_client_rect().top() < 0.0 {
                el.scroll_into_view();
            }
        }
    });
    let errors =
        (!report.errors.is_empty()).then(|| {
            let heading = if report.opened {
                "Some files could not be read as buffer-assignment dumps"
            } else if report.errors.len() == 1 {
                "Nothing was opened:"
            } else {
                "Nothing was opened; none of these files could be read as a buffer-assignment dump:"
            };
            // With a module open, one line over the dock: the list folded, the message closable.
            let opened = report.opened;
            let count = opened.then(|| format!(" ({})", report.errors.len()));
            let closed = RwSignal::new(false);
            let list = report.errors.clone();
            move || {
                (!closed.get()).then(|| {
                let items = list.iter().map(|e| view! { <li>{e.clone()}</li> }).collect_view();
                view! {
                    <div class="message error" class:compact=opened role="alert">
                        <button type="button" class="message-close" aria-label="Close this message"
                            title="Close" on:click=move |_| closed.set(true)>"×"</button>
                        <details open=!opened>
                            <summary><strong>{heading}</strong>{count.clone()}</summary>
                            <ul>{items}</ul>
                        </details>
                    </div>
                }
            })
            }
        });
    let kept = report.kept.clone().map(|what| {
        view! {
            <p class="message kept">{format!("Still showing what was read before ({what}).")}</p>
        }
    });
    let t = report.timings;
    let ms = move |f: fn(&Timings) -> f64| t.map(|t| format!("{:.0}", f(&t)));
    let title = t.map(|t| {
        let complete = if t.complete > 0.0 {
            let by = if t.uses_worker > 0.0 { " (by a worker)" } else { "" };
            format!("; op_names, source lines and uses read after the diagrams{by}, all in {:.0} ms", t.complete)
        } else {
            String::new()
        };
        format!(
            "Read in {:.0} ms ({:.0} ms of it parsing), joined in {:.0} ms, analysed in {:.0} ms{complete}",
            t.read, t.parse, t.join, t.analyse
        )
    });
    view! {
        <section node_ref=section class="report" aria-live="polite" data-read-ms=ms(|t| t.read)
            data-parse-ms=ms(|t| t.parse)
            data-join-ms=ms(|t| t.join) data-analyse-ms=ms(|t| t.analyse)
            data-complete-ms=ms(|t| t.complete) data-uses-worker-bytes=ms(|t| t.uses_worker)>
            <p class="files-line" title=title>{report.line.clone()}</p>
            {errors}
            {kept}
        </section>
    }
}

//! The view of a module as the page's URL hash holds it ([`ViewState`] ↔ text), so that a
//! view can be bookmarked or sent and restored by opening the same dump with that URL.
//!
//! The hash is `key=value` pairs joined by `&`, every key optional, in this order:
//!
//! ```text
//! module=NAME&space=1&steps=10.5,200&bytes=0,4096&step=57&value=NAME&search=TEXT&capacity=0:v5e;1:16GiB
//! ```
//!
//! Only names the user chose (the module, the selected value, the search text, a capacity
//! typed or picked) and numbers of the view (a memory space's colour, the zoom window, a
//! step) are written: nothing else of the dump. Names are percent-encoded as UTF-8 (all but
//! `A–Z a–z 0–9 - . _ ~ ! $ ( ) * / : @`). Reading is tolerant: an unknown key is ignored, a
//! field that does not read (a bad number, an empty range, a bad escape) is left at its
//! default, and no text makes it panic.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::collections::BTreeMap;

/// What the page's URL hash says about the view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewState {
    /// The module's name.
    pub module: Option<String>,
    /// The memory space (colour) the view is about: the zoomed one, else the selected value's.
    pub space: Option<u32>,
    /// The zoom window of that space's diagram.
    pub zoom: Option<Zoom>,
    /// The chosen step (the answers' step).
    pub step: Option<u32>,
    /// The selected value's name.
    pub value: Option<String>,
    /// The search text (empty: none).
    pub search: String,
    /// The capacity chosen per memory space (colour → the text a capacity reads from: a
    /// size as typed or a device's name).
    pub capacity: BTreeMap<u32, String>,
}

/// A diagram's window: the steps `[x0, x1)` and the bytes `[y0, y1)` in view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zoom {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

/// Bytes escaped in a name: all but letters, digits and `-._~!$()*/:@`, which a URL's
/// fragment may hold as they are.
const ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'/')
    .remove(b':')
    .remove(b'@');

/// `text` percent-encoded as UTF-8 (the bytes of [`ESCAPED`] as `%XX`).
pub fn percent_encode(text: &str) -> String {
    utf8_percent_encode(text, ESCAPED).to_string()
}

/// `text` with its `%XX` escapes decoded; a `%` not followed by two hex digits stays as it
/// is, and bytes that are not UTF-8 become U+FFFD.
pub fn percent_decode(text: &str) -> String {
    percent_decode_str(text).decode_utf8_lossy().into_owned()
}

impl Zoom {
    /// The window if its four numbers are finite and each range is not empty.
    pub fn checked(self) -> Option<Zoom> {
        let ok = [self.x0, self.x1, self.y0, self.y1]
            .iter()
            .all(|v| v.is_finite())
            && self.x0 < self.x1
            && self.y0 < self.y1;
        ok.then_some(self)
    }
}

/// `a,b` as two finite numbers.
fn range(text: &str) -> Option<(f64, f64)> {
    let (a, b) = text.split_once(',')?;
    let (a, b) = (a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?);
    (a.is_finite() && b.is_finite()).then_some((a, b))
}

/// A name: decoded, `None` when empty.
fn name(text: &str) -> Option<String> {
    Some(percent_decode(text)).filter(|s| !s.is_empty())
}

/// `0:v5e;1:16GiB`: entries that do not read are skipped, a later one for a colour wins.
fn capacities(text: &str) -> BTreeMap<u32, String> {
    text.split(';')
        .filter_map(|entry| {
            let (color, label) = entry.split_once(':')?;
            let label = percent_decode(label);
            let color = color.trim().parse().ok()?;
            (!label.trim().is_empty()).then_some((color, label))
        })
        .collect()
}

impl ViewState {
    /// Reads a hash (with or without its leading `#`). Never fails: what does not read is
    /// left at its default.
    pub fn from_hash(hash: &str) -> ViewState {
        let hash = hash.strip_prefix('#').unwrap_or(hash);
        let mut st = ViewState::default();
        let (mut steps, mut bytes) = (None, None);
        for pair in hash.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "module" => st.module = name(value),
                "space" => st.space = value.parse().ok(),
                "steps" => steps = range(value),
                "bytes" => bytes = range(value),
                "step" => st.step = value.parse().ok(),
                "value" => st.value = name(value),
                "search" => st.search = percent_decode(value),
                "capacity" => st.capacity = capacities(value),
                _ => {}
            }
        }
        if let (Some((x0, x1)), Some((y0, y1))) = (steps, bytes) {
            st.zoom = Zoom { x0, x1, y0, y1 }.checked();
        }
        st
    }

    /// The hash for this view, without the leading `#` (empty for the default view). A
    /// zoom window that is not [`Zoom::checked`] and empty names are left out.
    pub fn to_hash(&self) -> String {
        let mut pairs: Vec<String> = Vec::new();
        push_name(&mut pairs, "module", self.module.as_deref());
        if let Some(s) = self.space {
            pairs.push(format!("space={s}"));
        }
        if let Some(z) = self.zoom.and_then(Zoom::checked) {
            pairs.push(format!("steps={},{}", z.x0, z.x1));
            pairs.push(format!("bytes={},{}", z.y0, z.y1));
        }
        if let Some(t) = self.step {
            pairs.push(format!("step={t}"));
        }
        push_name(&mut pairs, "value", self.value.as_deref());
        push_name(&mut pairs, "search", Some(&self.search));
        let caps: Vec<String> = self
            .capacity
            .iter()
            .filter(|(_, label)| !label.trim().is_empty())
            .map(|(c, label)| format!("{c}:{}", percent_encode(label)))
            .collect();
        if !caps.is_empty() {
            pairs.push(format!("capacity={}", caps.join(";")));
        }
        pairs.join("&")
    }
}

/// `key=NAME` (encoded) added to `pairs` unless the name is absent or empty.
fn push_name(pairs: &mut Vec<String>, key: &str, v: Option<&str>) {
    if let Some(v) = v.filter(|v| !v.is_empty()) {
        pairs.push(format!("{key}={}", percent_encode(v)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_full_view_reads_back() {
        let st = ViewState {
            module: Some("jit_train step/α".into()),
            space: Some(1),
            zoom: Some(Zoom {
                x0: 10.5,
                x1: 200.0,
                y0: 0.0,
                y1: 4096.0,
            }),
            step: Some(57),
            value: Some("fusion.12{0}".into()),
            search: "dot.*&x=1;#%".into(),
            capacity: BTreeMap::from([(0, "TPU v5e".into()), (1, "16 GiB".into())]),
        };
        let hash = st.to_hash();
        // Checked by hand against the encoding rules above.
        assert_eq!(
            hash,
            "module=jit_train%20step/%CE%B1&space=1&steps=10.5,200&bytes=0,4096&step=57\
             &value=fusion.12%7B0%7D&search=dot.*%26x%3D1%3B%23%25\
             &capacity=0:TPU%20v5e;1:16%20GiB"
        );
        assert_eq!(ViewState::from_hash(&format!("#{hash}")), st);
    }

    #[test]
    fn the_default_view_is_the_empty_hash() {
        assert_eq!(ViewState::default().to_hash(), "");
        assert_eq!(ViewState::from_hash(""), ViewState::default());
        assert_eq!(ViewState::from_hash("#"), ViewState::default());
    }

    #[test]
    fn junk_gives_defaults_field_by_field() {
        let st = ViewState::from_hash(
            "#space=-1&step=1e3&steps=5,2&bytes=0,10&value=&module=m&zzz&==&capacity=x:1;2:;3:4K",
        );
        assert_eq!(st.space, None);
        assert_eq!(st.step, None);
        assert_eq!(st.zoom, None, "steps 5..2 is an empty range");
        assert_eq!(st.value, None);
        assert_eq!(st.module.as_deref(), Some("m"));
        assert_eq!(st.capacity, BTreeMap::from([(3, "4K".to_string())]));
        let st = ViewState::from_hash("steps=0,NaN&bytes=0,1&search=%zz%4&module=%FF");
        assert_eq!(st.zoom, None);
        assert_eq!(st.search, "%zz%4");
        assert_eq!(st.module.as_deref(), Some("\u{FFFD}"));
        let st = ViewState::from_hash("steps=0,inf&bytes=0,1");
        assert_eq!(st.zoom, None);
    }

    #[test]
    fn escapes_decode_once() {
        assert_eq!(percent_decode("a%2541"), "a%41");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%e2%82%ac"), "€");
        assert_eq!(percent_encode("a b+c"), "a%20b%2Bc");
    }

    fn finite() -> impl Strategy<Value = f64> {
        prop_oneof![
            -1e12..1e12f64,
            Just(0.0),
            (0u64..1 << 40).prop_map(|n| n as f64)
        ]
    }

    fn zoom() -> impl Strategy<Value = Option<Zoom>> {
        proptest::option::of((finite(), 1e-6..1e9f64, finite(), 1e-6..1e9f64).prop_map(
            |(x0, w, y0, h)| Zoom {
                x0,
                x1: x0 + w,
                y0,
                y1: y0 + h,
            },
        ))
        .prop_map(|z| z.and_then(Zoom::checked))
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(any::<char>(), 0..12).prop_map(|c| c.into_iter().collect())
    }

    fn some_name() -> impl Strategy<Value = Option<String>> {
        proptest::option::of(text()).prop_map(|n| n.filter(|n| !n.is_empty()))
    }

    fn view_state() -> impl Strategy<Value = ViewState> {
        (
            (some_name(), proptest::option::of(any::<u32>()), zoom()),
            (proptest::option::of(any::<u32>()), some_name(), text()),
            proptest::collection::btree_map(any::<u32>(), text(), 0..4),
        )
            .prop_map(|((module, space, zoom), (step, value, search), capacity)| {
                let capacity = capacity
                    .into_iter()
                    .filter(|(_, l)| !l.trim().is_empty())
                    .collect();
                ViewState {
                    module,
                    space,
                    zoom,
                    step,
                    value,
                    search,
                    capacity,
                }
            })
    }

    proptest! {
        #[test]
        fn every_view_reads_back(st in view_state()) {
            let hash = st.to_hash();
            prop_assert!(hash.bytes().all(|b| b.is_ascii_graphic()), "{hash:?}");
            prop_assert_eq!(ViewState::from_hash(&hash), st);
        }

        #[test]
        fn any_text_reads_without_panic(s in text(), t in "[a-z=&,;:%0-9.#-]{0,40}") {
            let _ = ViewState::from_hash(&s);
            let st = ViewState::from_hash(&t);
            // What was read writes a hash that reads back the same.
            prop_assert_eq!(ViewState::from_hash(&st.to_hash()), st);
        }
    }
}

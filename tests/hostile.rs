//! Hostile text in a dump: instruction names, metadata (op_name, source_file) and the file
//! name that carry HTML, script and attribute-breaking quotes. Natively the text reaches
//! two outputs: the SVG of `bufscope render` (plotters' SVG backend draws the module name
//! and block labels as `<text>`) and the JSON of `bufscope summary --json`. Both must keep
//! the text as text: the SVG well-formed XML with no element or attribute from the dump,
//! its `<text>` contents equal to the raw names; the JSON valid, with the raw names back
//! after parsing.
//!
//! The browser side (the same dump dropped on the page) is tests/e2e/hardening.test.mjs,
//! which builds its dump the same way.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use bufscope::{analysis, load_files, render, summary::Summary};

const TINY: &str = include_str!("fixtures/cpu/jax0.6.2/cpu_tiny.buffer-assignment.txt");

/// Instruction names may hold anything but ` {}<>:,` and tab (the parser's delimiters).
const NAME_ATTR: &str = r#"a"onmouseover="window.__pwned=1;"x"#;
const NAME_ENTITY: &str = "&lt;img/src=x/onerror=window.__pwned=1&gt;&amp;";
const NAME_JS: &str = r#"');window.__pwned=1;//'"#;
/// Metadata strings hold anything (CEscaped quotes).
const OP_IMG: &str = "<img src=x onerror=window.__pwned=1>";
const OP_SVG: &str = r#""'><svg onload=window.__pwned=1>"#;
const SRC_SCRIPT: &str = "</td><script>window.__pwned=1</script>";
/// The module is named after the file.
const MODULE: &str = r#"<svg onload=window.__pwned=1>&amp;"'"#;

/// `cpu_tiny` with its three values renamed and its metadata replaced by HTML, plus a line
/// of markup that fits no rule (a warning).
fn hostile_dump() -> String {
    let escaped_op_svg = OP_SVG.replace('\\', r"\\").replace('"', r#"\""#);
    let out = TINY
        .replace("Arg_1.2", NAME_ATTR)
        .replace("Arg_0.1", NAME_ENTITY)
        .replace("broadcast_add_fusion", NAME_JS)
        .replace(
            r#"metadata={op_name="y"}"#,
            &format!(r#"metadata={{op_name="{OP_IMG}" source_file="{SRC_SCRIPT}" source_line=7}}"#),
        )
        .replace(
            r#"metadata={op_name="x"}"#,
            &format!(r#"metadata={{op_name="{escaped_op_svg}"}}"#),
        )
        .replace(
            "source_file=\"/home/user/models/programs.py\"",
            &format!("source_file=\"{SRC_SCRIPT}\""),
        )
        .replace(
            "Total bytes used:",
            "<script>window.__pwned=1</script><img src=x onerror=window.__pwned=1>\nTotal bytes used:",
        );
    for name in [NAME_ATTR, NAME_ENTITY, NAME_JS, OP_IMG, SRC_SCRIPT] {
        assert!(out.contains(name), "the hostile dump lost {name}");
    }
    out
}

fn file_name() -> String {
    format!("{MODULE}.buffer-assignment.txt")
}

fn load() -> (bufscope::model::Module, bufscope::analysis::Analysis) {
    let dump = hostile_dump();
    let name = file_name();
    let load = common::load_both_ways(&[(name.as_str(), dump.as_bytes())], "hostile dump");
    assert!(load.errors.is_empty(), "errors: {:?}", load.errors);
    assert_eq!(load.modules.len(), 1);
    let m = load.modules.into_iter().next().unwrap();
    let a = analysis::analyze(&m);
    (m, a)
}

#[test]
fn the_hostile_dump_reads_with_its_names_intact() {
    let (m, _) = load();
    assert_eq!(m.name, MODULE);
    assert_eq!(m.values.len(), 3);
    let names: BTreeSet<String> = m.values.iter().map(|v| m.value_name(v)).collect();
    for n in [NAME_ATTR, NAME_ENTITY, NAME_JS] {
        assert!(names.contains(n), "{n:?} not among {names:?}");
    }
    let ops: BTreeSet<String> = m
        .values
        .iter()
        .map(|v| m.str(m.instruction(v).op_name).to_string())
        .collect();
    assert!(ops.contains(OP_IMG), "{ops:?}");
    assert!(ops.contains(OP_SVG), "{ops:?}");
    let sources: BTreeSet<String> = m
        .values
        .iter()
        .map(|v| m.str(m.instruction(v).source_file).to_string())
        .collect();
    assert!(sources.contains(SRC_SCRIPT), "{sources:?}");
    assert_eq!(m.total_bytes(), 12288);
    assert!(
        m.schedule.as_ref().is_some_and(|s| s.max == 3),
        "the live ranges were not read"
    );
}

// ---------------------------------------------------- what the SVG holds, read by roxmltree

/// What a well-formed XML document told us.
#[derive(Default, Debug)]
struct Xml {
    /// Element names (local, without a namespace prefix).
    elements: BTreeSet<String>,
    /// Attribute names: local, and `prefix:local` too when the attribute has a namespace.
    attributes: BTreeSet<String>,
    /// The (unescaped) text runs between tags, trimmed, the empty ones left out.
    texts: Vec<String>,
}

/// Parses `doc` with roxmltree, a strict XML parser (well-formedness, legal characters,
/// entities, no DTD), and collects its elements, attributes and texts.
fn parse_xml(doc: &str) -> Result<Xml, String> {
    let tree = roxmltree::Document::parse(doc).map_err(|e| e.to_string())?;
    let mut xml = Xml::default();
    for node in tree.descendants() {
        if node.is_element() {
            xml.elements.insert(node.tag_name().name().to_string());
            for a in node.attributes() {
                xml.attributes.insert(a.name().to_string());
                if let Some(prefix) = a.namespace().and_then(|ns| node.lookup_prefix(ns)) {
                    xml.attributes.insert(format!("{prefix}:{}", a.name()));
                }
            }
        } else if let Some(t) = node.text().filter(|_| node.is_text()) {
            if !t.trim().is_empty() {
                xml.texts.push(t.trim().to_string());
            }
        }
    }
    Ok(xml)
}

#[test]
fn the_xml_checker_catches_injection() {
    assert!(parse_xml(r#"<svg a="1"><text>x &lt; y</text></svg>"#).is_ok());
    assert!(parse_xml(r#"<svg><text><img src=x onerror=1></text></svg>"#).is_err());
    assert!(
        parse_xml(r#"<svg a="1" onload="x"></svg>"#).is_ok_and(|x| x.attributes.contains("onload"))
    );
    assert!(parse_xml(r#"<svg a="x"onload="y"></svg>"#).is_err());
    assert!(parse_xml("<svg><text>a & b</text></svg>").is_err());
    assert!(parse_xml("<svg><text>\u{1b}[31m</text></svg>").is_err());
    assert!(parse_xml("<svg></svg><script/>").is_err());
    assert!(parse_xml("<svg><text>x</svg>").is_err());
    assert!(parse_xml(r#"<svg a="1" a="2"></svg>"#).is_err());
    assert!(parse_xml(r#"<svg a="<b>"></svg>"#).is_err());
    assert!(parse_xml("<svg>").is_err());
    assert!(parse_xml(r#"<!DOCTYPE svg [<!ENTITY x "y">]><svg>&x;</svg>"#).is_err());
    let x =
        parse_xml(r#"<svg xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="j"/></svg>"#)
            .unwrap();
    assert!(x.attributes.contains("xlink:href"), "{:?}", x.attributes);
    let x = parse_xml("<svg><text>\n&lt;b&gt;&amp;&quot;&apos;\n</text></svg>").unwrap();
    assert_eq!(x.texts, vec!["<b>&\"'".to_string()]);
}

/// The SVG is well-formed, made of plotters' own elements and attributes only, and its
/// texts are the raw names.
fn check_svg(svg: &str, expect_texts: &[&str]) {
    let xml = parse_xml(svg).unwrap_or_else(|e| panic!("the SVG is not well-formed XML: {e}"));
    let allowed_elements: BTreeSet<&str> = [
        "svg", "rect", "text", "polyline", "polygon", "circle", "line", "path", "g",
    ]
    .into();
    for e in &xml.elements {
        assert!(
            allowed_elements.contains(e.as_str()),
            "element <{e}> in the SVG"
        );
    }
    for a in &xml.attributes {
        assert!(
            !a.to_ascii_lowercase().starts_with("on"),
            "event attribute {a} in the SVG"
        );
        assert!(
            !matches!(a.as_str(), "href" | "xlink:href" | "style"),
            "attribute {a} in the SVG"
        );
    }
    for t in expect_texts {
        assert!(
            xml.texts.iter().any(|x| x == t),
            "no <text> reads {t:?}; texts: {:?}",
            xml.texts
        );
    }
    // Nothing from the dump became markup: its `<` are all escaped.
    for needle in ["<img", "<script", "<svg onload", "</td>"] {
        assert!(!svg.contains(needle), "{needle} appears raw in the SVG");
    }
}

#[test]
fn render_svg_escapes_the_hostile_names() {
    let (m, a) = load();
    let svg = render::render_svg(&m, &a, 1400);
    // The module name is the title; the values' blocks are wide enough for their names.
    check_svg(&svg, &[MODULE, NAME_ATTR, NAME_ENTITY, NAME_JS]);
}

#[test]
fn summary_json_keeps_the_raw_names() {
    let (m, a) = load();
    let json = Summary::new([(&m, &a)]).to_json();
    let v: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{json}"));
    assert_eq!(v["modules"][0]["name"], MODULE);
    assert_eq!(v["modules"][0]["total_bytes"], 12288);
    let warnings = v["modules"][0]["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .all(|w| w.as_str().is_some_and(|w| w.starts_with(&file_name()))),
        "{warnings:?}"
    );
    assert!(!warnings.is_empty(), "the line of markup gave no warning");
}

// ------------------------------------------------------------------ the CLI, end to end

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bufscope"))
}

/// A fresh folder holding the hostile dump under its hostile file name.
fn hostile_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bufscope-hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file_name()), hostile_dump()).unwrap();
    dir
}

/// Runs the CLI with `args` then `path`; its standard output, once it succeeded.
fn cli_ok(args: &[&str], path: &Path) -> Vec<u8> {
    let out = Command::new(bin()).args(args).arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn cli_summary_json_and_render_svg() {
    let dir = hostile_dir("cli");
    let file = dir.join(file_name());
    let json = String::from_utf8(cli_ok(&["summary", "--json"], &file))
        .expect("summary JSON is not UTF-8");
    let v: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{json}"));
    assert_eq!(v["modules"][0]["name"], MODULE);

    let svg =
        String::from_utf8(cli_ok(&["render", "--svg", "-"], &file)).expect("the SVG is not UTF-8");
    check_svg(&svg, &[MODULE, NAME_ATTR, NAME_ENTITY, NAME_JS]);

    // The folder form reads the same file.
    let v: serde_json::Value =
        serde_json::from_slice(&cli_ok(&["summary", "--json"], &dir)).unwrap();
    assert_eq!(v["modules"][0]["name"], MODULE);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Control characters are legal in names and (CEscaped) in metadata, but not in XML 1.0:
/// the SVG must still be well-formed (a browser refuses to show an SVG that is not).
/// plotters' SVG backend escapes `<>&"'` but writes control characters as they are; the
/// render replaces the ones XML forbids by U+FFFD.
#[test]
fn render_svg_stays_xml_with_control_characters_in_names() {
    let dump = TINY
        .replace("Arg_1.2", "bell\u{7}esc\u{1b}[31mred")
        .replace("Arg_0.1", "nul\u{1}vt\u{b}ff\u{c}");
    let name = "ctl\u{1b}]0;title\u{7}.buffer-assignment.txt";
    let load = load_files([(name, dump.as_bytes())]);
    assert!(load.errors.is_empty(), "errors: {:?}", load.errors);
    let m = &load.modules[0];
    assert_eq!(m.values.len(), 3);
    let a = analysis::analyze(m);
    let svg = render::render_svg(m, &a, 1400);
    if let Err(e) = parse_xml(&svg) {
        panic!("the SVG is not well-formed XML: {e}");
    }
    let json = Summary::new([(m, &a)]).to_json();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["modules"][0]["name"], m.name.as_str());
}

/// A file that starts like gzip but is not: the message must say that the gzip data is
/// corrupt, not that the file is empty: it is 32 KiB long, or 2 bytes (the gzip magic
/// alone, a download cut short).
#[test]
fn a_corrupt_gzip_file_is_not_called_empty() {
    let mut bytes = vec![0x1f, 0x8b, 0x08, 0x00];
    let mut x: u32 = 3;
    bytes.extend((0..32 * 1024).map(|_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as u8
    }));
    for (name, bytes) in [
        ("dump.buffer-assignment.txt.gz", &bytes[..]),
        ("two.buffer-assignment.txt.gz", &bytes[..2]),
    ] {
        let load = load_files([(name, bytes)]);
        assert!(load.modules.is_empty());
        assert_eq!(load.errors.len(), 1, "{:?}", load.errors);
        let e = &load.errors[0];
        assert!(!e.ends_with("is empty."), "{e}");
        assert!(e.contains("not a text file") || e.contains("gzip"), "{e}");
    }
}

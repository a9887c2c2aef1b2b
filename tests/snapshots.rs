//! Snapshots (insta, in tests/snapshots/) of the summary JSON of every fixture module and
//! of the SVG of the TPU dumps. Review a changed snapshot against the dump by eye before
//! accepting it (`cargo insta review`, or `INSTA_UPDATE=always` then `git diff`).

mod common;
#[path = "common/scan.rs"]
mod scan;

use bufscope::analysis;
use bufscope::summary::Summary;
use common::*;
use scan::scan;

fn snapshot_name(m: &ModuleFiles) -> String {
    m.label.replace(['/', '.'], "_")
}

fn load(m: &ModuleFiles) -> bufscope::model::Module {
    let load = bufscope::load_files(m.inputs());
    assert!(load.errors.is_empty(), "{}: {:?}", m.label, load.errors);
    assert_eq!(load.modules.len(), 1, "{}", m.label);
    load.modules.into_iter().next().unwrap()
}

#[test]
fn summary_json_of_every_fixture() {
    for m in fixture_modules() {
        let module = load(&m);
        let an = analysis::analyze(&module);
        let json = Summary::new([(&module, &an)]).to_json();
        // The JSON is what the CLI prints: it must parse, and say the module's own figures.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            v["modules"][0]["total_bytes"],
            serde_json::json!(scan(&m).total.unwrap()),
            "{}",
            m.label
        );
        insta::assert_snapshot!(format!("summary__{}", snapshot_name(&m)), json);
    }
}

#[test]
fn svg_of_the_tpu_dumps() {
    for m in fixture_modules().into_iter().filter(|m| m.folder == "tpu") {
        let module = load(&m);
        let an = analysis::analyze(&module);
        let svg = bufscope::render::render_svg(&module, &an, 1200);
        assert!(
            svg.starts_with("<svg") || svg.starts_with("<?xml"),
            "{}: not an SVG",
            m.label
        );
        assert!(
            svg.trim_end().ends_with("</svg>"),
            "{}: unterminated SVG",
            m.label
        );
        insta::assert_snapshot!(format!("svg__{}", snapshot_name(&m)), svg);
    }
}

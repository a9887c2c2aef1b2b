//! `bufscope::render::sweep` on a real sweep, the batch points of `../shared/dumps/tpu-aot`
//! (per-device batch 4 … 32, v5e) held against TPU v5e's 15.75 GiB: the SVG says the
//! varied dimension, the largest batch that fits in its verdict and on its crossing mark,
//! draws one dot per compilation, the fit dashed and a stacked area per category, and a
//! click at a point's position finds that point (what the page opens); and the rule by which
//! the page opens modules read together as a sweep.

mod common;
#[path = "common/sweep.rs"]
mod sweep_points;

use bufscope::answers::capacity::parse_capacity;
use bufscope::answers::sweep::{is_sweep, same_parameters, sweep, Options};
use bufscope::model::Module;
use bufscope::pipeline::open_files;
use bufscope::render::capacity_label;
use bufscope::render::sweep::{point_at, point_positions, sweep_height, sweep_svg, verdict_line};
use bufscope::render::Style;
use sweep_points::{batch_sweep, load, points};

#[test]
fn the_batch_sweeps_chart_says_the_largest_batch_that_fits() {
    let Some(dumps) = common::shared_dumps_or_skip("the_batch_sweeps_chart_says_the_largest_batch_that_fits") else {
        return;
    };
    let loads = batch_sweep(&dumps);
    let capacity = parse_capacity("v5e").unwrap();
    let options = Options { capacity: Some(capacity.clone()), at: Vec::new() };
    let s = sweep(&points(&loads), &options).unwrap();
    let hbm = &s.spaces[0];
    assert_eq!((hbm.largest_fitting, hbm.first_not_fitting), (Some(64), None));
    assert_eq!(verdict_line(hbm), "largest that fits: at least 64");
    let label = capacity_label(&capacity);
    let svg = sweep_svg(&s, Some(&label), &Style::default(), 960);
    std::fs::create_dir_all(common::manifest_dir().join("target")).unwrap();
    std::fs::write(common::manifest_dir().join("target/sweep-batch.svg"), &svg).unwrap();
    // One chart per memory space, each saying the dimension the CLI names.
    let charts = svg.matches("peak against parameter tokens, dim 0").count();
    assert_eq!(charts, s.spaces.len(), "{}", &svg[..400.min(svg.len())]);
    assert!(svg.contains("largest that fits: at least 64"));
    assert!(svg.contains("64 fits"), "the crossing mark");
    assert!(svg.contains(&format!("capacity {label}")), "the capacity line's label");
    // HBM's legend names its categories; the activations grow with the batch.
    for c in &hbm.categories {
        assert!(svg.contains(c.label), "{} not in the legend", c.label);
    }
    // A dot per point of every space (the pinned ring and the failed cross are neither here).
    let dots: usize = s.spaces.iter().map(|sp| sp.points.len()).sum();
    assert_eq!(svg.matches("<circle").count(), dots);
    // The other spaces hold no capacity: no crossing said there.
    assert_eq!(svg.matches("no capacity on this memory space").count(), s.spaces.len() - 1);
    // A value predicted at is marked on the fit with its figure, in every space.
    let options = Options { capacity: Some(capacity), at: vec![48, 100] };
    let s = sweep(&points(&loads), &options).unwrap();
    let svg = sweep_svg(&s, Some(&label), &Style::default(), 960);
    for p in &s.spaces[0].at {
        let said = format!("{}: {} predicted", p.value, bufscope::units::human_bytes(p.peak_live_bytes));
        assert!(svg.contains(&said), "{said} not in the chart");
    }
    std::fs::write(common::manifest_dir().join("target/sweep-batch-at.svg"), &svg).unwrap();
    assert_eq!(svg.matches(" predicted\n").count(), 2 * s.spaces.len(), "one label per value and space");
}

#[test]
fn a_click_at_a_points_position_finds_that_point() {
    let Some(dumps) = common::shared_dumps_or_skip("a_click_at_a_points_position_finds_that_point") else {
        return;
    };
    let loads = batch_sweep(&dumps);
    let options = Options { capacity: Some(parse_capacity("v5e").unwrap()), at: Vec::new() };
    let s = sweep(&points(&loads), &options).unwrap();
    let hbm = &s.spaces[0];
    for width in [400u32, 960, 1800] {
        let size = (width, sweep_height(width));
        let at = point_positions(hbm, size, 14.0);
        assert_eq!(at.len(), 5);
        // Left to right, higher peaks higher up (rows grow downwards).
        assert!(at.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1), "{at:?}");
        for (i, &(x, y)) in at.iter().enumerate() {
            assert_eq!(point_at(hbm, size, 14.0, (x + 3, y - 2)), Some(i), "width {width}, point {i}");
        }
        assert_eq!(point_at(hbm, size, 14.0, (at[0].0, at[0].1 + 60)), None);
    }
}

#[test]
fn the_page_opens_a_sweep_only_for_one_programs_compilations() {
    let Some(dumps) = common::shared_dumps_or_skip("the_page_opens_a_sweep_only_for_one_programs_compilations") else {
        return;
    };
    let loads = batch_sweep(&dumps);
    let modules: Vec<&Module> = loads.iter().map(|l| &l.default_module().unwrap().module).collect();
    assert!(is_sweep(&modules), "the batch compilations");
    assert!(!is_sweep(&modules[..1]), "one compilation");
    // Batch 8 and sequence 512: one program, two dimensions vary.
    let s512 = load(&dumps.join("tpu-aot/turn4"), "tpu_v5e_lm_scan_remat_s512");
    let two = [modules[0], &s512.default_module().unwrap().module];
    assert!(same_parameters(&two) && !is_sweep(&two));
    // A dump folder's programs (init, train step, eval step) are no sweep.
    let folder = dumps.join("tpu-aot/turn4/raw_folder_multi");
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for e in std::fs::read_dir(&folder).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !p.is_file() || !["buffer-assignment", "live-range"].iter().any(|k| name.contains(k)) {
            continue;
        }
        files.push((p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()));
    }
    let read = open_files(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    let programs: Vec<&Module> = read.modules.iter().map(|a| &a.module).collect();
    assert_eq!(programs.len(), 3);
    assert!(!same_parameters(&programs) && !is_sweep(&programs));
}

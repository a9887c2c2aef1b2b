//! `bufscope bench`: the native half of the scale benchmark. Times reading and analysing
//! one file (the core's [`Pipeline`], fed as [`input`](super::input) feeds it) against a
//! plain memchr line count, measures the heap that takes (the counting allocator of
//! `main.rs`), and times drawing the space with the most blocks over the browser
//! benchmark's scripted pan and zoom, and the CLI's own read on 1, 2 and 4 workers
//! ([`workers`]). `--json` prints one object, which `./dev bench` and
//! `tests/bench/scale_bench.mjs` read. An HLO module text is timed and measured apart
//! ([`hlo`]).

mod hlo;
mod workers;

use super::CHUNK;
use super::{write_stdout, CmdResult, Failure};
use bufscope::pipeline::{Analysed, Loaded, Pipeline, Progress};
use bufscope::render;
use bufscope::render::interaction::{constrain, drag_pan, zoom_at, Axes};
use bufscope::units::group_digits;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Times reading, analysing and drawing one file
///
/// Times reading and analysing one file against a plain line count (median of N runs),
/// measures the heap it takes, and times drawing the space with the most blocks over the
/// browser benchmark's scripted pan and zoom.
#[derive(Args)]
#[command(args_override_self = true)]
pub struct BenchArgs {
    /// One dump file (or an HLO module text: its read time and the heap it keeps)
    #[arg(value_name = "PATH")]
    path: PathBuf,
    /// Runs to take the median of
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// The axes the scripted zooms change: both, or one as Shift (time) or Alt (offsets)
    /// and the wheel do
    #[arg(long, value_enum, default_value_t = Zoom::Both)]
    zoom: Zoom,
    /// Print the figures as one JSON object (what `./dev bench` reads)
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Zoom {
    Both,
    Time,
    Offsets,
}

impl Zoom {
    /// Whether the zooms change (time, offsets).
    fn axes(self) -> (bool, bool) {
        match self {
            Zoom::Both => (true, true),
            Zoom::Time => (true, false),
            Zoom::Offsets => (false, true),
        }
    }
}

/// Targets of the benchmark.
const TIME_TARGET: f64 = 4.0;
const HEAP_TARGET: f64 = 1.5;

/// What one benchmark measured.
struct Figures {
    path: String,
    bytes: usize,
    lines: usize,
    /// "1 module (46,594 allocations, 177,800 values)".
    shape: String,
    runs: u32,
    memchr_ms: f64,
    parse_ms: f64,
    analysis_ms: f64,
    /// With `Used values` left for later (as the page reads): the read, join and analysis
    /// that the diagrams need, then the `Used values` read and joined into the modules.
    first_ms: f64,
    complete_ms: f64,
    /// Peak heap of one parse + analysis, the input buffer excluded.
    heap: usize,
    /// The same for the page's way: diagrams first, then `Used values` read and joined.
    deferred_heap: usize,
    rss: Option<u64>,
    draw: DrawBench,
    scaling: Vec<workers::Scale>,
}

impl Figures {
    fn total_ms(&self) -> f64 {
        self.parse_ms + self.analysis_ms
    }
}

pub fn bench(args: BenchArgs) -> CmdResult {
    crate::heap::start();
    let path = args.path.display().to_string();
    let bytes =
        std::fs::read(&args.path).map_err(|e| Failure(format!("cannot read {path}: {e}")))?;
    if bufscope::parse::hlo::is_hlo_start(&bytes) {
        return hlo::bench(&path, &bytes, args.runs, args.json);
    }
    let figures = measure(path, &bytes, args.runs, args.zoom)?;
    if args.json {
        let mut json = serde_json::to_string(&Json::of(&figures))
            .map_err(|e| Failure(format!("cannot write the figures: {e}")))?;
        json.push('\n');
        write_stdout(json.as_bytes())
    } else {
        write_stdout(table(&figures).as_bytes())
    }
}

fn measure(path: String, bytes: &[u8], runs: u32, zoom: Zoom) -> Result<Figures, Failure> {
    let lines = memchr::memchr_iter(b'\n', bytes).count();

    // Heap of one parse + analysis. The input buffer is allocated already, so it is not in
    // the difference between the peak and the level before.
    let before = crate::heap::current();
    crate::heap::reset_peak();
    let loaded = read(&path, bytes).finish();
    let heap = crate::heap::since(before, crate::heap::peak());
    for e in &loaded.errors {
        eprintln!("bufscope: {e}");
    }
    if loaded.modules.is_empty() {
        return Err(Failure(format!("no module could be read from {path}")));
    }
    let shape = describe(&loaded);
    let draw = draw_bench(&loaded.modules, zoom.axes());
    drop(loaded);
    let before = crate::heap::current();
    crate::heap::reset_peak();
    read_deferred(&path, bytes)?;
    let deferred_heap = crate::heap::since(before, crate::heap::peak());
    // The timings below run without the counters (a shared atomic on every allocation of
    // every thread), as `summary` runs; the peak RSS is the parses' so far.
    crate::heap::stop();
    let rss = peak_rss();

    let (mut t_memchr, mut t_parse, mut t_analysis) = (Vec::new(), Vec::new(), Vec::new());
    let (mut t_first, mut t_complete) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t0 = Instant::now();
        std::hint::black_box(memchr::memchr_iter(b'\n', std::hint::black_box(bytes)).count());
        t_memchr.push(ms(t0));

        let t1 = Instant::now();
        let joined = read(&path, bytes);
        t_parse.push(ms(t1));
        let t2 = Instant::now();
        let loaded = joined.finish();
        t_analysis.push(ms(t2));
        drop(std::hint::black_box(loaded));

        let (first, complete) = read_deferred(&path, bytes)?;
        t_first.push(first);
        t_complete.push(complete);
    }
    let scaling = workers::scaling(&path, runs);
    Ok(Figures {
        path,
        bytes: bytes.len(),
        lines,
        shape,
        runs,
        memchr_ms: median(t_memchr),
        parse_ms: median(t_parse),
        analysis_ms: median(t_analysis),
        first_ms: median(t_first),
        complete_ms: median(t_complete),
        heap,
        deferred_heap,
        rss,
        draw,
        scaling,
    })
}

/// `bytes` read as the file `name` in the CLI's chunks and joined: the pipeline stops where
/// analysis begins.
fn read(name: &str, bytes: &[u8]) -> Pipeline {
    let mut pipeline = Pipeline::new();
    pipeline.begin_file(name);
    for chunk in bytes.chunks(CHUNK) {
        pipeline.feed(chunk);
    }
    pipeline.end_file();
    while pipeline.step(usize::MAX) == Progress::Joining {}
    pipeline
}

/// `bytes` read as the page reads them: `Used values` left for later, the rest joined and
/// analysed (the diagrams' modules: its milliseconds first), then `Used values` read and
/// joined into the modules (its milliseconds second).
fn read_deferred(name: &str, bytes: &[u8]) -> Result<(f64, f64), Failure> {
    let t = Instant::now();
    let mut loader = bufscope::Loader::new();
    loader.defer_uses(true);
    loader.begin_file(name);
    for chunk in bytes.chunks(CHUNK) {
        loader.feed(chunk);
    }
    loader.end_file();
    let loaded = Pipeline::from(loader).finish();
    let first = ms(t);
    let t = Instant::now();
    let mut modules: Vec<_> = loaded.modules.into_iter().map(|a| a.module).collect();
    bufscope::parse::complete(&mut modules, &loaded.deferred, |_| Some(bytes))
        .map_err(|why| Failure(format!("{name}: completing the deferred read: {why}")))?;
    let complete = ms(t);
    drop(std::hint::black_box(modules));
    Ok((first, complete))
}

/// The `--json` object; its field names and order are what `./dev bench` reads.
#[derive(Serialize)]
struct Json<'a> {
    path: &'a str,
    bytes: usize,
    lines: usize,
    runs: u32,
    memchr_ms: f64,
    parse_ms: f64,
    analysis_ms: f64,
    total_ms: f64,
    peak_heap_bytes: usize,
    deferred_peak_heap_bytes: usize,
    peak_rss_bytes: Option<u64>,
    draw_blocks: usize,
    draw_index_ms: f64,
    draw_levels_bytes: usize,
    draw_median_ms: f64,
    draw_p95_ms: f64,
    draw_worst_ms: f64,
    first_ms: f64,
    complete_ms: f64,
    workers: &'a [workers::Scale],
}

impl<'a> Json<'a> {
    fn of(f: &'a Figures) -> Json<'a> {
        // Times to the microsecond.
        let us = |ms: f64| (ms * 1e3).round() / 1e3;
        Json {
            path: &f.path,
            bytes: f.bytes,
            lines: f.lines,
            runs: f.runs,
            memchr_ms: us(f.memchr_ms),
            parse_ms: us(f.parse_ms),
            analysis_ms: us(f.analysis_ms),
            total_ms: us(f.total_ms()),
            peak_heap_bytes: f.heap,
            deferred_peak_heap_bytes: f.deferred_heap,
            peak_rss_bytes: f.rss,
            draw_blocks: f.draw.blocks,
            draw_index_ms: us(f.draw.index_ms),
            draw_levels_bytes: f.draw.levels_bytes,
            draw_median_ms: us(f.draw.median),
            draw_p95_ms: us(f.draw.p95),
            draw_worst_ms: us(f.draw.worst),
            first_ms: us(f.first_ms),
            complete_ms: us(f.complete_ms),
            workers: &f.scaling,
        }
    }
}

/// The figures as a table, with the targets met or not.
fn table(f: &Figures) -> String {
    let size = f.bytes as f64;
    let total_ms = f.total_ms();
    let time_ratio = total_ms / f.memchr_ms.max(1e-6);
    let heap_ratio = f.heap as f64 / size.max(1.0);
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    let (runs, memchr_ms, parse_ms, analysis_ms) = (f.runs, f.memchr_ms, f.parse_ms, f.analysis_ms);
    let mut r = format!("bufscope bench: {}\n", f.path);
    r += &format!(
        "  input               {:>10.1} MB  {} lines; {}\n",
        mb(size),
        group_digits(f.lines as u64),
        f.shape
    );
    r += &format!("  runs                {runs:>10}     the times below are medians\n\n");
    r += &format!("  memchr line count   {memchr_ms:>10.1} ms\n");
    r += &format!("  parse               {parse_ms:>10.1} ms\n");
    r += &format!("  analysis            {analysis_ms:>10.1} ms\n");
    r += &format!("  total               {total_ms:>10.1} ms  parse + analysis\n");
    r += &format!(
        "  diagrams first      {:>10.1} ms  parse without `Used values` + join + analysis, as the page reads\n",
        f.first_ms
    );
    r += &format!(
        "  then Used values    {:>10.1} ms  read and joined into the modules\n",
        f.complete_ms
    );
    r += &format!(
        "  total / memchr      {time_ratio:>10.2} ×   target ≤ {TIME_TARGET:.1} ×   {}\n\n",
        verdict(time_ratio <= TIME_TARGET)
    );
    r.pop();
    r += &workers::lines(&f.scaling, memchr_ms);
    r.push('\n');
    r += &format!(
        "  peak heap           {:>10.1} MB  one parse + analysis; the {:.1} MB input buffer is excluded\n",
        mb(f.heap as f64),
        mb(size)
    );
    r += &format!(
        "  peak heap / file    {heap_ratio:>10.2} ×   target ≤ {HEAP_TARGET:.1} ×   {}\n",
        verdict(heap_ratio <= HEAP_TARGET)
    );
    r += &format!(
        "  peak heap, deferred {:>10.1} MB  diagrams first, then `Used values` (the page's way), {:.2} × the file\n",
        mb(f.deferred_heap as f64),
        f.deferred_heap as f64 / size.max(1.0)
    );
    match f.rss {
        Some(rss) => r += &format!(
            "  peak RSS (VmHWM)    {:>10.1} MB  whole process, input buffer included; for information\n",
            mb(rss as f64)
        ),
        None => r += "  peak RSS (VmHWM)           n/a\n",
    }
    let draw = &f.draw;
    r += &format!(
        "\n  draw                {:>10.1} ms  median of {} views of the space with the most blocks ({}),\n\
         \x20                     p95 {:.1} ms, worst {:.1} ms; {DRAW_W}×{DRAW_H} raster, the browser's scripted pan/zoom\n",
        draw.median,
        draw.views,
        group_digits(draw.blocks as u64),
        draw.p95,
        draw.worst,
    );
    r += &format!(
        "  draw index          {:>10.1} ms  once per space, with the level of detail of the whole view;\n\
         \x20                     levels of detail {:.1} MB after the views ({:.3} × the file)\n",
        draw.index_ms,
        mb(draw.levels_bytes as f64),
        draw.levels_bytes as f64 / size.max(1.0),
    );
    r
}

/// Size of the drawing the draw benchmark times (about a diagram's canvas in the browser).
const DRAW_W: u32 = 1200;
const DRAW_H: u32 = 460;

#[derive(Default)]
struct DrawBench {
    blocks: usize,
    /// Time to build the space's [`render::SpaceIndex`], levels of detail included.
    index_ms: f64,
    /// Bytes its levels of detail take.
    levels_bytes: usize,
    views: usize,
    median: f64,
    p95: f64,
    worst: f64,
}

/// Times drawing the space with the most blocks into a [`render::Raster`] over the views of
/// the browser benchmark's scripted pan and zoom (tests/bench/frames.mjs: 20 wheel zooms in at
/// a drifting point, 20 drags, 20 zooms out, twice), starting from the whole space; `zoom`
/// says which axes (time, offsets) the zooms change.
fn draw_bench(modules: &[Analysed], zoom: (bool, bool)) -> DrawBench {
    let best = modules
        .iter()
        .flat_map(|a| a.analysis.spaces.iter().map(move |s| (a, s)))
        .max_by_key(|(_, s)| s.timed.len());
    let Some((Analysed { module, analysis }, space)) = best else {
        return DrawBench::default();
    };
    let t = Instant::now();
    let style = render::Style::default();
    let layout = render::Layout::new((DRAW_W, DRAW_H), style.font_size);
    let index = render::SpaceIndex::new(module, analysis, space);
    index.prepare(layout.diagram);
    let index_ms = ms(t);
    let views = scripted_views(index.full(), layout.diagram, 120, zoom);
    let mut times = Vec::with_capacity(views.len());
    for view in &views {
        let mut raster = render::Raster::new(DRAW_W, DRAW_H);
        let t = Instant::now();
        {
            use plotters::prelude::IntoDrawingArea;
            let area = (&mut raster).into_drawing_area();
            let _ =
                render::draw_space_indexed(&area, module, analysis, space, &index, view, &style);
        }
        times.push(ms(t));
        std::hint::black_box(&raster);
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    DrawBench {
        blocks: index.len(),
        index_ms,
        levels_bytes: index.levels_heap_bytes(),
        views: views.len(),
        median: median(times),
        p95: sorted[(sorted.len() * 95 / 100).min(sorted.len() - 1)],
        worst: *sorted.last().unwrap_or(&0.0),
    }
}

/// The viewports of the scripted pan and zoom of tests/bench/frames.mjs, through the same
/// rules the canvas applies ([`render::interaction`]: a wheel zoom at the pointer on the axes
/// `zoom` says, a drag of 30 px left and 8 px down, each view constrained as the canvas does).
fn scripted_views(
    full: render::Viewport,
    rect: render::PxRect,
    steps: usize,
    (zoom_x, zoom_y): (bool, bool),
) -> Vec<render::Viewport> {
    let axes = Axes {
        steps: zoom_x,
        bytes: zoom_y,
    };
    let mut view = full;
    let mut views = vec![view];
    let (cx, cy) = (
        f64::from(rect.x0) + f64::from(rect.width()) * 0.45,
        f64::from(rect.y0) + f64::from(rect.height()) * 0.55,
    );
    for i in 0..steps {
        let k = (i % 20) as f64;
        view = match (i / 20) % 3 {
            0 => {
                let at = (cx + k * 4.0, cy - k * 2.0);
                zoom_at(view, rect, render::wheel_zoom(-120.0), axes, Some(at))
            }
            1 => drag_pan(view, rect, (-30.0, 8.0), Axes::BOTH),
            _ => {
                let at = (cx + (i % 7) as f64 * 11.0, cy + (i % 5) as f64 * 9.0);
                zoom_at(view, rect, render::wheel_zoom(100.0), axes, Some(at))
            }
        };
        view = constrain(view, full);
        views.push(view);
    }
    views
}

/// "1 module (46,594 allocations, 177,800 values)".
fn describe(loaded: &Loaded) -> String {
    let modules = &loaded.modules;
    let allocations: usize = modules.iter().map(|a| a.module.allocations.len()).sum();
    let values: usize = modules.iter().map(|a| a.module.values.len()).sum();
    format!(
        "{} module{} ({} allocations, {} values)",
        modules.len(),
        if modules.len() == 1 { "" } else { "s" },
        group_digits(allocations as u64),
        group_digits(values as u64)
    )
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

fn mb(bytes: f64) -> f64 {
    bytes / 1e6
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => 0.0,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// `VmHWM` of this process in bytes (Linux only).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_zooms_change_only_the_axes_asked_for() {
        let full = render::Viewport {
            x0: 0.0,
            x1: 10_000.0,
            y0: 0.0,
            y1: 1e9,
        };
        let rect = render::PxRect {
            x0: 60,
            y0: 20,
            x1: 1160,
            y1: 420,
        };
        let spans = |zoom: Zoom| {
            let views = scripted_views(full, rect, 120, zoom.axes());
            assert_eq!(views.len(), 121);
            let narrowest = |span: fn(&render::Viewport) -> f64| {
                views.iter().map(span).fold(f64::INFINITY, f64::min)
            };
            (narrowest(|v| v.x1 - v.x0), narrowest(|v| v.y1 - v.y0))
        };
        let (both_x, both_y) = spans(Zoom::Both);
        assert!(both_x < 1000.0 && both_y < 1e8, "{both_x} {both_y}");
        let (time_x, time_y) = spans(Zoom::Time);
        assert!(time_x < 1000.0 && time_y == 1e9, "{time_x} {time_y}");
        let (bytes_x, bytes_y) = spans(Zoom::Offsets);
        assert!(bytes_x == 10_000.0 && bytes_y < 1e8, "{bytes_x} {bytes_y}");
    }

    #[test]
    fn median_of_runs() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }

    #[test]
    fn the_json_has_the_fields_dev_bench_reads() {
        let f = Figures {
            path: "dir/a \"b\".txt".into(),
            bytes: 10,
            lines: 2,
            shape: String::new(),
            runs: 3,
            memchr_ms: 1.23456,
            parse_ms: 2.0,
            analysis_ms: 0.5,
            first_ms: 0.75,
            complete_ms: 1.0,
            heap: 7,
            deferred_heap: 8,
            rss: None,
            draw: DrawBench::default(),
            scaling: vec![workers::Scale { workers: 2, read_ms: 3.0, completed: true }],
        };
        let json = serde_json::to_string(&Json::of(&f)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["path"], "dir/a \"b\".txt");
        assert_eq!(v["memchr_ms"], 1.235);
        assert_eq!(v["total_ms"], 2.5);
        assert_eq!(v["first_ms"], 0.75);
        assert_eq!(v["peak_heap_bytes"], 7);
        assert_eq!(v["deferred_peak_heap_bytes"], 8);
        assert!(v["peak_rss_bytes"].is_null());
        assert_eq!(v["workers"][0]["read_ms"], 3.0);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = [
            "path",
            "bytes",
            "lines",
            "runs",
            "memchr_ms",
            "parse_ms",
            "analysis_ms",
            "total_ms",
            "peak_heap_bytes",
            "deferred_peak_heap_bytes",
            "peak_rss_bytes",
            "draw_blocks",
            "draw_index_ms",
            "draw_levels_bytes",
            "draw_median_ms",
            "draw_p95_ms",
            "draw_worst_ms",
            "first_ms",
            "complete_ms",
            "workers",
        ];
        expected.sort();
        assert_eq!(keys, expected);
    }
}

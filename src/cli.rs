//! The `bufscope` command line (native only): `summary`, `render` and `bench`.
//!
//! Owns: argument handling, finding dump files in folders, reading files in chunks into the
//! streaming [`Loader`], and what the commands print. Arguments are parsed by hand; the
//! grammar is small.

use bufscope::analysis::{self, Analysis};
use bufscope::model::Module;
use bufscope::summary::{group_digits, human_bytes, Summary};
use bufscope::{render, Load, Loader};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

const USAGE: &str = "\
bufscope: a viewer for XLA buffer-assignment dumps

Usage:
  bufscope summary [--json] PATH...
      Key figures of every module: allocations, values, bytes, and per memory space the
      allocated bytes and the peak of live bytes. --json prints one JSON object.
  bufscope render PATH... --svg OUT.svg [--module NAME] [--width PX]
      Draws a module (by default the one with the most allocated bytes) as an SVG: one
      panel per memory space. OUT.svg may be '-' for standard output.
  bufscope bench PATH [--runs N] [--zoom both|time|offsets] [--json]
      Times reading and analysing one file against a plain line count (median of N runs,
      default 5), measures the heap it takes, and times drawing the space with the most
      blocks over the browser benchmark's scripted pan and zoom (--zoom: its zooms on both
      axes, the default, or on one, as Shift or Alt + wheel do). --json prints the figures
      as one JSON object (what `./dev bench` reads).
  bufscope generate SRC --size SIZE --out OUT
      Writes a bigger, valid dump for scale tests: SRC's program repeated in one module
      with fresh ids and names until OUT has at least SIZE bytes (e.g. 250M, 1G; decimal
      units; K/M/G or KiB/MiB/GiB). SRC must be a one-file dump with all its sections.
  bufscope --help

PATH is a dump file or a folder. A file named explicitly is read whatever its name; from a
folder (not recursively) bufscope reads the files ending in buffer-assignment.txt,
buffer-assignment-values.txt, live-range.txt or memory-usage-report.txt (each optionally
.gz), in name order; when none is named so, every .txt and .txt.gz file.
";

/// Files are read and fed to the loader in chunks of this size.
const CHUNK: usize = 4 << 20;

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    run(&args)
}

fn run(args: &[String]) -> i32 {
    let result = match args.first().map(String::as_str) {
        None | Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            return 0;
        }
        Some("-V" | "--version") => {
            println!("bufscope {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Some("summary") => summary_command(&args[1..]),
        Some("render") => render_command(&args[1..]),
        Some("bench") => bench_command(&args[1..]),
        Some("generate") => generate_command(&args[1..]),
        Some(other) => Err(Failure::Usage(format!("unknown command '{other}'"))),
    };
    match result {
        Ok(()) => 0,
        Err(Failure::Usage(msg)) => {
            eprintln!("bufscope: {msg}\n");
            eprint!("{USAGE}");
            2
        }
        Err(Failure::Run(msg)) => {
            eprintln!("bufscope: {msg}");
            1
        }
    }
}

/// Why a command failed: bad arguments (exit 2, with usage) or nothing to show (exit 1).
enum Failure {
    Usage(String),
    Run(String),
}

type CmdResult = Result<(), Failure>;

/// Options and operands of one command.
#[derive(Default)]
struct Args {
    switches: Vec<&'static str>,
    values: Vec<(&'static str, String)>,
    operands: Vec<String>,
}

impl Args {
    /// Parses `args`: `switches` take no value, `valued` options take one (`--x V` or
    /// `--x=V`); `--` ends the options.
    fn parse(
        args: &[String],
        switches: &[&'static str],
        valued: &[&'static str],
    ) -> Result<Args, Failure> {
        let mut out = Args::default();
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            if arg == "--" {
                out.operands.extend(iter.by_ref().cloned());
                break;
            }
            if !arg.starts_with("--") || arg.len() == 2 {
                out.operands.push(arg.clone());
                continue;
            }
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (arg.as_str(), None),
            };
            if let Some(&s) = switches.iter().find(|&&s| s == name) {
                if inline.is_some() {
                    return Err(Failure::Usage(format!("{name} takes no value")));
                }
                out.switches.push(s);
            } else if let Some(&v) = valued.iter().find(|&&v| v == name) {
                let value = match inline.or_else(|| iter.next().cloned()) {
                    Some(value) => value,
                    None => return Err(Failure::Usage(format!("{name} needs a value"))),
                };
                out.values.push((v, value));
            } else {
                return Err(Failure::Usage(format!("unknown option '{name}'")));
            }
        }
        Ok(out)
    }

    fn switch(&self, name: &str) -> bool {
        self.switches.contains(&name)
    }

    /// The last value given for `name`.
    fn value(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    fn number<T: std::str::FromStr>(&self, name: &str) -> Result<Option<T>, Failure> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                Failure::Usage(format!("{name} wants a positive whole number, not '{v}'"))
            }),
        }
    }
}

fn summary_command(args: &[String]) -> CmdResult {
    let args = Args::parse(args, &["--json"], &[])?;
    let modules = load_modules(&args.operands)?;
    let analyses: Vec<Analysis> = modules.iter().map(analysis::analyze).collect();
    let summary = Summary::new(modules.iter().zip(&analyses));
    let text = if args.switch("--json") {
        let mut json = summary.to_json();
        json.push('\n');
        json
    } else {
        summary.to_table()
    };
    write_stdout(text.as_bytes())
}

fn render_command(args: &[String]) -> CmdResult {
    let args = Args::parse(args, &[], &["--svg", "--module", "--width"])?;
    let out = args
        .value("--svg")
        .ok_or_else(|| Failure::Usage("render needs --svg OUT.svg".into()))?
        .to_string();
    let width = args.number::<u32>("--width")?.unwrap_or(1400);
    let modules = load_modules(&args.operands)?;
    let module = pick_module(&modules, args.value("--module"))?;
    let analysis = analysis::analyze(module);
    let svg = render::render_svg(module, &analysis, width);
    if out == "-" {
        return write_stdout(svg.as_bytes());
    }
    std::fs::write(&out, svg).map_err(|e| Failure::Run(format!("cannot write {out}: {e}")))?;
    eprintln!(
        "bufscope: drew {} ({} memory space{}) into {out}",
        module.name,
        analysis.spaces.len(),
        if analysis.spaces.len() == 1 { "" } else { "s" }
    );
    Ok(())
}

fn generate_command(args: &[String]) -> CmdResult {
    let args = Args::parse(args, &[], &["--size", "--out"])?;
    let [src] = args.operands.as_slice() else {
        return Err(Failure::Usage("generate takes one SRC dump".into()));
    };
    let size = args
        .value("--size")
        .ok_or_else(|| Failure::Usage("generate needs --size SIZE".into()))?;
    let target =
        parse_size(size).ok_or_else(|| Failure::Usage(format!("cannot read the size '{size}'")))?;
    let out = args
        .value("--out")
        .ok_or_else(|| Failure::Usage("generate needs --out OUT".into()))?;
    let bytes = std::fs::read(src).map_err(|e| Failure::Run(format!("cannot read {src}: {e}")))?;
    let copies = crate::generate::copies_for(bytes.len() as u64, target);
    let file = File::create(out).map_err(|e| Failure::Run(format!("cannot write {out}: {e}")))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = crate::generate::generate(&bytes, copies, &mut w)
        .map_err(|e| Failure::Run(format!("{src}: {e}")))?;
    eprintln!("bufscope: wrote {out}: {copies} copies of {src}'s program, {written} bytes");
    Ok(())
}

/// `250M`, `1G`, `1GiB`, `1000000`: bytes.
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number.parse().ok()?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some((n * scale) as u64)
}

/// The module called `name` (or, failing that, the only one whose name contains it); by
/// default the one with the most allocated bytes, saying so when there was a choice.
fn pick_module<'a>(modules: &'a [Module], name: Option<&str>) -> Result<&'a Module, Failure> {
    let names = || {
        modules
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(name) = name {
        if let Some(m) = modules.iter().find(|m| m.name == name) {
            return Ok(m);
        }
        let partial: Vec<&Module> = modules.iter().filter(|m| m.name.contains(name)).collect();
        return match partial.as_slice() {
            [one] => Ok(one),
            [] => Err(Failure::Run(format!(
                "no module named '{name}'; read: {}",
                names()
            ))),
            _ => Err(Failure::Run(format!(
                "several modules match '{name}': {}",
                names()
            ))),
        };
    }
    let allocated = |m: &Module| {
        m.allocations
            .iter()
            .fold(0u64, |t, a| t.saturating_add(a.size))
    };
    // The first of equals, so that the choice does not depend on anything but file order.
    let best = modules
        .iter()
        .rev()
        .max_by_key(|m| allocated(m))
        .ok_or_else(|| Failure::Run("no module to draw".into()))?;
    if modules.len() > 1 {
        eprintln!(
            "bufscope: {} modules read; drawing {} ({} allocated), the largest; choose another with --module NAME",
            modules.len(),
            best.name,
            human_bytes(allocated(best))
        );
    }
    Ok(best)
}

/// Reads every dump file named by `paths` (files, or folders of dumps) and returns the
/// modules. Problems with single files go to stderr; no module at all is a failure.
fn load_modules(paths: &[String]) -> Result<Vec<Module>, Failure> {
    if paths.is_empty() {
        return Err(Failure::Usage("no PATH given".into()));
    }
    let files = dump_files(paths);
    if files.is_empty() {
        return Err(Failure::Run("no dump file to read".into()));
    }
    let mut loader = Loader::new();
    let mut buf = vec![0u8; CHUNK];
    for path in &files {
        if let Err(e) = feed_file(&mut loader, path, &mut buf) {
            eprintln!("bufscope: cannot read {}: {e}", path.display());
        }
    }
    let Load { modules, errors } = loader.finish();
    for e in &errors {
        eprintln!("bufscope: {e}");
    }
    if modules.is_empty() {
        let what = if files.len() == 1 {
            "the file given"
        } else {
            "any of the files given"
        };
        return Err(Failure::Run(format!("no module could be read from {what}")));
    }
    Ok(modules)
}

/// Streams one file into the loader, `buf.len()` bytes at a time.
fn feed_file(loader: &mut Loader, path: &Path, buf: &mut [u8]) -> std::io::Result<()> {
    let mut file = File::open(path)?;
    loader.begin_file(&path.to_string_lossy());
    let result = loop {
        match file.read(buf) {
            Ok(0) => break Ok(()),
            Ok(n) => loader.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    loader.end_file();
    result
}

/// The files to read: each file operand as is, and the dump files of each folder operand
/// in name order. Operands that are neither are reported on stderr.
fn dump_files(paths: &[String]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for p in paths {
        let path = Path::new(p);
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => match folder_dumps(path) {
                Ok(found) if found.is_empty() => {
                    eprintln!("bufscope: no dump files in {p} (no .txt or .txt.gz file)")
                }
                Ok(found) => files.extend(found),
                Err(e) => eprintln!("bufscope: cannot list {p}: {e}"),
            },
            Ok(_) => files.push(path.to_path_buf()),
            Err(e) => eprintln!("bufscope: cannot read {p}: {e}"),
        }
    }
    files
}

/// The dump files of a folder, in name order ([`bufscope::parse::folder_selection`]).
fn folder_dumps(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    Ok(bufscope::parse::folder_selection(&names)
        .into_iter()
        .map(|i| files[i].clone())
        .collect())
}

fn write_stdout(bytes: &[u8]) -> CmdResult {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::Run(format!("cannot write the output: {e}"))),
    }
}

// ---------------------------------------------------------------------------------------
// bench

/// Targets of the benchmark.
const TIME_TARGET: f64 = 4.0;
const HEAP_TARGET: f64 = 1.5;

fn bench_command(args: &[String]) -> CmdResult {
    let args = Args::parse(args, &["--json"], &["--runs", "--zoom"])?;
    let [path] = args.operands.as_slice() else {
        return Err(Failure::Usage("bench takes exactly one PATH".into()));
    };
    let zoom = match args.value("--zoom") {
        None | Some("both") => (true, true),
        Some("time") => (true, false),
        Some("offsets") => (false, true),
        Some(other) => {
            return Err(Failure::Usage(format!(
                "--zoom takes both, time or offsets, not {other:?}"
            )))
        }
    };
    let runs = args.number::<usize>("--runs")?.unwrap_or(5);
    if runs == 0 {
        return Err(Failure::Usage("--runs must be at least 1".into()));
    }
    let bytes =
        std::fs::read(path).map_err(|e| Failure::Run(format!("cannot read {path}: {e}")))?;
    let lines = memchr::memchr_iter(b'\n', &bytes).count();

    // Heap of one parse + analysis. The input buffer is allocated already, so it is not in
    // the difference between the peak and the level before.
    let before = crate::heap::current();
    crate::heap::reset_peak();
    let (load, analyses) = parse_and_analyse(path, &bytes);
    let heap = crate::heap::peak().saturating_sub(before);
    for e in &load.errors {
        eprintln!("bufscope: {e}");
    }
    if load.modules.is_empty() {
        return Err(Failure::Run(format!("no module could be read from {path}")));
    }
    let shape = describe(&load.modules);
    let draw = draw_bench(&load.modules, &analyses, zoom);
    drop((load, analyses));

    let (mut t_memchr, mut t_parse, mut t_analysis) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let t0 = Instant::now();
        std::hint::black_box(memchr::memchr_iter(b'\n', std::hint::black_box(&bytes)).count());
        t_memchr.push(ms(t0));

        let t1 = Instant::now();
        let load = parse(path, &bytes);
        t_parse.push(ms(t1));
        let t2 = Instant::now();
        let analyses: Vec<Analysis> = load.modules.iter().map(analysis::analyze).collect();
        t_analysis.push(ms(t2));
        drop(std::hint::black_box((load, analyses)));
    }
    let (memchr_ms, parse_ms, analysis_ms) =
        (median(t_memchr), median(t_parse), median(t_analysis));
    let total_ms = parse_ms + analysis_ms;
    let size = bytes.len() as f64;
    let time_ratio = total_ms / memchr_ms.max(1e-6);
    let heap_ratio = heap as f64 / size.max(1.0);
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    if args.switch("--json") {
        let json = format!(
            "{{\"path\":{path:?},\"bytes\":{},\"lines\":{lines},\"runs\":{runs},\
             \"memchr_ms\":{memchr_ms:.3},\"parse_ms\":{parse_ms:.3},\"analysis_ms\":{analysis_ms:.3},\
             \"total_ms\":{total_ms:.3},\"peak_heap_bytes\":{heap},\"peak_rss_bytes\":{},\
             \"draw_blocks\":{},\"draw_index_ms\":{:.3},\"draw_levels_bytes\":{},\"draw_median_ms\":{:.3},\"draw_p95_ms\":{:.3},\"draw_worst_ms\":{:.3}}}\n",
            bytes.len(),
            peak_rss().map_or("null".to_string(), |r| r.to_string()),
            draw.blocks,
            draw.index_ms,
            draw.levels_bytes,
            draw.median,
            draw.p95,
            draw.worst,
        );
        return write_stdout(json.as_bytes());
    }

    let mut r = String::new();
    r.push_str(&format!("bufscope bench: {path}\n"));
    r.push_str(&format!(
        "  input               {:>10.1} MB  {} lines; {shape}\n",
        mb(size),
        group_digits(lines as u64)
    ));
    r.push_str(&format!(
        "  runs                {runs:>10}     the times below are medians\n\n"
    ));
    r.push_str(&format!("  memchr line count   {memchr_ms:>10.1} ms\n"));
    r.push_str(&format!("  parse               {parse_ms:>10.1} ms\n"));
    r.push_str(&format!("  analysis            {analysis_ms:>10.1} ms\n"));
    r.push_str(&format!(
        "  total               {total_ms:>10.1} ms  parse + analysis\n"
    ));
    r.push_str(&format!(
        "  total / memchr      {time_ratio:>10.2} ×   target ≤ {TIME_TARGET:.1} ×   {}\n\n",
        verdict(time_ratio <= TIME_TARGET)
    ));
    r.push_str(&format!(
        "  peak heap           {:>10.1} MB  one parse + analysis; the {:.1} MB input buffer is excluded\n",
        mb(heap as f64),
        mb(size)
    ));
    r.push_str(&format!(
        "  peak heap / file    {heap_ratio:>10.2} ×   target ≤ {HEAP_TARGET:.1} ×   {}\n",
        verdict(heap_ratio <= HEAP_TARGET)
    ));
    match peak_rss() {
        Some(rss) => r.push_str(&format!(
            "  peak RSS (VmHWM)    {:>10.1} MB  whole process, input buffer included; for information\n",
            mb(rss as f64)
        )),
        None => r.push_str("  peak RSS (VmHWM)           n/a\n"),
    }
    r.push_str(&format!(
        "\n  draw                {:>10.1} ms  median of {} views of the space with the most blocks ({}),\n\
         \x20                     p95 {:.1} ms, worst {:.1} ms; {DRAW_W}×{DRAW_H} raster, the browser's scripted pan/zoom\n",
        draw.median,
        draw.views,
        group_digits(draw.blocks as u64),
        draw.p95,
        draw.worst,
    ));
    r.push_str(&format!(
        "  draw index          {:>10.1} ms  once per space, with the level of detail of the whole view;\n\
         \x20                     levels of detail {:.1} MB after the views ({:.3} × the file)\n",
        draw.index_ms,
        mb(draw.levels_bytes as f64),
        draw.levels_bytes as f64 / size.max(1.0),
    ));
    write_stdout(r.as_bytes())
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
/// the browser benchmark's scripted pan and zoom (tests/e2e/frames.mjs: 20 wheel zooms in at
/// a drifting point, 20 drags, 20 zooms out, twice), starting from the whole space; `zoom`
/// says which axes (time, offsets) the zooms change.
fn draw_bench(modules: &[Module], analyses: &[Analysis], zoom: (bool, bool)) -> DrawBench {
    let best = modules
        .iter()
        .zip(analyses)
        .flat_map(|(m, a)| a.spaces.iter().map(move |s| (m, a, s)))
        .max_by_key(|(_, _, s)| s.timed.len());
    let Some((module, a, space)) = best else {
        return DrawBench::default();
    };
    let t = Instant::now();
    let style = render::Style::default();
    let layout = render::Layout::new((DRAW_W, DRAW_H), style.font_size);
    let index = render::SpaceIndex::new(module, a, space);
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
            let _ = render::draw_space_indexed(&area, module, a, space, &index, view, &style);
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

/// The viewports of the scripted pan and zoom of tests/e2e/frames.mjs, as the canvas sets
/// them (wheel: [`render::wheel_zoom`] at the pointer, on the axes `zoom` says (time,
/// offsets); drag: 30 px left, 8 px down).
fn scripted_views(
    full: render::Viewport,
    rect: render::PxRect,
    steps: usize,
    (zoom_x, zoom_y): (bool, bool),
) -> Vec<render::Viewport> {
    let factors = |f: f64| (if zoom_x { f } else { 1.0 }, if zoom_y { f } else { 1.0 });
    let mut view = full;
    let mut views = vec![view];
    let (cx, cy) = (
        f64::from(rect.x0) + f64::from(rect.width()) * 0.45,
        f64::from(rect.y0) + f64::from(rect.height()) * 0.55,
    );
    let keep = |v: render::Viewport| v.clamped(&full);
    for i in 0..steps {
        let map = render::Mapping::new(view, rect);
        let k = (i % 20) as f64;
        view = match (i / 20) % 3 {
            0 => {
                let at = (map.step_at(cx + k * 4.0), map.bytes_at(cy - k * 2.0));
                let (fx, fy) = factors(render::wheel_zoom(-120.0));
                keep(view.zoom(fx, fy, at))
            }
            1 => {
                let dx = map.step_at(cx + 30.0) - map.step_at(cx);
                let dy = map.bytes_at(cy) - map.bytes_at(cy + 8.0);
                keep(view.pan(dx, dy))
            }
            _ => {
                let at = (
                    map.step_at(cx + (i % 7) as f64 * 11.0),
                    map.bytes_at(cy + (i % 5) as f64 * 9.0),
                );
                let (fx, fy) = factors(render::wheel_zoom(100.0));
                keep(view.zoom(fx, fy, at))
            }
        };
        views.push(view);
    }
    views
}

fn parse(name: &str, bytes: &[u8]) -> Load {
    let mut loader = Loader::new();
    loader.begin_file(name);
    for chunk in bytes.chunks(CHUNK) {
        loader.feed(chunk);
    }
    loader.end_file();
    loader.finish()
}

fn parse_and_analyse(name: &str, bytes: &[u8]) -> (Load, Vec<Analysis>) {
    let load = parse(name, bytes);
    let analyses = load.modules.iter().map(analysis::analyze).collect();
    (load, analyses)
}

/// "1 module (46,594 allocations, 177,800 values)".
fn describe(modules: &[Module]) -> String {
    let allocations: usize = modules.iter().map(|m| m.allocations.len()).sum();
    let values: usize = modules.iter().map(|m| m.values.len()).sum();
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
        let spans = |zoom| {
            let views = scripted_views(full, rect, 120, zoom);
            assert_eq!(views.len(), 121);
            let narrowest = |span: fn(&render::Viewport) -> f64| {
                views.iter().map(span).fold(f64::INFINITY, f64::min)
            };
            (narrowest(|v| v.x1 - v.x0), narrowest(|v| v.y1 - v.y0))
        };
        let (both_x, both_y) = spans((true, true));
        assert!(both_x < 1000.0 && both_y < 1e8, "{both_x} {both_y}");
        let (time_x, time_y) = spans((true, false));
        assert!(time_x < 1000.0 && time_y == 1e9, "{time_x} {time_y}");
        let (bytes_x, bytes_y) = spans((false, true));
        assert!(bytes_x == 10_000.0 && bytes_y < 1e8, "{bytes_x} {bytes_y}");
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_options_and_operands() {
        let args = strings(&[
            "a.txt",
            "--svg",
            "out.svg",
            "--width=900",
            "dir",
            "--",
            "--odd",
        ]);
        let Ok(a) = Args::parse(&args, &["--json"], &["--svg", "--width"]) else {
            panic!()
        };
        assert_eq!(a.operands, ["a.txt", "dir", "--odd"]);
        assert_eq!(a.value("--svg"), Some("out.svg"));
        assert!(matches!(a.number::<u32>("--width"), Ok(Some(900))));
        assert!(!a.switch("--json"));
        assert!(matches!(
            Args::parse(&strings(&["--nope"]), &[], &[]),
            Err(Failure::Usage(_))
        ));
        assert!(matches!(
            Args::parse(&strings(&["--svg"]), &[], &["--svg"]),
            Err(Failure::Usage(_))
        ));
        let Ok(a) = Args::parse(&strings(&["--width", "x"]), &[], &["--width"]) else {
            panic!()
        };
        assert!(matches!(a.number::<u32>("--width"), Err(Failure::Usage(_))));
    }

    #[test]
    fn exit_codes() {
        assert_eq!(run(&strings(&["--help"])), 0);
        assert_eq!(run(&strings(&["frobnicate"])), 2);
        assert_eq!(run(&strings(&["summary"])), 2);
        assert_eq!(run(&strings(&["summary", "/nonexistent/bufscope/file"])), 1);
        assert_eq!(run(&strings(&["render", "x.txt"])), 2);
    }

    #[test]
    fn folders_give_their_dump_files_in_name_order() {
        let dir = std::env::temp_dir().join(format!("bufscope-cli-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub.buffer-assignment.txt")).unwrap();
        for name in [
            "b.live-range.txt.gz",
            "a.buffer-assignment.txt",
            "a.buffer-assignment-values.txt",
            "a.memory-usage-report.txt",
            "notes.txt",
            "a.buffer-assignment.txt.bak",
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        let found = folder_dumps(&dir).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            names,
            [
                "a.buffer-assignment-values.txt",
                "a.buffer-assignment.txt",
                "a.memory-usage-report.txt",
                "b.live-range.txt.gz"
            ]
        );
    }

    #[test]
    fn median_of_runs() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }
}

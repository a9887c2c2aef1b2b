//! The `bufscope` command line (native only): `summary`, `diff`, `render`, `html`, `bench`,
//! `generate`, `whatif`, `fit` and `sweep`.
//!
//! Owns: the commands, their arguments (clap, derived from the types below, which also
//! write `--help`) and what they print. Reading dump files and folders into the core's
//! [`bufscope::pipeline`] is [`input`]'s; the scale benchmark is [`bench`]'s.
//!
//! Exit codes: 0 done (and `--help`, `--version`); 1 nothing to show (no module could be
//! read, an output could not be written); 2 the arguments are wrong (clap's message and
//! usage line on stderr).

mod bench;
mod bodies;
mod diff;
mod html;
mod input;
mod summary_args;
mod sweep;
mod whatif;

use bufscope::analysis::Analysis;
use bufscope::answers::capacity::Capacity;
use bufscope::model::Module;
use bufscope::render;
use bufscope::summary::answers::SummaryOptions;
use bufscope::summary::oom as oom_summary;
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Files are read and fed to the pipeline in chunks of this size.
pub const CHUNK: usize = 4 << 20;

/// Reads `file` to its end through `buf`, giving `feed` each piece read (a read that was
/// interrupted is tried again).
pub fn stream(file: &mut impl std::io::Read, buf: &mut [u8], mut feed: impl FnMut(&[u8])) -> std::io::Result<()> {
    loop {
        match file.read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

const PATHS: &str = "\
PATH is a dump file or a folder. A file named explicitly is read whatever its name; from a
folder (not recursively) bufscope reads the files ending in buffer-assignment.txt,
buffer-assignment-values.txt, live-range.txt or memory-usage-report.txt (each optionally
.gz), in name order; when none is named so, every .txt and .txt.gz file.";

/// bufscope: a viewer for XLA buffer-assignment dumps
#[derive(Parser)]
#[command(name = "bufscope", version, arg_required_else_help = true, after_help = PATHS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Threads the read runs on (default: BUFSCOPE_WORKERS, else the machine's cores): 1
    /// reads on one; 2 reads `Used values` behind the rest; from 3 on, its bodies are cut
    /// into pieces read apart
    #[arg(long, global = true, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=256))]
    workers: Option<u32>,
}

#[derive(Subcommand)]
enum Command {
    Summary(SummaryArgs),
    Diff(diff::DiffArgs),
    Render(RenderArgs),
    Html(html::HtmlArgs),
    Bench(bench::BenchArgs),
    Generate(GenerateArgs),
    Whatif(whatif::WhatifArgs),
    Fit(whatif::FitArgs),
    Sweep(sweep::SweepArgs),
}

/// Key figures of every module, as a table or JSON
///
/// Per module: allocations, values, bytes, and per memory space the allocated bytes and the
/// peak of live bytes; then what the live bytes at the peak are made of (source lines,
/// folded op_name groups, categories), padding, the three peaks (bufscope's, XLA's, XProf's)
/// explained, XProf's fragmentation, the capacity verdict and the rematerialisation or
/// offload candidates.
#[derive(Args)]
#[command(args_override_self = true, after_help = PATHS)]
struct SummaryArgs {
    /// Print one JSON object instead of a table
    #[arg(long)]
    json: bool,
    /// Hold the peak of memory space 0 (HBM on a TPU; another with --capacity-space)
    /// against this capacity: a size (16GiB, 40GB, 40e9, shown as typed) or a device (v5e:
    /// the 15.75 GiB XLA can use, "TPU v4", a100-80gb); other spaces get no verdict
    #[arg(long, value_name = "SIZE|DEVICE", value_parser = summary_args::capacity,
        long_help = summary_args::capacity_help("Hold the peak of memory space 0 (HBM on a TPU; another with \
            --capacity-space) against this capacity (other spaces get no verdict)"))]
    capacity: Option<Capacity>,
    /// The memory space --capacity is set on: its colour (0, 1, 6) or XLA's name (default,
    /// vmem, smem, color_6)
    #[arg(long, value_name = "SPACE", default_value = "0", value_parser = summary_args::space)]
    capacity_space: u32,
    /// Rows of each ranked list
    #[arg(long, value_name = "N", default_value_t = 5)]
    top: usize,
    /// Answer at this step of the schedule instead of each memory space's peak
    #[arg(long, value_name = "T")]
    step: Option<u32>,
    /// Dump files or folders of dumps
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
}

/// Draws a module as an SVG (or a PNG without text), one panel per memory space
#[derive(Args)]
#[command(args_override_self = true, after_help = PATHS)]
struct RenderArgs {
    /// Dump files or folders of dumps
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Where to write the SVG; '-' for standard output
    #[arg(long, value_name = "OUT.svg", required_unless_present = "png")]
    svg: Option<PathBuf>,
    /// Where to write the same drawing as a PNG, without its text (a thumbnail); '-' for
    /// standard output
    #[arg(long, value_name = "OUT.png")]
    png: Option<PathBuf>,
    /// The module to draw (a name, or a part of one name); by default the one with the most
    /// allocated bytes
    #[arg(long, value_name = "NAME")]
    module: Option<String>,
    /// Width of the drawing in pixels
    #[arg(long, value_name = "PX", default_value_t = 1400)]
    width: u32,
    /// The memory space --capacity is set on: its colour (0, 1, 6) or XLA's name (default,
    /// vmem, smem, color_6)
    #[arg(long, value_name = "SPACE", default_value = "0", value_parser = summary_args::space)]
    capacity_space: u32,
    /// Draw this capacity on memory space 0's curve (or --capacity-space's: a line, the part over it shaded,
    /// the verdict at the peak): a size (16GiB, 40GB, 40e9) or a device (v5e: the 15.75 GiB XLA can use, "TPU v4")
    #[arg(long, value_name = "SIZE|DEVICE", value_parser = summary_args::capacity,
        long_help = summary_args::capacity_help("Draw this capacity on memory space 0's curve (or \
            --capacity-space's: a line, the part over it shaded, the verdict at the peak)"))]
    capacity: Option<Capacity>,
}

/// Writes a bigger, valid dump for scale tests
///
/// SRC's program repeated in one module with fresh ids and names until OUT has at least
/// SIZE bytes.
#[derive(Args)]
#[command(args_override_self = true)]
struct GenerateArgs {
    /// A one-file dump with all its sections
    #[arg(value_name = "SRC")]
    src: PathBuf,
    /// At least this many bytes: 250M, 1G, 1GiB, 1000000 (decimal units; K/M/G or
    /// KiB/MiB/GiB)
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    size: u64,
    /// The file to write
    #[arg(long, value_name = "OUT")]
    out: PathBuf,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    run(std::env::args_os())
}

/// Runs the command line `args` (the program name first).
fn run(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with 0, mistakes to stderr with 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    bodies::set_workers(cli.workers.map_or(0, |n| n as usize));
    let result = match cli.command {
        Command::Summary(args) => summary(args),
        Command::Diff(args) => return diff::diff(args),
        Command::Render(args) => render(args),
        Command::Html(args) => html::html(args),
        Command::Bench(args) => bench::bench(args),
        Command::Generate(args) => generate(args),
        Command::Whatif(args) => whatif::whatif(args),
        Command::Sweep(args) => return sweep::sweep(args),
        Command::Fit(args) => match whatif::fit_command(args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => 0,
        Err(Failure(msg)) => {
            eprintln!("bufscope: {msg}");
            1
        }
    }
}

/// Why a command had nothing to show: one sentence for stderr (exit 1).
#[derive(Debug)]
struct Failure(String);

type CmdResult = Result<(), Failure>;

fn summary(args: SummaryArgs) -> CmdResult {
    let loaded = input::open(&args.paths)?;
    let options = SummaryOptions {
        top: args.top,
        capacity: args.capacity.map(|c| c.on(args.capacity_space)),
        step: args.step,
        space_capacity: None,
    };
    // An error message beside its dump: the module takes the message's capacity.
    let modules: Vec<_> = (loaded.modules.iter())
        .map(|a| (&a.module, &a.analysis))
        .collect();
    let (summary, paired) =
        oom_summary::summary_with_messages(&modules, &loaded.oom, &options, on_two_threads);
    let text = if args.json {
        let mut json = oom_summary::summary_json_paired(&summary, &loaded.oom, &paired);
        json.push('\n');
        json
    } else {
        let table = summary.to_table();
        oom_summary::after_table_paired(table, &loaded.oom, &paired)
    };
    // The process ends here: its memory goes back at once, without freeing the modules'
    // many blocks one by one (a few ms on a 94 MB dump).
    std::mem::forget(loaded);
    write_stdout(text.as_bytes())
}

/// [`bufscope::answers::Both`] on two threads: `second` on a new one (the first where no
/// thread can be started).
fn on_two_threads(first: &mut (dyn FnMut() + Send), second: &mut (dyn FnMut() + Send)) {
    let started = std::thread::scope(|s| {
        let other = std::thread::Builder::new()
            .name("answers".into())
            .spawn_scoped(s, &mut *second);
        first();
        other.is_ok()
    });
    if !started {
        second();
    }
}

fn render(args: RenderArgs) -> CmdResult {
    let loaded = input::open(&args.paths)?;
    let shown = input::pick_module(&loaded, args.module.as_deref())?;
    let (module, analysis) = (&shown.module, &shown.analysis);
    let style = render::Style {
        capacity: args.capacity.map(|c| c.on(args.capacity_space)),
        loop_bands: std::sync::Arc::new(render::loops::bands(&bufscope::analysis::loops::loops(module))),
        ..render::Style::default()
    };
    if let Some(out) = &args.svg {
        let svg = render::render_svg_styled(module, analysis, args.width, &style);
        write_drawing(out, svg.as_bytes(), module, analysis)?;
    }
    if let Some(out) = &args.png {
        let png = render::render_png_styled(module, analysis, args.width, &style);
        write_drawing(out, &png, module, analysis)?;
    }
    Ok(())
}

/// A drawing of `module` written to `out` ('-': standard output), and said on stderr.
fn write_drawing(out: &Path, bytes: &[u8], module: &Module, analysis: &Analysis) -> CmdResult {
    if out.as_os_str() == "-" {
        return write_stdout(bytes);
    }
    std::fs::write(out, bytes)
        .map_err(|e| Failure(format!("cannot write {}: {e}", out.display())))?;
    eprintln!(
        "bufscope: drew {} ({} memory space{}) into {}",
        module.name,
        analysis.spaces.len(),
        if analysis.spaces.len() == 1 { "" } else { "s" },
        out.display()
    );
    Ok(())
}

fn generate(args: GenerateArgs) -> CmdResult {
    let (src, out) = (args.src.display(), args.out.display());
    let bytes = std::fs::read(&args.src).map_err(|e| Failure(format!("cannot read {src}: {e}")))?;
    let copies = crate::generate::copies_for(bytes.len() as u64, args.size);
    let file = File::create(&args.out).map_err(|e| Failure(format!("cannot write {out}: {e}")))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = crate::generate::generate(&bytes, copies, &mut w)
        .map_err(|e| Failure(format!("{src}: {e}")))?;
    eprintln!("bufscope: wrote {out}: {copies} copies of {src}'s program, {written} bytes");
    Ok(())
}

/// `250M`, `1G`, `1GiB`, `1000000`: bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    bufscope::units::parse_bytes(s).ok_or_else(|| format!("cannot read the size '{s}'"))
}

fn write_stdout(bytes: &[u8]) -> CmdResult {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure(format!("cannot write the output: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("bufscope").chain(args.iter().copied()))
    }

    #[test]
    fn the_argument_types_agree_with_each_other() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_options_and_operands_in_any_order() {
        let Ok(Cli {
            command: Command::Render(r),
            ..
        }) = parse(&[
            "render",
            "a.txt",
            "--svg",
            "out.svg",
            "--width=900",
            "dir",
            "--",
            "--odd",
        ])
        else {
            panic!("render did not parse")
        };
        let paths: Vec<_> = r.paths.iter().map(|p| p.to_string_lossy()).collect();
        assert_eq!(paths, ["a.txt", "dir", "--odd"]);
        assert_eq!(r.svg, Some(PathBuf::from("out.svg")));
        assert_eq!((r.width, r.module), (900, None));
        // The last of a repeated option counts.
        let Ok(Cli {
            command: Command::Summary(s),
            ..
        }) = parse(&["summary", "--json", "x", "--json"])
        else {
            panic!("summary did not parse")
        };
        assert!(s.json);
        // --workers before or after the command, 1 to 256.
        for args in [&["summary", "--workers", "3", "x"][..], &["--workers", "3", "summary", "x"]] {
            assert_eq!(parse(args).ok().and_then(|c| c.workers), Some(3), "{args:?}");
        }
        assert_eq!(parse(&["summary", "x"]).ok().map(|c| c.workers), Some(None));
        for wrong in [
            &["summary", "--nope", "x"][..],
            &["summary", "--workers", "0", "x"],
            &["summary", "--workers", "many", "x"],
            &["render", "x", "--svg"],
            &["render", "x", "--svg", "o.svg", "--width", "x"],
            &["render", "x", "--svg", "o.svg", "--capacity", "a100"],
            &["render", "x", "--svg", "o.svg", "--capacity", "12 parsecs"],
            &["generate", "src", "--size", "12 parsecs", "--out", "o"],
        ] {
            let e = parse(wrong)
                .err()
                .unwrap_or_else(|| panic!("{wrong:?} parsed"));
            assert_eq!(e.exit_code(), 2, "{wrong:?}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("250MB"), Ok(250_000_000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("M").is_err());
    }

    #[test]
    fn exit_codes() {
        assert_eq!(run(["bufscope", "--help"]), 0);
        assert_eq!(run(["bufscope", "summary", "--help"]), 0);
        assert_eq!(run(["bufscope", "--version"]), 0);
        assert_eq!(run(["bufscope"]), 2);
        assert_eq!(run(["bufscope", "frobnicate"]), 2);
        assert_eq!(run(["bufscope", "summary"]), 2);
        assert_eq!(
            run(["bufscope", "summary", "/nonexistent/bufscope/file"]),
            1
        );
        assert_eq!(run(["bufscope", "render", "x.txt"]), 2);
        assert_eq!(run(["bufscope", "bench", "x.txt", "--runs", "0"]), 2);
        assert_eq!(run(["bufscope", "bench", "x.txt", "--zoom", "sideways"]), 2);
    }
}

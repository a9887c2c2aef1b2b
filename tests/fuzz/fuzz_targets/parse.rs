//! The parser, analysis, search and rendering on arbitrary bytes.
//!
//! Input: a control line, then the dump. The control line's first byte (the selector)
//! picks the file name (bits 0-1: which dump suffix, so the memory-usage report grammar is
//! reached too), seeds the chunk sizes and the sort column (bits 2-7), and with bits 6 and 7
//! both set asks for the SVG; the rest of the control line is a search pattern. Everything after the
//! first `\n` is one dump file's bytes.
//!
//! Checked: nothing panics or hangs; reading the bytes in random chunks through
//! `Pipeline::feed` and joining and analysing them in random pieces (`Pipeline::step`) gives
//! the same modules, values, warnings and analyses as one `pipeline::open_files` call, and the
//! same out-of-memory messages (for a file that is no dump), and so does the deferred read
//! (`Loader::defer_uses`, then `parse::complete_through` from the skipped bytes, half the
//! time through the buffers the page's worker hands over; instruction facts and uses
//! compared too) whenever completing does not ask for one pass; the OOM reader's
//! own result on
//! the bytes is that of the loader's search, and its summary text and JSON are written.
//! The same bytes are also read as an HLO module text (`parse::hlo`): in random chunks as
//! whole, and that text given to every module read, whose values are then named, placed in
//! the source and categories, and shown as instructions through it.

#![no_main]

use bufscope::pipeline::{open_files, Loaded, Pipeline};
use bufscope::summary::oom as oom_summary;
use bufscope::{query, render, summary};
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 4] = [
    "module_0001.fuzz-buffer-assignment.txt",
    "module_0001.fuzz-buffer-assignment-values.txt",
    "module_0001.fuzz-live-range.txt",
    "module_0001.fuzz-memory-usage-report.txt",
];

/// Modules this small are also rendered, when the selector's top two bits are set
/// (rendering is the slowest part: three inputs in four skip it).
const RENDER_MAX_VALUES: usize = 64;
const RENDER_MAX_ALLOCATIONS: usize = 64;

/// xorshift64*: the chunk sizes, deterministic per input.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn streamed(name: &str, bytes: &[u8], seed: u64) -> Loaded {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    // Tiny chunks (cut inside every token, the gzip header, CRLF), medium, large; tiny
    // ones, the slowest, an eighth of the time.
    let max = [3u64, 64, 64, 4096, 4096, 4096, 4096, 4096][(rng.next() % 8) as usize];
    let mut pipeline = Pipeline::new();
    pipeline.begin_file(name);
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = (1 + rng.next() % max) as usize;
        let (chunk, tail) = rest.split_at(n.min(rest.len()));
        pipeline.feed(chunk);
        rest = tail;
    }
    pipeline.end_file();
    // Joined and analysed in pieces of a random size (1 to 64 units), as the browser does.
    let work = 1 + (rng.next() % 64) as usize;
    while !pipeline.step(work).is_done() {}
    pipeline.finish()
}

/// The file read with `Used values` deferred (in random chunks), then completed; none when
/// completing asks for the file to be read again in one pass.
fn deferred(name: &str, bytes: &[u8], seed: u64) -> Option<bufscope::Load> {
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    let mut loader = bufscope::Loader::new();
    loader.defer_uses(true);
    loader.begin_file(name);
    // Half the time as the page reads: once a body is being skipped, its end is looked for
    // from the file's end and the bytes up to it are not fed.
    let mut jump = rng.next() % 2 == 0;
    let mut at = 0;
    while at < bytes.len() {
        let n = (1 + rng.next() % 4096) as usize;
        let end = (at + n).min(bytes.len());
        loader.feed(&bytes[at..end]);
        at = end;
        if jump && loader.skipping().is_some() {
            jump = false;
            let slice = 1 + rng.next() % 512;
            let mut look = bufscope::parse::BodyEnd::new(at as u64, bytes.len() as u64, slice);
            while let Some(r) = look.next() {
                look.look(&bytes[r.start as usize..r.end as usize]);
            }
            if let Some((to, at_end)) = look.answer() {
                if loader.jump(to, at_end) {
                    at = to as usize;
                }
            }
        }
    }
    let mut load = loader.finish();
    let deferred = std::mem::take(&mut load.deferred);
    // Half the time through the buffers the page's worker hands over.
    let handed = rng.next() % 2 == 0;
    let through = |part: bufscope::parse::UsedPart, first: &bufscope::parse::DeferredUses| {
        if !handed {
            return Ok(part);
        }
        bufscope::parse::UsedPart::from_handoff(part.into_handoff(), first)
    };
    bufscope::parse::complete_through(
        &mut load.modules,
        &deferred,
        |n| (n == name).then_some(bytes),
        through,
    )
    .ok()?;
    Some(load)
}

/// The deferred read's modules are the one-pass ones, facts and uses included.
fn same_deferred(a: &Loaded, b: &bufscope::Load) {
    assert_eq!(a.errors, b.errors, "errors differ when deferred");
    assert_eq!(
        a.modules.len(),
        b.modules.len(),
        "module count differs when deferred"
    );
    for (ax, y) in a.modules.iter().zip(&b.modules) {
        let x = &ax.module;
        assert_eq!(x.name, y.name);
        assert_eq!(
            x.values.len(),
            y.values.len(),
            "values differ when deferred"
        );
        let wx: Vec<_> = x.warnings.iter().map(|w| (w.line, &w.message)).collect();
        let wy: Vec<_> = y.warnings.iter().map(|w| (w.line, &w.message)).collect();
        assert_eq!(wx, wy, "warnings differ when deferred");
        for (vx, vy) in x.values.iter().zip(&y.values) {
            let (ix, iy) = (x.instruction(vx), y.instruction(vy));
            assert_eq!(vx.live, vy.live, "live ranges differ when deferred");
            assert_eq!(
                x.positions_and_uses(vx),
                y.positions_and_uses(vy),
                "uses differ when deferred"
            );
            assert_eq!(
                (x.str(ix.opcode), x.str(ix.op_name), x.str(ix.source_file)),
                (y.str(iy.opcode), y.str(iy.op_name), y.str(iy.source_file)),
                "instruction facts differ when deferred"
            );
            assert_eq!(ix.source_line, iy.source_line);
        }
    }
}

fn same(a: &Loaded, b: &Loaded) {
    assert_eq!(
        a.errors, b.errors,
        "errors differ between one chunk and streaming"
    );
    assert_eq!(
        a.oom, b.oom,
        "OOM messages differ between one chunk and streaming"
    );
    assert_eq!(a.modules.len(), b.modules.len(), "module count differs");
    for (ax, ay) in a.modules.iter().zip(&b.modules) {
        let (x, y) = (&ax.module, &ay.module);
        assert_eq!(x.name, y.name);
        assert_eq!(
            x.allocations.len(),
            y.allocations.len(),
            "allocations differ"
        );
        assert_eq!(x.values.len(), y.values.len(), "values differ");
        let wx: Vec<_> = x.warnings.iter().map(|w| (w.line, &w.message)).collect();
        let wy: Vec<_> = y.warnings.iter().map(|w| (w.line, &w.message)).collect();
        assert_eq!(wx, wy, "warnings differ between one chunk and streaming");
        assert_eq!(
            format!("{:?}", ax.analysis),
            format!("{:?}", ay.analysis),
            "analysis differs between one go and pieces"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let (control, dump) = match memchr_newline(data) {
        Some(p) => (&data[..p], &data[p + 1..]),
        None => (&data[..0], data),
    };
    let selector = control.first().copied().unwrap_or(0);
    let pattern = String::from_utf8_lossy(control.get(1..).unwrap_or(&[]));
    let name = NAMES[usize::from(selector & 3)];

    let whole = open_files([(name, dump)]);
    let parts = streamed(name, dump, u64::from(selector >> 2) ^ dump.len() as u64);
    same(&whole, &parts);
    if let Some(d) = deferred(name, dump, u64::from(selector) ^ dump.len() as u64) {
        same_deferred(&whole, &d);
    }

    let matcher = query::compile(&pattern).ok();
    for shown in &whole.modules {
        let (m, a) = (&shown.module, &shown.analysis);
        if selector & 0xc0 == 0xc0
            && m.values.len() <= RENDER_MAX_VALUES
            && m.allocations.len() <= RENDER_MAX_ALLOCATIONS
        {
            let svg = render::render_svg(m, a, 320);
            assert!(svg.starts_with("<svg"));
        }
        if let Some(re) = &matcher {
            let mut hits = query::matching_values(m, re);
            let column = query::Column::ALL[usize::from(selector >> 2) % query::Column::ALL.len()];
            query::sort_values(m, &mut hits, column, selector & 0x20 != 0);
            let _ = query::group_by_op_name(m, &hits);
        }
    }
    hlo_text(&whole, dump, u64::from(selector) ^ dump.len() as u64);
    let s = summary::Summary::new(whole.modules.iter().map(|s| (&s.module, &s.analysis)));
    let _ = oom_summary::summary_json(&s, &whole.oom);
    let _ = oom_summary::to_text(&whole.oom);
    // A text file the loader searched (no dump found) gives what the OOM reader gives on
    // its bytes.
    let direct = bufscope::parse::oom::read_oom_bytes(dump).ok();
    let not_a_dump = |e: &String| {
        [
            "is empty.",
            "is not a text file",
            "no XLA out-of-memory message",
        ]
        .iter()
        .any(|s| e.contains(s))
    };
    let searched = whole.modules.is_empty()
        && whole.errors.len() + whole.oom.len() == 1
        && whole.errors.iter().all(not_a_dump);
    if searched
        && !bufscope::parse::is_gzip(dump)
        && whole.oom.iter().all(|f| f.warnings.is_empty())
    {
        assert_eq!(
            whole.oom.first().map(|f| &f.log),
            direct.as_ref(),
            "the loader's search differs"
        );
    }
});

/// The bytes as an HLO module text, whole and in random chunks (the same text and
/// warnings), then given to each module of `whole`: every value's source location, stack,
/// pytree path, category and instruction view through it, and the summary.
fn hlo_text(whole: &Loaded, bytes: &[u8], seed: u64) {
    use bufscope::parse::hlo::{read_hlo, HloReader};
    let name = "module_0001.fuzz.after_optimizations.txt";
    let read = read_hlo(name, bytes);
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut reader = HloReader::new(name);
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = (1 + rng.next() % 512) as usize;
        let (chunk, tail) = rest.split_at(n.min(rest.len()));
        reader.feed(chunk);
        rest = tail;
    }
    assert_eq!(reader.finish(), read, "the HLO text read in chunks differs");
    for shown in &whole.modules {
        let mut m = shown.module.clone();
        m.hlo = Some(Box::new(read.text.clone()));
        let cats = bufscope::answers::categories::Categories::new(&m);
        for (k, v) in m.values.iter().enumerate().take(256) {
            let _ = query::source_location(&m, v).map(|s| s.to_string());
            let _ = query::source_stack(&m, v);
            let _ = query::display_name(&m, v);
            let _ = query::instruction_view(&m, v);
            let _ = cats.of(&m, k as u32);
        }
        let _ = summary::Summary::new([(&m, &shown.analysis)]).to_json();
    }
}

fn memchr_newline(data: &[u8]) -> Option<usize> {
    data.iter().position(|&b| b == b'\n')
}

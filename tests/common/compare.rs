//! Comparing modules read in different ways: a module's text fingerprint and its
//! analysis's, the structural sanity of any module the parser returns, two loads asserted
//! the same, and the one-pass read checked against the deferred one. Also the small helpers
//! of the tests that damage files (line starts, a module with one file replaced).

use super::ModuleFiles;
use super::{load_deferred_seeded, seed_of};

/// Everything a module says, as text, except the names of the files it came from and its
/// warnings: two reads of the same dump (CRLF, gzip, stdout wrapper, chunked) must agree.
pub fn fingerprint(m: &bufscope::model::Module) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let s = |x| m.str(x).to_string();
    writeln!(out, "module {}", m.name).unwrap();
    for a in &m.allocations {
        writeln!(
            out,
            "alloc {} size {} color {} page {:?} param {:?} out {:?} flags {:?} values {:?}",
            a.index,
            a.size,
            a.color,
            a.page,
            a.parameter
                .map(|p| (p.number, s(p.shape), s(p.shape_index))),
            a.output_shape.map(s),
            a.flags,
            a.values
        )
        .unwrap();
    }
    for v in &m.values {
        let i = m.instruction(v);
        writeln!(
            out,
            "value {} {} {} phi {} color {:?} alloc {} off {} size {} shape {} logical {:?} live {:?} uses {:?} | {} {} {}:{} {:?} {}",
            v.id,
            s(i.name),
            s(v.index),
            v.phi,
            v.color,
            v.allocation,
            v.offset,
            v.size,
            s(v.shape),
            v.logical_size,
            v.live.map(|r| (r.start, r.end)),
            m.positions_and_uses(v),
            s(i.opcode),
            s(i.op_name),
            s(i.source_file),
            i.source_line,
            i.stack_frame_id,
            i.name.is_empty()
        )
        .unwrap();
    }
    writeln!(out, "total line {:?}", m.total_bytes_line).unwrap();
    if let Some(sc) = &m.schedule {
        let seq: Vec<String> = sc
            .sequence
            .iter()
            .map(|&i| s(m.instructions[i as usize].name))
            .collect();
        writeln!(out, "schedule max {} seq {:?}", sc.max, seq).unwrap();
        for o in &sc.orphan_ranges {
            writeln!(
                out,
                "orphan {} {} {:?}",
                s(m.instructions[o.instruction as usize].name),
                s(o.index),
                o.live
            )
            .unwrap();
        }
        if let Some(p) = &sc.peak {
            writeln!(out, "peak at {}", p.time).unwrap();
            for e in &p.entries {
                writeln!(
                    out,
                    "  {}{} {}",
                    s(m.instructions[e.instruction as usize].name),
                    s(e.index),
                    e.bytes
                )
                .unwrap();
            }
        }
        writeln!(out, "peak undetermined {}", sc.peak_undetermined).unwrap();
    }
    writeln!(out, "stack total {:?}", m.stack_trace_total).unwrap();
    for n in &m.stack_trace {
        writeln!(
            out,
            "  node {} {} {} {} {}",
            n.depth,
            s(n.name),
            n.total,
            n.current,
            n.remaining
        )
        .unwrap();
    }
    if let Some(r) = &m.memory_report {
        writeln!(out, "report total {:?}", r.total_bytes).unwrap();
        for sp in &r.spaces {
            writeln!(
                out,
                "  space {} {} {}",
                s(sp.name),
                sp.color,
                sp.total_bytes
            )
            .unwrap();
        }
    }
    out
}

/// Structural sanity of any module the parser returns, whatever its input: indices in
/// range, every value inside its allocation or a warning, the analysis runs.
pub fn check_sane(m: &bufscope::model::Module, what: &str) {
    let n = m.values.len() as u32;
    for (ai, a) in m.allocations.iter().enumerate() {
        assert!(
            a.values.start <= a.values.end && a.values.end <= n,
            "{what}: allocation {ai} values {:?} of {n}",
            a.values
        );
    }
    for (i, v) in m.values.iter().enumerate() {
        assert!(
            (v.allocation as usize) < m.allocations.len(),
            "{what}: value {i} allocation out of range"
        );
        assert!(
            (v.instruction as usize) < m.instructions.len(),
            "{what}: value {i} instruction out of range"
        );
        let a = &m.allocations[v.allocation as usize];
        assert!(
            a.values.contains(&(i as u32)),
            "{what}: value {i} not in its allocation's range"
        );
        if v.offset.checked_add(v.size).is_none_or(|end| end > a.size) {
            assert!(
                !m.warnings.is_empty(),
                "{what}: value {} outside its allocation, no warning",
                m.value_name(v)
            );
        }
        let _ = m.value_name(v);
        let _ = m.positions_and_uses(v);
        let _ = bufscope::analysis::value_kind(m, v);
    }
    if let Some(s) = &m.schedule {
        for &i in &s.sequence {
            assert!(
                (i as usize) < m.instructions.len(),
                "{what}: sequence entry out of range"
            );
        }
        let max = s.max;
        for v in &m.values {
            if let Some(r) = v.live {
                if r.start > r.end || r.end > max {
                    assert!(
                        !m.warnings.is_empty(),
                        "{what}: live range {r:?} of {} outside 0..={max}, no warning",
                        m.value_name(v)
                    );
                }
            }
        }
    }
}

/// `check_sane`, then the analysis, when its time axis is of a sane length (a corrupted
/// number could otherwise ask it for a curve of billions of steps).
pub fn check_sane_and_analyze(m: &bufscope::model::Module, what: &str) {
    check_sane(m, what);
    let longest = m
        .values
        .iter()
        .filter_map(|v| v.live)
        .map(|r| r.end as u64)
        .chain(m.schedule.iter().map(|s| s.max as u64))
        .max()
        .unwrap_or(0);
    if longest <= 1_000_000 {
        let an = bufscope::analysis::analyze(m);
        for s in &an.spaces {
            let _ = s.blocks(m).count();
        }
    }
}

/// Line start offsets of `bytes` (0 and after every `\n`), and the end.
pub fn line_starts(bytes: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(
        bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    v
}

/// Reads a module's files with file number `file` replaced by `bytes`.
pub fn load_module_with(m: &ModuleFiles, file: usize, bytes: &[u8]) -> bufscope::Load {
    let inputs: Vec<(&str, &[u8])> = m
        .files
        .iter()
        .enumerate()
        .map(|(i, (n, b))| (n.as_str(), if i == file { bytes } else { b.as_slice() }))
        .collect();
    load_both_ways(&inputs, &m.label)
}

/// Every warning of every module read.
pub fn all_warnings(load: &bufscope::Load) -> Vec<&bufscope::model::Warning> {
    load.modules.iter().flat_map(|m| &m.warnings).collect()
}

/// [`check_sane_and_analyze`] on every module read.
pub fn sane(load: &bufscope::Load, what: &str) {
    for m in &load.modules {
        check_sane_and_analyze(m, what);
    }
}

/// What a module's analysis draws: steps, and per memory space its layout, values, curve
/// and peak.
pub fn analysis_fingerprint(m: &bufscope::model::Module) -> String {
    let a = bufscope::analysis::analyze(m);
    let mut out = format!("{} steps {}", m.name, a.steps);
    for s in &a.spaces {
        let curve = s.curve.iter().fold(0u64, |h, &b| h.rotate_left(7) ^ b);
        out.push_str(&format!(
            "\n space {} height {} slots {} timed {:?} timeless {:?} peak {} at {:?} curve {curve:x}",
            s.color,
            s.height,
            s.layout.len(),
            s.timed,
            s.timeless,
            s.peak_bytes,
            s.peak_time
        ));
    }
    out
}

/// Panics unless two loads read the same: every module's [`fingerprint`], files and
/// warnings (in order, with their lines), the errors and the out-of-memory files.
pub fn assert_same_load(one_pass: &bufscope::Load, other: &bufscope::Load, what: &str) {
    type ModuleView = (String, Vec<String>, Vec<bufscope::model::Warning>);
    let view = |l: &bufscope::Load| {
        let modules: Vec<ModuleView> = l
            .modules
            .iter()
            .map(|m| (fingerprint(m), m.files.clone(), m.warnings.clone()))
            .collect();
        (modules, l.errors.clone(), l.oom.len())
    };
    let (a, b) = (view(one_pass), view(other));
    if a != b {
        let first = a.0.iter().zip(&b.0).position(|(x, y)| x != y).map(|i| {
            let line = a.0[i].0.lines().zip(b.0[i].0.lines()).find(|(x, y)| x != y);
            format!(
                "module {i}: first differing line {line:?}\nwarnings one pass {:?}\ndeferred {:?}",
                a.0[i].2, b.0[i].2
            )
        });
        panic!(
            "{what}: the deferred read differs from one pass ({} vs {} modules, errors {:?} vs {:?}); {}",
            a.0.len(),
            b.0.len(),
            a.1,
            b.1,
            first.unwrap_or_default()
        );
    }
}

/// [`bufscope::load_files`] (one pass), checked against the shipped machine's read
/// ([`load_deferred_seeded`], its lanes and pieces in an order seeded by `what`): the same
/// modules once completed, and the first read's analysis already the complete one's.
pub fn load_both_ways(files: &[(&str, &[u8])], what: &str) -> bufscope::Load {
    let one_pass = bufscope::load_files(files.iter().copied());
    let (first, deferred) = load_deferred_seeded(files, 4093, seed_of(what), |p, _| Ok(p));
    assert_same_load(&one_pass, &deferred, what);
    if let Some(first) = first {
        let complete: Vec<String> = one_pass.modules.iter().map(analysis_fingerprint).collect();
        assert_eq!(first, complete, "{what}: the first read's analysis");
    }
    one_pass
}

//! The deferred read (`Loader::defer_uses`: the bodies of `Used values` skipped, the
//! modules joined and analysed without them, then completed by `parse::complete` from the
//! skipped bytes) gives the modules one pass gives, on every real dump (tests/fixtures and
//! ../shared), in any chunking, and the first read's analysis is already the complete
//! one's. Near the skip's boundaries, lines dropped, doubled or changed, and files cut
//! there, read the same (completing falls back to one pass where the skip guessed wrong).
//! The cut and mutation tests (cut_points.rs, robustness.rs, proptest_mutations.rs,
//! hostile.rs) check the same through `common::load_both_ways`.

mod common;

use bufscope::parse::{DeferredUses, Handoff, Next, Note, Reading, UsedPart};
use common::*;

/// Reads `m` both ways (checked equal) and requires the deferred read to have skipped a
/// body and completed it without falling back to one pass, where `m` has `Used values`.
fn check_module(m: &ModuleFiles) {
    let inputs = m.inputs();
    let load = load_both_ways(&inputs, &m.label);
    assert!(
        !load.modules.is_empty() || m.folder.starts_with("oom"),
        "{}: no module",
        m.label
    );
    let has_used = inputs.iter().any(|(n, b)| {
        !bufscope::parse::is_gzip(b) && !n.is_empty() && contains_line(b, b"Used values:")
    });
    if has_used {
        for jump in [false, true] {
            let (first, load) = load_deferred(&inputs, 1 << 20, jump);
            let label = format!("{} (jump {jump})", m.label);
            assert!(first.is_some(), "{label}: completing fell back to one pass");
            assert_same_load(&bufscope::load_files(inputs.iter().copied()), &load, &label);
        }
        // As the page's worker hands it over: the bodies as JSON, the part as buffers.
        let (first, load) = load_deferred_through(&inputs, 1 << 20, true, handed_over);
        let label = format!("{} (handed over)", m.label);
        assert!(first.is_some(), "{label}: completing fell back to one pass");
        assert_same_load(&bufscope::load_files(inputs.iter().copied()), &load, &label);
        let mut loader = bufscope::Loader::new();
        loader.defer_uses(true);
        for (n, b) in &inputs {
            loader.begin_file(n);
            loader.feed(b);
            loader.end_file();
        }
        let partial = loader.finish();
        assert!(
            !partial.deferred.is_empty(),
            "{}: nothing deferred",
            m.label
        );
        for d in &partial.deferred {
            let (_, bytes) = inputs.iter().find(|(n, _)| *n == d.file).unwrap();
            let body = &bytes[d.bytes.start as usize..d.bytes.end as usize];
            let lines =
                body.split(|&c| c == b'\n').count() as u64 - u64::from(body.ends_with(b"\n"));
            assert_eq!(lines, d.lines, "{}: the body's lines", m.label);
            let before = bytes[..d.bytes.start as usize]
                .iter()
                .filter(|&&c| c == b'\n')
                .count();
            assert_eq!(
                before as u64 + 1,
                d.first_line,
                "{}: the body's first line",
                m.label
            );
        }
    }
}

/// `part` read back from the buffers the page's worker hands over, for the module whose
/// first body `first` is, itself read back from the JSON the page hands the worker.
fn handed_over(part: UsedPart, first: &DeferredUses) -> Result<UsedPart, String> {
    let json = serde_json::to_string(first).unwrap();
    let first: DeferredUses = serde_json::from_str(&json).unwrap();
    UsedPart::from_handoff(part.into_handoff(), &first)
}

fn contains_line(bytes: &[u8], line: &[u8]) -> bool {
    bytes
        .split(|&c| c == b'\n')
        .any(|l| l.strip_suffix(b"\r").unwrap_or(l) == line)
}

#[test]
fn every_fixture_reads_the_same_deferred() {
    let modules = fixture_modules();
    assert!(modules.len() > 10);
    for m in &modules {
        check_module(m);
    }
}

#[test]
fn every_shared_dump_reads_the_same_deferred() {
    let Some(dir) = shared_dumps_or_skip("every_shared_dump_reads_the_same_deferred") else {
        return;
    };
    // The 94 MB one is compared in an optimised build, by real_dumps.rs.
    let modules = modules_under(&dir, |_, stem| stem != "cpu_deep_unrolled_500");
    assert!(!modules.is_empty(), "no dump under {}", dir.display());
    for m in &modules {
        check_module(m);
    }
    eprintln!("deferred: {} shared modules compared", modules.len());
}

/// The lines of `bytes` with `line` replaced by what `edit` makes of it (none: dropped).
fn edit_line(bytes: &[u8], line: usize, edit: impl Fn(&[u8]) -> Option<Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 64);
    for (i, l) in bytes.split(|&c| c == b'\n').enumerate() {
        let l = if i == line { edit(l) } else { Some(l.to_vec()) };
        if let Some(l) = l {
            out.extend_from_slice(&l);
            out.push(b'\n');
        }
    }
    out.pop();
    out
}

/// Around the `Used values` header and the body's end, each line dropped, doubled, made a
/// header, given a CR, made garbage, a wrapper line or one that only starts like one, or
/// the file cut there: both reads agree.
#[test]
fn disturbed_boundaries_read_the_same() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, bytes) = m.dump_files().next().unwrap();
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    let header = lines.iter().position(|l| *l == "Used values:").unwrap();
    let end = (header + 1..lines.len())
        .find(|&i| lines[i].starts_with("HloLiveRange"))
        .unwrap_or(lines.len());
    let near: Vec<usize> = (header.saturating_sub(3)..header + 6)
        .chain(end.saturating_sub(6)..(end + 3).min(lines.len()))
        .collect();
    type Edit = fn(&[u8]) -> Option<Vec<u8>>;
    let edits: [(&str, Edit); 10] = [
        ("dropped", |_| None),
        ("doubled", |l| Some([l, b"\n", l].concat())),
        ("a header", |_| Some(b"HloLiveRange (max 9):".to_vec())),
        ("a second Used values", |_| Some(b"Used values:".to_vec())),
        ("with CR", |l| Some([l, b"\r"].concat())),
        ("garbage", |_| Some(b"garbage".to_vec())),
        ("a space-led garbage", |_| Some(b" garbage".to_vec())),
        ("a wrapper", |_| Some(b"*** End x.txt ***".to_vec())),
        // Not wrappers (no closing ` ***`): one pass reads them as malformed lines of the
        // section and reads on (the fuzzer found a deferred read that stopped there).
        ("a false wrapper", |_| Some(b"*** End x.txt".to_vec())),
        ("a false wrapper, begin", |_| {
            Some(b"*** Begin x.txt **".to_vec())
        }),
    ];
    let starts = line_starts(bytes);
    for &i in &near {
        for (what, edit) in &edits {
            let changed = edit_line(bytes, i, edit);
            load_both_ways(&[(name, &changed)], &format!("line {} {what}", i + 1));
        }
        if let Some(&at) = starts.get(i) {
            for cut in [at, at + 1, at.saturating_sub(1)] {
                let cut = &bytes[..cut.min(bytes.len())];
                load_both_ways(&[(name, cut)], &format!("cut at line {}", i + 1));
            }
        }
    }
}

/// A garbage line in the middle of an entry: one pass warns and reads on in `Used
/// values`; the deferred read's skip ends there, so completing falls back to one pass.
#[test]
fn a_wrong_guess_falls_back_to_one_pass() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, bytes) = m.dump_files().next().unwrap();
    let text = String::from_utf8_lossy(bytes);
    let at = text.find("\n positions:\n").expect("an entry") + 1;
    let changed = [&bytes[..at], b"garbage\n", &bytes[at..]].concat();
    let (first, load) = load_deferred(&[(name, &changed)], usize::MAX, false);
    assert!(first.is_none(), "completing should have refused");
    assert_same_load(
        &bufscope::load_files([(name, changed.as_slice())]),
        &load,
        "fallback",
    );
    assert!(load.modules[0]
        .warnings
        .iter()
        .any(|w| w.message.contains("malformed")));
}

/// Split files of one module (new XLA), in any order, join as in one pass.
#[test]
fn split_files_join_deferred() {
    let m = fixture_module("cpu/jax0.10.2/cpu_mlp_train");
    let mut inputs = m.inputs();
    assert!(inputs.len() >= 3, "{}: {} files", m.label, inputs.len());
    for _ in 0..inputs.len() {
        inputs.rotate_left(1);
        load_both_ways(&inputs, "split files");
    }
}

/// Stdout dumps: one module wrapped in `*** Begin/End ***`, and two modules in one file
/// (two bodies deferred from one file).
#[test]
fn wrapped_stdout_dumps_read_the_same() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, bytes) = m.dump_files().next().unwrap();
    let wrap = |n: &str| {
        [
            format!("*** Begin {n} ***\n").as_bytes(),
            bytes,
            format!("\n*** End {n} ***\n").as_bytes(),
        ]
        .concat()
    };
    let one = [b"log line\n".as_slice(), &wrap(name)].concat();
    load_both_ways(&[("stdout.txt", &one)], "one wrapped module");
    let two = [wrap(name), wrap("other.buffer-assignment.txt")].concat();
    let load = load_both_ways(&[("stdout.txt", &two)], "two wrapped modules");
    assert_eq!(load.modules.len(), 2);
    let (first, _) = load_deferred(&[("stdout.txt", &two)], 777, false);
    assert!(
        first.is_some(),
        "two wrapped modules completed without falling back"
    );
}

/// Gzip is read in one pass: nothing is deferred.
#[test]
fn gzip_is_not_deferred() {
    use std::io::Write;
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, bytes) = m.dump_files().next().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    let gz = gz.finish().unwrap();
    let mut loader = bufscope::Loader::new();
    loader.defer_uses(true);
    loader.begin_file(&format!("{name}.gz"));
    loader.feed(&gz);
    let load = loader.finish();
    assert!(load.deferred.is_empty());
    let gz_name = format!("{name}.gz");
    assert_same_load(
        &bufscope::load_files([(gz_name.as_str(), gz.as_slice())]),
        &load,
        "gzip",
    );
}

/// As the page reads: once the body is being skipped, its end is found from the file's end
/// and the body's bytes are never fed; the body is then exactly up to the next header, and
/// the completed module is the one-pass one. The body the command line reads ahead from the
/// bytes alone (`BodyStart`, `BodyEnd`) is the one listed, and completes the same.
#[test]
fn the_body_is_jumped_over() {
    for label in [
        "cpu/jax0.6.2/cpu_tiny",
        "cpu/jax0.6.2/cpu_mlp_train",
        "tpu/000_0cb419b3147a3cb6",
    ] {
        let m = fixture_module(label);
        let (name, bytes) = m.dump_files().next().unwrap();
        let mut loader = bufscope::Loader::new();
        loader.defer_uses(true);
        loader.begin_file(name);
        let mut at = 0;
        let mut jumped_to = None;
        while at < bytes.len() {
            let end = (at + 256).min(bytes.len());
            loader.feed(&bytes[at..end]);
            at = end;
            if jumped_to.is_none() && loader.skipping().is_some() {
                let mut look = bufscope::parse::BodyEnd::new(at as u64, bytes.len() as u64, 300);
                while let Some(r) = look.next() {
                    look.look(&bytes[r.start as usize..r.end as usize]);
                }
                let (to, at_end) = look.answer().expect("a place to jump to");
                assert!(loader.jump(to, at_end), "{label}: the jump was refused");
                jumped_to = Some(to);
                at = to as usize;
            }
        }
        loader.end_file();
        let mut load = loader.finish();
        let to = jumped_to.expect("the body was being skipped after a chunk");
        let header = String::from_utf8_lossy(bytes)
            .find("\nHloLiveRange")
            .unwrap() as u64
            + 1;
        assert_eq!(to, header, "{label}: jumped to the HloLiveRange header");
        let d = &load.deferred[0];
        assert!(d.jumped && d.bytes.end == header, "{label}: {d:?}");
        let deferred = std::mem::take(&mut load.deferred);
        // As the machine's read behind reads it ahead, from the bytes alone: the body
        // listed, not read again once listed.
        let files = [(name, bytes)];
        let (_, mut ahead, _) = Reading::new(inputs_of(&files), 256).into_lanes();
        let mut bounds = None;
        while let Next::Fetch(ask) = ahead.next() {
            let body = &bytes[ask.bytes.start as usize..ask.bytes.end as usize];
            body.chunks(100).for_each(|c| ahead.feed(c));
            bounds = bounds.or(ahead.mail().into_iter().find_map(|n| match n {
                Note::Bounds(from, to, at_end) => Some((from, to, at_end)),
                _ => None,
            }));
        }
        let d = &deferred[0];
        assert_eq!(bounds, Some((d.bytes.start, d.bytes.end, d.at_file_end)), "{label}");
        ahead.post(Note::Body(d.clone()));
        ahead.post(Note::Over);
        assert_eq!(ahead.next(), Next::Done, "{label}: the body read ahead is read again");
        let mut modules = load.modules.clone();
        ahead.finish().complete(modules.iter_mut().collect(), &deferred, &mut load.errors).unwrap();
        bufscope::parse::complete(&mut load.modules, &deferred, |_| Some(bytes)).unwrap();
        assert_same_load(&bufscope::load_files([(name, bytes)]), &load, label);
        load.modules = modules;
        assert_same_load(&bufscope::load_files([(name, bytes)]), &load, label);
    }
}

/// A warning after a body that was jumped over has an unknown line: completing refuses
/// (the page then reads the file again in one pass).
#[test]
fn a_warning_after_a_jump_refuses() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (name, bytes) = m.dump_files().next().unwrap();
    let text = String::from_utf8_lossy(bytes).into_owned();
    let at = text.find("\nHloLiveRange").unwrap() + 1;
    let nl = at + text[at..].find('\n').unwrap() + 1;
    let changed = [&bytes[..nl], b"  garbage here\n", &bytes[nl..]].concat();
    let (first, load) = load_deferred(&[(name, &changed)], 64, true);
    assert!(first.is_none(), "completing should have refused");
    let one = bufscope::load_files([(name, changed.as_slice())]);
    assert_same_load(&one, &load, "after a jump");
    assert!(one.modules[0].warnings.iter().any(|w| w.line > 0));
}

/// Buffers handed over cut short or damaged are refused with a sentence, never a panic;
/// the whole buffer reads back.
#[test]
fn a_damaged_handoff_is_refused() {
    let path = fixtures_dir().join("tpu/000_0cb419b3147a3cb6.txt");
    let bytes = std::fs::read(&path).unwrap();
    let mut loader = bufscope::Loader::new();
    loader.defer_uses(true);
    loader.begin_file("000.txt");
    loader.feed(&bytes);
    loader.end_file();
    let first = loader.deferred().next().unwrap().clone();
    let load = loader.finish();
    assert_eq!(load.deferred, vec![first.clone()]);
    let body = &bytes[first.bytes.start as usize..first.bytes.end as usize];
    let mut behind = bufscope::parse::Behind::new([bufscope::parse::Later::Uses(first.clone())]);
    let ask = behind.next().unwrap();
    assert_eq!(
        (ask.file.as_str(), ask.bytes),
        ("000.txt", first.bytes.clone())
    );
    behind.feed(body);
    assert_eq!(behind.next(), None, "one body asked for");
    let (module, part) = behind.finish().unwrap().parts.pop().unwrap();
    assert_eq!(module, first.module);
    let h = part.into_handoff();
    let (used, infos, names, uses) = (h.used, h.infos, h.names, h.uses);
    assert!(used.len() > 100 && infos.len() > 100 && names.len() > 8 && !uses.is_empty());
    let handoff = |used: &[u8], infos: &[u8], names: &[u8]| Handoff {
        used: used.to_vec(),
        infos: infos.to_vec(),
        names: names.to_vec(),
        uses: uses.clone(),
    };
    // Cut anywhere but at a record's end (or at all, for the names): refused.
    for cut in 0..used.len() {
        let read = UsedPart::from_handoff(handoff(&used[..cut], &infos, &names), &first);
        assert_eq!(
            read.is_err(),
            cut % Handoff::USED_RECORD != 0,
            "used cut at {cut}"
        );
    }
    for cut in 0..infos.len() {
        let read = UsedPart::from_handoff(handoff(&used, &infos[..cut], &names), &first);
        assert_eq!(
            read.is_err(),
            cut % Handoff::INFO_RECORD != 0,
            "infos cut at {cut}"
        );
    }
    for cut in 0..names.len() {
        let read = UsedPart::from_handoff(handoff(&used, &infos, &names[..cut]), &first);
        assert!(read.is_err(), "names cut at {cut} of {} read", names.len());
    }
    // Damaged: read or refused, but no panic; and the part completes a module without one.
    for (which, len) in [(0, used.len()), (1, infos.len()), (2, names.len())] {
        for at in (0..len).step_by(7) {
            let mut bufs = [used.clone(), infos.clone(), names.clone()];
            bufs[which][at] ^= 0xA5;
            let [u, i, n] = &bufs;
            if let Ok(part) = UsedPart::from_handoff(handoff(u, i, n), &first) {
                let mut c = part.complete(load.modules[0].clone());
                while !c.step(1000) {}
            }
        }
    }
    let mut longer = names.clone();
    longer.push(0);
    assert!(UsedPart::from_handoff(handoff(&used, &infos, &longer), &first).is_err());
    // In pieces of whole records, as the page takes them: the same as at once.
    let mut u = bufscope::parse::Unpack::new(&names).unwrap();
    for piece in used.chunks(Handoff::USED_RECORD * 5) {
        u.used(piece).unwrap();
    }
    for piece in infos.chunks(Handoff::INFO_RECORD * 3) {
        u.infos(piece).unwrap();
    }
    for chunk in uses.clone() {
        u.uses(chunk);
    }
    let mut pieces = u.finish(&first).complete(load.modules[0].clone());
    while !pieces.step(1000) {}
    let whole = UsedPart::from_handoff(handoff(&used, &infos, &names), &first).unwrap();
    let mut whole = whole.complete(load.modules[0].clone());
    while !whole.step(1000) {}
    assert_eq!(
        fingerprint(&pieces.into_module()),
        fingerprint(&whole.into_module())
    );
}

/// A module whose `Used values` body is empty and which has no allocations and no live
/// ranges: one pass refuses it ("no buffer assignment was found"); the deferred read, which
/// kept it for the entries its body might hold, must too (the fuzzer found it keeping it).
#[test]
fn a_module_with_nothing_but_an_empty_body_is_refused_both_ways() {
    let m = fixture_module("cpu/jax0.6.2/cpu_tiny");
    let (_, tiny) = m.dump_files().next().unwrap();
    let wrapped = [
        b"BufferAssignment:\nTotal bytes used: 0\n\nUsed values:\n".as_slice(),
        b"*** Begin x.buffer-assignment.txt ***\n",
        tiny,
        b"\n*** End x.buffer-assignment.txt ***\n",
    ]
    .concat();
    let name = "m.buffer-assignment.txt";
    let load = load_both_ways(&[(name, &wrapped)], "an empty body, nothing else");
    assert_eq!(load.modules.len(), 1, "only the wrapped module is read");
    assert!(
        load.errors
            .iter()
            .any(|e| e.contains("no buffer assignment")),
        "errors: {:?}",
        load.errors
    );
}

/// The reader behind the diagram (`parse::Behind`) asks for each input's bytes in turn, a
/// module's body and then an HLO text whole, and gives what reading each whole gives (the
/// body's part for its module, the text as `read_hlo` reads it); bytes cut short fail a
/// body (the files are then read again in one pass) but only leave an HLO text out, with a
/// sentence.
#[test]
fn behind_asks_for_bodies_and_hlo_texts() {
    use bufscope::parse::{hlo::read_hlo, Ask, Behind, Later};
    let dump = std::fs::read(fixtures_dir().join("tpu/000_0cb419b3147a3cb6.txt")).unwrap();
    let hlo_name = "module_0004.jit_mlp_train_step.cpu_after_optimizations.txt";
    let hlo = std::fs::read(fixtures_dir().join("folders/mlp_train").join(hlo_name)).unwrap();
    let mut loader = bufscope::Loader::new();
    loader.defer_uses(true);
    loader.begin_file("000.txt");
    loader.feed(&dump);
    loader.end_file();
    let deferred = loader.finish().deferred;
    assert_eq!(deferred.len(), 1, "one body skipped");
    let files = [("000.txt", &dump[..]), (hlo_name, &hlo[..])];
    let inputs = || {
        let text = Later::Hlo {
            file: hlo_name.into(),
            size: hlo.len() as u64,
        };
        deferred.iter().cloned().map(Later::Uses).chain([text])
    };
    // Fed in pieces of `piece` bytes, the first `keep` of each range asked for.
    let drive = |behind: &mut Behind, piece: usize, keep: f64| {
        let mut asked = Vec::new();
        while let Some(ask) = behind.next() {
            let bytes = files.iter().find(|(n, _)| *n == ask.file).unwrap().1;
            let range = &bytes[ask.bytes.start as usize..ask.bytes.end as usize];
            let kept = &range[..(range.len() as f64 * keep) as usize];
            kept.chunks(piece).for_each(|p| behind.feed(p));
            asked.push(ask);
        }
        asked
    };
    let mut behind = Behind::new(inputs());
    let asked = drive(&mut behind, 4093, 1.0);
    let expected = [
        Ask {
            file: "000.txt".into(),
            bytes: deferred[0].bytes.clone(),
        },
        Ask {
            file: hlo_name.into(),
            bytes: 0..hlo.len() as u64,
        },
    ];
    assert_eq!(asked, expected);
    let read = behind.finish().unwrap();
    let modules: Vec<&str> = read.parts.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(modules, [deferred[0].module.as_str()]);
    assert_eq!(read.hlo.len(), 1);
    let whole = read_hlo(hlo_name, &hlo);
    assert!(!whole.text.computations.is_empty());
    assert_eq!(read.hlo[0].text, whole.text, "the HLO text read in pieces");
    assert!(read.errors.is_empty());
    // Cut short: the body fails the read; the HLO text alone is only left out.
    let mut behind = Behind::new(inputs());
    drive(&mut behind, 4093, 0.5);
    assert!(behind.finish().is_err(), "a body cut short");
    let mut behind = Behind::new(inputs().skip(1));
    drive(&mut behind, 4093, 0.5);
    let read = behind.finish().unwrap();
    assert!(read.hlo.is_empty());
    let why = format!("{hlo_name} could not be read: the bytes asked for were cut short");
    assert_eq!(read.errors, [why]);
}

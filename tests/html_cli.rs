//! `bufscope html` run as a program: the page given with `--page` comes back with each dump
//! file inside (gzipped, base64) and nothing else changed but the title; to standard output
//! with `-o -`; without a page, or for what is not a dump, one sentence and exit 1. Opening
//! such a page in a browser is tests/python/test_wheel.py's (through the wheel).

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bufscope"))
        .args(args)
        .output()
        .expect("bufscope runs")
}

/// A stand-in for dist/bufscope.html: what `bufscope html` looks for in it, and a policy.
const PAGE: &str = "<!doctype html>\n<html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-AAAA'; connect-src 'none'\"><title>bufscope</title></head>\n<body>\n<script type=\"application/octet-stream\" id=\"bufscope-wasm\">H4sI</script>\n</body>\n</html>\n";

/// A file in a folder of this test's own (`test`), which it removes at its end.
fn temp(test: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bufscope-html-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Base64 (RFC 4648, padded) read back, independently of the binary's writer.
fn unbase64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let mut out = Vec::new();
    for quad in text.as_bytes().chunks(4) {
        let pad = quad.iter().filter(|&&c| c == b'=').count();
        let n = quad
            .iter()
            .map(|&c| if c == b'=' { 0 } else { u32::from(value(c)) })
            .fold(0u32, |n, v| n << 6 | v);
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    out
}

/// The data blocks of a filled page: (id, name, un-gzipped bytes).
fn blocks(page: &str) -> Vec<(String, String, Vec<u8>)> {
    page.split("<script type=\"application/gzip\" ")
        .skip(1)
        .map(|rest| {
            let attr = |a: &str| {
                let from = rest.find(&format!("{a}=\"")).unwrap() + a.len() + 2;
                rest[from..from + rest[from..].find('"').unwrap()].to_string()
            };
            let body = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(unbase64(body).as_slice())
                .read_to_end(&mut text)
                .unwrap();
            (attr("id"), attr("data-name"), text)
        })
        .collect()
}

fn fixture(rel: &str) -> PathBuf {
    common::fixtures_dir().join(rel)
}

#[test]
fn the_page_comes_back_with_each_dump_file_inside_and_its_policy_untouched() {
    let page = temp("filled", "page.html");
    std::fs::write(&page, PAGE).unwrap();
    let (a, b) = (
        fixture("tpu/000_0cb419b3147a3cb6.txt"),
        fixture("tpu/004_f7d316536d8a2672.txt"),
    );
    let out = temp("filled", "report.html");
    let p = |p: &Path| p.to_string_lossy().into_owned();
    let done = run(&["html", &p(&a), &p(&b), "--page", &p(&page), "-o", &p(&out)]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let filled = std::fs::read_to_string(&out).unwrap();
    let found = blocks(&filled);
    assert_eq!(found.len(), 2);
    for (i, (file, (id, name, text))) in [&a, &b].iter().zip(&found).enumerate() {
        assert_eq!(id, &format!("bufscope-dump-{i}"));
        assert_eq!(name, &file.file_name().unwrap().to_string_lossy());
        assert_eq!(
            text,
            &std::fs::read(file).unwrap(),
            "{name} does not read back"
        );
    }
    // Everything else is the page: the blocks sit just before its </body>, and the title
    // says what is inside (two modules, the larger first).
    let start = filled.find("<script type=\"application/gzip\"").unwrap();
    let end = filled.rfind("</script>\n").unwrap() + "</script>\n".len();
    let rest = format!("{}{}", &filled[..start], &filled[end..]);
    let title = rest
        .split("<title>")
        .nth(1)
        .unwrap()
        .split("</title>")
        .next()
        .unwrap()
        .to_string();
    assert!(title.ends_with(" and 1 more · bufscope"), "{title}");
    assert_eq!(rest.replace(&title, "bufscope"), PAGE);
    // The same page on standard output.
    let piped = run(&["html", &p(&a), &p(&b), "--page", &p(&page), "-o", "-"]);
    assert!(piped.status.success());
    assert_eq!(String::from_utf8(piped.stdout).unwrap(), filled);
    std::fs::remove_dir_all(out.parent().unwrap()).ok();
}

#[test]
fn without_a_page_or_a_dump_it_says_why_in_one_sentence() {
    let dump = fixture("tpu/000_0cb419b3147a3cb6.txt");
    let dump = dump.to_string_lossy();
    let bare = run(&["html", &dump, "-o", "-"]);
    if option_env!("BUFSCOPE_PAGE").is_none_or(str::is_empty) {
        assert_eq!(bare.status.code(), Some(1));
        let err = String::from_utf8_lossy(&bare.stderr);
        assert!(
            err.contains("built without its page") && err.contains("--page"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    } else {
        // Built with the page (./dev wheel): it opens on the dump.
        assert!(bare.status.success());
        assert_eq!(blocks(&String::from_utf8(bare.stdout).unwrap()).len(), 1);
    }
    let page = temp("why", "not-the-app.html");
    std::fs::write(&page, "<html><body></body></html>").unwrap();
    let wrong = run(&["html", &dump, "--page", &page.to_string_lossy(), "-o", "-"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("not bufscope's single file"));
    std::fs::write(&page, PAGE).unwrap();
    let not_dump = temp("why", "notes.txt");
    std::fs::write(&not_dump, "hello\n").unwrap();
    let nothing = run(&[
        "html",
        &not_dump.to_string_lossy(),
        "--page",
        &page.to_string_lossy(),
        "-o",
        "-",
    ]);
    assert_eq!(nothing.status.code(), Some(1));
    assert!(nothing.stdout.is_empty());
    std::fs::remove_dir_all(page.parent().unwrap()).ok();
}

//! `bufscope html`: one self-contained page with dumps inside, to send to someone who has no
//! bufscope (by e-mail, in a bug report) or to show in a notebook (the Python package's
//! `bufscope.show`).
//!
//! The page is the single-file app `dist/bufscope.html` (`./dev dist`, src/web/dist.mjs),
//! built into the binary when `BUFSCOPE_PAGE` named it at build time (src/build.rs; `./dev
//! wheel` does), else given with `--page`. Why built in rather than read from beside the
//! binary or shipped as the Python package's data: the wheel's `bufscope` is then one file
//! that works alone, the same from a shell, `python -m bufscope` and `bufscope.html()`, and
//! the page always matches the binary that fills it.
//!
//! Each dump file goes in gzipped, in base64, in a data block before `</body>`, as the
//! example does (`<script type="application/gzip" id="bufscope-dump-N" data-name=NAME>`):
//! the browser never runs such a block, so the page's Content-Security-Policy (hashes of
//! its two scripts and its style, `connect-src 'none'`) stays as it is, and the app reads
//! the blocks when it starts (src/ui/example.rs, `open_embedded`) and un-gzips them by
//! their magic bytes, as any dropped file. Only the `<title>` changes besides.

use super::{input, write_stdout, CmdResult, Failure};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The single-file app, when this binary was built with `BUFSCOPE_PAGE` (else empty).
const BUILT_IN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/page.html"));

/// The element of the single file that holds the app (src/web/dist.mjs): a page without it
/// is not the single file.
const APP_MARK: &str = "id=\"bufscope-wasm\"";
/// The ids of the blocks that hold the dumps, followed by 0, 1, …, in the order of the files
/// (src/ui/example.rs reads them).
const DUMP_ID: &str = "bufscope-dump-";

/// Writes one page that opens straight on the dumps, offline, from anywhere
///
/// The app of dist/bufscope.html with the dump files inside (gzipped): it opens from
/// file://, from an e-mail or a bug report, in any recent browser, and makes no request.
#[derive(Args)]
#[command(args_override_self = true, after_help = super::PATHS)]
pub struct HtmlArgs {
    /// Dump files or folders of dumps
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Where to write the page; '-' for standard output
    #[arg(short = 'o', long, value_name = "OUT.html")]
    out: PathBuf,
    /// The single-file app to fill (dist/bufscope.html, made by ./dev dist); by default the
    /// one built into this binary
    #[arg(long, value_name = "bufscope.html")]
    page: Option<PathBuf>,
}

/// One dump file as the page gets it: its name and its bytes (any, gzipped or not).
pub struct Embedded {
    pub name: String,
    pub bytes: Vec<u8>,
}

pub fn html(args: HtmlArgs) -> CmdResult {
    let page = page(args.page.as_deref())?;
    // Read first, so that what is not a dump is said here rather than in the page.
    let loaded = input::open(&args.paths)?;
    if loaded.modules.is_empty() {
        return Err(Failure(
            "no module could be read (out-of-memory messages alone are shown by `bufscope summary`)".into(),
        ));
    }
    let names: Vec<&str> = loaded
        .modules
        .iter()
        .map(|a| a.module.name.as_str())
        .collect();
    let title = match names.as_slice() {
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} and {} more", rest.len()),
        [] => unreachable!("checked above"),
    };
    let mut files = Vec::new();
    let chosen = input::dump_files(&args.paths);
    // A folder's other texts only where they hold a message: they are left out.
    for path in chosen.files.into_iter().filter(|p| !chosen.searched.contains(p)) {
        let bytes = std::fs::read(&path)
            .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
        files.push(Embedded {
            name: file_name(&path),
            bytes: gzip(&bytes),
        });
    }
    let filled = fill(&page, &files, &title)?;
    let out = &args.out;
    if out.as_os_str() == "-" {
        return write_stdout(filled.as_bytes());
    }
    std::fs::write(out, &filled)
        .map_err(|e| Failure(format!("cannot write {}: {e}", out.display())))?;
    eprintln!(
        "bufscope: wrote {} ({} KiB): {} module{} from {} file{}",
        out.display(),
        filled.len() / 1024,
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        files.len(),
        if files.len() == 1 { "" } else { "s" },
    );
    Ok(())
}

/// The page to fill: `--page`'s file, else the built-in one.
fn page(given: Option<&Path>) -> Result<String, Failure> {
    let bytes = match given {
        Some(path) => std::fs::read(path)
            .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?,
        None if BUILT_IN.is_empty() => {
            return Err(Failure(
                "this bufscope was built without its page: pass --page dist/bufscope.html (made by ./dev dist), or build with BUFSCOPE_PAGE=dist/bufscope.html as ./dev wheel does".into(),
            ))
        }
        None => BUILT_IN.to_vec(),
    };
    String::from_utf8(bytes).map_err(|_| Failure("the page is not UTF-8 text".into()))
}

/// The last part of `path`, which names the module inside the page as on the command line.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string_lossy().into_owned())
}

/// `bytes` gzipped (the page un-gzips by magic bytes); gzipped files are kept as they are.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    if bufscope::parse::is_gzip(bytes) {
        return bytes.to_vec();
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    enc.write_all(bytes).expect("writing to memory");
    enc.finish().expect("writing to memory")
}

/// `page` (the single-file app) with `files` in data blocks before its last `</body>` and
/// `title` in its `<title>`. Fails, in one sentence, on a page that is not the single file
/// or already holds dumps.
pub fn fill(page: &str, files: &[Embedded], title: &str) -> Result<String, Failure> {
    if !page.contains(APP_MARK) {
        return Err(Failure(
            "the page is not bufscope's single file (dist/bufscope.html, made by ./dev dist)"
                .into(),
        ));
    }
    if page.contains(&format!("id=\"{DUMP_ID}0\"")) {
        return Err(Failure(
            "the page already holds dumps: fill dist/bufscope.html itself".into(),
        ));
    }
    let end = page
        .rfind("</body>")
        .ok_or_else(|| Failure("the page has no </body>".into()))?;
    let mut blocks = String::new();
    for (i, f) in files.iter().enumerate() {
        blocks.push_str(&format!(
            "<script type=\"application/gzip\" id=\"{DUMP_ID}{i}\" data-name=\"{}\">{}</script>\n",
            escape(&f.name),
            base64(&f.bytes)
        ));
    }
    let mut out = String::with_capacity(page.len() + blocks.len());
    out.push_str(&page[..end]);
    out.push_str(&blocks);
    out.push_str(&page[end..]);
    Ok(out.replacen(
        "<title>bufscope</title>",
        &format!("<title>{} · bufscope</title>", escape(title)),
        1,
    ))
}

/// Text safe inside an HTML element or a double-quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Standard base64 with padding (RFC 4648), what the page's `atob` reads.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ABC[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<!doctype html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; connect-src 'none'\"><title>bufscope</title></head><body><p>x</body></p>\n<script type=\"application/octet-stream\" id=\"bufscope-wasm\">AAAA</script>\n</body>\n</html>";

    #[test]
    fn base64_as_rfc_4648_gives_it() {
        // RFC 4648, section 10.
        for (raw, b64) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), b64, "{raw}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn the_dumps_go_before_the_last_body_end_and_nothing_else_changes_but_the_title() {
        let files = [
            Embedded {
                name: "a\"<b>.txt".into(),
                bytes: b"foo".to_vec(),
            },
            Embedded {
                name: "c.txt".into(),
                bytes: b"fooba".to_vec(),
            },
        ];
        let out = fill(PAGE, &files, "jit_f & co").unwrap();
        let blocks = "<script type=\"application/gzip\" id=\"bufscope-dump-0\" data-name=\"a&quot;&lt;b&gt;.txt\">Zm9v</script>\n\
                      <script type=\"application/gzip\" id=\"bufscope-dump-1\" data-name=\"c.txt\">Zm9vYmE=</script>\n";
        let at = PAGE.rfind("</body>").unwrap();
        let expected = format!("{}{blocks}{}", &PAGE[..at], &PAGE[at..]).replace(
            "<title>bufscope</title>",
            "<title>jit_f &amp; co · bufscope</title>",
        );
        assert_eq!(out, expected);
        // The policy is the page's.
        assert!(out.contains("content=\"default-src 'none'; connect-src 'none'\""));
    }

    #[test]
    fn pages_that_are_not_the_single_file_or_already_hold_dumps_are_refused() {
        let one = [Embedded {
            name: "a.txt".into(),
            bytes: b"x".to_vec(),
        }];
        let Err(Failure(e)) = fill("<html><body></body></html>", &one, "t") else {
            panic!("a page without the app was filled")
        };
        assert!(e.contains("not bufscope's single file"), "{e}");
        let filled = fill(PAGE, &one, "t").unwrap();
        let Err(Failure(e)) = fill(&filled, &one, "t") else {
            panic!("a filled page was filled again")
        };
        assert!(e.contains("already holds dumps"), "{e}");
    }

    #[test]
    fn gzip_keeps_gzipped_files_and_packs_the_others_so_that_they_read_back() {
        use std::io::Read;
        let text = b"BufferAssignment:\nallocation 0: size 16\n".repeat(50);
        let packed = gzip(&text);
        assert!(bufscope::parse::is_gzip(&packed) && packed.len() < text.len() / 5);
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(packed.as_slice())
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, text);
        assert_eq!(gzip(&packed), packed);
    }
}

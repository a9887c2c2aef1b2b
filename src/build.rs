//! Build script: the page `bufscope html` writes reports into.
//!
//! When `BUFSCOPE_PAGE` names a file (the single-file app `dist/bufscope.html` that
//! `./dev dist` makes; `./dev wheel` sets it), its bytes go into the native binary, so the
//! wheel's `bufscope html` needs nothing beside it. Without it the binary carries an empty
//! page and `bufscope html` asks for `--page` (src/cli/html.rs). The wasm build ignores it.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=BUFSCOPE_PAGE");
    println!("cargo:rerun-if-changed=src/build.rs");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("page.html");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32");
    let page = match std::env::var_os("BUFSCOPE_PAGE").filter(|p| !p.is_empty() && !wasm) {
        Some(path) => {
            let path = PathBuf::from(path);
            println!("cargo:rerun-if-changed={}", path.display());
            std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "BUFSCOPE_PAGE={}: cannot read it ({e}); ./dev dist makes dist/bufscope.html",
                    path.display()
                )
            })
        }
        None => Vec::new(),
    };
    std::fs::write(&out, page).expect("cannot write the page into OUT_DIR");
}

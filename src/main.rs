//! The `bufscope` binary: the command-line tool natively, the browser app on wasm32.

#[cfg(not(target_arch = "wasm32"))]
mod cli;
#[cfg(target_arch = "wasm32")]
mod ui;

fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    std::process::exit(cli::main());
    #[cfg(target_arch = "wasm32")]
    ui::start();
}

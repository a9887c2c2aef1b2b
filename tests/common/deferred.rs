//! The deferred read in the tests: the shipped machine ([`Reading`]) driven over files in
//! memory, its lanes taken in a seeded random order and each range it asks for fed in
//! seeded random pieces, checked against one pass.

use super::analysis_fingerprint;
use bufscope::parse::{DeferredUses, Input, Lane, Next, Reading, UsedPart};

/// A small seeded generator (xorshift64*): the same seed, the same order and pieces.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `1..=n` (1 for 0).
    pub fn upto(&mut self, n: usize) -> usize {
        1 + (self.next() % n.max(1) as u64) as usize
    }
}

/// A seed from a text (a test's label), so that each test reads in an order of its own.
pub fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// The inputs of a [`Reading`] of `files`.
pub fn inputs_of(files: &[(&str, &[u8])]) -> Vec<Input> {
    let input = |&(name, bytes): &(&str, &[u8])| Input {
        name: name.to_string(),
        size: bytes.len() as u64,
        searched: false,
    };
    files.iter().map(input).collect()
}

/// Drives `reading` to its end over `files` in memory: each time a lane picked at random
/// (of those not done: the first read, the read behind, the piece lanes), the bytes it
/// asks for fed in random pieces (whole, any size, or small ones). Panics if a lane asks
/// for bytes no file has, or every lane left waits.
/// Returns the bytes fed on piece lanes (none when the reading has none or cut no body).
pub fn drive(reading: &mut Reading, files: &[(&str, &[u8])], rng: &mut Rng) -> u64 {
    let mut on_pieces = 0;
    let pieces = (0..reading.piece_lanes()).map(Lane::Piece);
    let lanes: Vec<Lane> = [Lane::First, Lane::Behind].into_iter().chain(pieces).collect();
    let mut done = vec![false; lanes.len()];
    let mut waits = 0;
    while done.contains(&false) {
        let open: Vec<usize> = (0..lanes.len()).filter(|&k| !done[k]).collect();
        let k = open[(rng.next() % open.len() as u64) as usize];
        let lane = lanes[k];
        match reading.next(lane) {
            Next::Done => done[k] = true,
            Next::Wait => {
                waits += 1;
                assert!(waits < 1000 * lanes.len(), "every lane left waits");
                continue;
            }
            Next::Fetch(ask) => {
                let file = files.iter().find(|(n, _)| *n == ask.file).map(|&(_, b)| b);
                let (from, to) = (ask.bytes.start as usize, ask.bytes.end as usize);
                let mut rest = file.and_then(|b| b.get(from..to)).expect("bytes of a file");
                if matches!(lane, Lane::Piece(_)) {
                    on_pieces += rest.len() as u64;
                }
                let most = match rng.next() % 3 {
                    0 => rest.len(),
                    1 => 1 + rest.len() / 7,
                    _ => 1 + rest.len() / 97,
                };
                while !rest.is_empty() {
                    let (piece, after) = rest.split_at(rng.upto(most).min(rest.len()));
                    reading.feed(lane, piece);
                    rest = after;
                }
            }
        }
        waits = 0;
    }
    on_pieces
}

/// A loader told to [`defer_uses`](bufscope::Loader::defer_uses), fed `files` whole, not
/// finished (the first read's, the bodies listed but not read).
pub fn fed_deferring(files: &[(&str, &[u8])]) -> bufscope::Loader {
    let mut loader = bufscope::Loader::new();
    loader.defer_uses(true);
    for &(name, bytes) in files {
        loader.begin_file(name);
        loader.feed(bytes);
        loader.end_file();
    }
    loader
}

/// Reads `files` with `Used values` deferred, each file fed in chunks of `chunk` bytes,
/// then completes the modules; where completing says the skip guessed wrong, the files are
/// read again in one pass. With `jump`, through the shipped machine ([`Reading`], asking
/// for `chunk` bytes at a time, in a random order seeded by `chunk`: [`load_deferred_seeded`]).
/// Without, the loader is fed whole and `parse::complete` reads the bodies from whole
/// files afterwards. Returns the first read's analysis of each module
/// ([`analysis_fingerprint`]; none when the files were read again) and the completed load.
pub fn load_deferred(
    files: &[(&str, &[u8])],
    chunk: usize,
    jump: bool,
) -> (Option<Vec<String>>, bufscope::Load) {
    load_deferred_through(files, chunk, jump, |part, _| Ok(part))
}

/// [`load_deferred`], each module's `Used values` part passed through `through` before it
/// completes its module ([`bufscope::parse::Bodies::complete_through`]).
pub fn load_deferred_through(
    files: &[(&str, &[u8])],
    chunk: usize,
    jump: bool,
    through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
) -> (Option<Vec<String>>, bufscope::Load) {
    if jump {
        return load_deferred_seeded(files, chunk as u64, chunk as u64, through);
    }
    let mut loader = bufscope::Loader::new();
    loader.defer_uses(true);
    for &(name, bytes) in files {
        loader.begin_file(name);
        bytes.chunks(chunk.max(1)).for_each(|c| loader.feed(c));
        loader.end_file();
    }
    let mut load = loader.finish();
    let first: Vec<String> = load.modules.iter().map(analysis_fingerprint).collect();
    let deferred = std::mem::take(&mut load.deferred);
    let bytes = |name: &str| files.iter().find(|(n, _)| *n == name).map(|&(_, b)| b);
    match bufscope::parse::complete_through(&mut load.modules, &deferred, bytes, through) {
        Ok(()) => (Some(first), load),
        Err(_) => (None, bufscope::load_files(files.iter().copied())),
    }
}

/// The machine's read of `files` ([`Reading::new`], asking for `chunk` bytes at a time),
/// driven in the random order `seed` gives ([`drive`]); where it does not complete, its
/// read in one pass ([`Reading::one_pass`]), driven the same way. As [`load_deferred`].
pub fn load_deferred_seeded(
    files: &[(&str, &[u8])],
    chunk: u64,
    seed: u64,
    through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
) -> (Option<Vec<String>>, bufscope::Load) {
    let reading = Reading::new(inputs_of(files), chunk);
    load_driven(reading, files, (chunk, seed), through, &mut 0)
}

/// [`load_deferred_seeded`] with [`Reading::with_workers`]: `workers` lanes, bodies cut
/// into pieces of at least `least` bytes.
pub fn load_with_workers(
    files: &[(&str, &[u8])],
    (chunk, seed): (u64, u64),
    workers: usize,
    least: u64,
) -> (Option<Vec<String>>, bufscope::Load, u64) {
    let reading = Reading::with_workers(inputs_of(files), chunk, workers, least);
    let mut on_pieces = 0;
    let (first, load) = load_driven(reading, files, (chunk, seed), |p, _| Ok(p), &mut on_pieces);
    (first, load, on_pieces)
}

/// `reading` driven over `files` as [`load_deferred_seeded`] says.
fn load_driven(
    mut reading: Reading,
    files: &[(&str, &[u8])],
    (chunk, seed): (u64, u64),
    through: impl Fn(UsedPart, &DeferredUses) -> Result<UsedPart, String>,
    on_pieces: &mut u64,
) -> (Option<Vec<String>>, bufscope::Load) {
    let mut rng = Rng::new(seed);
    *on_pieces = drive(&mut reading, files, &mut rng);
    let (loader, bodies) = reading.finish().expect("bytes in memory are never cut short");
    let mut load = loader.finish();
    let first: Vec<String> = load.modules.iter().map(analysis_fingerprint).collect();
    let deferred = std::mem::take(&mut load.deferred);
    let modules = load.modules.iter_mut().collect();
    if bodies.complete_through(modules, &deferred, &mut load.errors, through).is_ok() {
        return (Some(first), load);
    }
    let mut again = Reading::one_pass(inputs_of(files), chunk);
    drive(&mut again, files, &mut rng);
    let (loader, _) = again.finish().expect("bytes in memory are never cut short");
    (None, loader.finish())
}

//! File names: which module a dump file belongs to, and which files are dumps.
//!
//! XLA names them `[<timestamp>.]module_NNNN[.<name>][.cl_N].<suffix>` with the suffixes
//! below (`-` before them; the shared example dumps use `.`); `.gz` may follow.

const SUFFIXES: [&str; 4] = [
    "buffer-assignment-values.txt",
    "buffer-assignment.txt",
    "live-range.txt",
    "memory-usage-report.txt",
];

fn strip_gz(name: &str) -> &str {
    name.strip_suffix(".gz").unwrap_or(name)
}

fn base(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// The module a file belongs to: its name without directory, `.gz` and dump suffix.
pub fn module_name(file: &str) -> String {
    let name = strip_gz(base(file));
    for suffix in SUFFIXES {
        if let Some(stem) = name.strip_suffix(suffix) {
            if let Some(stem) = stem.strip_suffix('-').or_else(|| stem.strip_suffix('.')) {
                if !stem.is_empty() {
                    return stem.to_string();
                }
            }
        }
    }
    name.strip_suffix(".txt").unwrap_or(name).to_string()
}

/// Whether a file in a dump folder is one bufscope reads (by its name).
pub fn is_ours(file: &str) -> bool {
    let name = strip_gz(base(file));
    SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Which files of a dump folder to read, given their names: those named like dumps
/// ([`is_ours`]); when none is (renamed dumps, such as the TPU examples), every `.txt` and
/// `.txt.gz`, each then judged by its content. Returns positions in `names`, in order.
pub fn folder_selection<S: AsRef<str>>(names: &[S]) -> Vec<usize> {
    let named: Vec<usize> = (0..names.len())
        .filter(|&i| is_ours(names[i].as_ref()))
        .collect();
    if !named.is_empty() {
        return named;
    }
    (0..names.len())
        .filter(|&i| strip_gz(base(names[i].as_ref())).ends_with(".txt"))
        .collect()
}

/// Whether the name says memory-usage report.
pub(crate) fn is_report(file: &str) -> bool {
    strip_gz(base(file)).ends_with("memory-usage-report.txt")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            module_name("dir/cpu_tiny.buffer-assignment-values.txt"),
            "cpu_tiny"
        );
        assert_eq!(
            module_name("module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt.gz"),
            "module_0001.jit_f.cpu_after_optimizations"
        );
        assert_eq!(module_name("cpu_tiny.live-range.txt"), "cpu_tiny");
        assert_eq!(
            module_name("000_0cb419b3147a3cb6.txt"),
            "000_0cb419b3147a3cb6"
        );
        assert_eq!(module_name("buffer-assignment.txt"), "buffer-assignment");
        assert!(is_ours("a/x.memory-usage-report.txt.gz"));
        assert!(!is_ours("x.hlo.txt"));
        let folder = ["a.hlo.txt", "a.buffer-assignment.txt", "notes.md"];
        assert_eq!(folder_selection(&folder), [1]);
        let renamed = ["000_x.txt", "001_y.txt.gz", "notes.md"];
        assert_eq!(folder_selection(&renamed), [0, 1]);
    }
}

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

/// Whether a file is an HLO module text by its name (`*after_optimizations.txt`, XLA's
/// `module_0000.jit_f.cpu_after_optimizations.txt` or a renamed `STEM.after_optimizations.txt`),
/// or the text of a module before its passes ([`is_before_text`]).
pub fn is_hlo_text(file: &str) -> bool {
    let name = strip_gz(base(file));
    (name.ends_with("after_optimizations.txt") || is_before_text(file)) && !is_ours(file)
}

/// Whether an HLO text is XLA's text of a module before its passes
/// (`*before_optimizations.txt`): not what the dump describes, but the one that prints
/// the entry parameters' shardings (read for the waste answer, `Module::hlo_before`).
pub fn is_before_text(file: &str) -> bool {
    strip_gz(base(file)).ends_with("before_optimizations.txt")
}

/// The module names an HLO text may belong to, most likely first: its name without `.txt`
/// (XLA's own names: the dump files are `STEM-buffer-assignment.txt` beside `STEM.txt`), then
/// without `.after_optimizations` too (renamed copies: `STEM.buffer-assignment.txt` beside
/// `STEM.after_optimizations.txt`).
pub fn hlo_module_names(file: &str) -> Vec<String> {
    let name = strip_gz(base(file));
    let stem = name.strip_suffix(".txt").unwrap_or(name);
    if let Some(at) = stem.rfind("before_optimizations").filter(|_| is_before_text(file)) {
        // The text before the passes of the module whose text after them is `…after_optimizations`.
        let after = format!("{}after_optimizations{}", &stem[..at], &stem[at + 20..]);
        let mut out = hlo_module_names(&format!("{after}.txt"));
        out.retain(|n| !n.is_empty());
        return out;
    }
    let mut out = vec![stem.to_string()];
    if let Some(short) = stem.strip_suffix(".after_optimizations") {
        if !short.is_empty() {
            out.push(short.to_string());
        }
    }
    out
}

/// Compile errors XLA's caller writes beside a dump (`*.error.txt`): searched for an
/// out-of-memory message.
pub fn is_error_text(file: &str) -> bool {
    strip_gz(base(file)).ends_with(".error.txt")
}

/// What to do with each file of a dropped or named dump folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FolderPlan {
    /// Dump files (and files judged by their content), in the order given.
    pub dumps: Vec<usize>,
    /// HLO module texts ([`is_hlo_text`]), read after the dumps.
    pub hlo: Vec<usize>,
    /// Other text files ([`is_other_text`]: a `compile.log`, a job's `.out`), read after the
    /// dumps only to be searched for an XLA memory message (`Loader::search_only`): one
    /// that holds none is skipped and counted, not an error. Not in `skipped`; the reader
    /// skips and counts those past [`MAX_SEARCHED_TEXT`] itself.
    pub texts: Vec<usize>,
    /// Files XLA writes beside a dump that bufscope does not read (`*.debug_options`,
    /// `*after_codegen*`, `*.mlir`, …): skipped silently, counted.
    pub skipped: usize,
}

/// A text file of a folder that is neither a dump nor an HLO text nor XLA's other output
/// (options, HLO before optimizations, code): `.txt`, `.log`, `.out`, `.err`, `.md` (maybe
/// `.gz`), where a job's log or a compile error may hold an out-of-memory message.
pub fn is_other_text(file: &str) -> bool {
    const TEXT: [&str; 7] = [".txt", ".log", ".out", ".err", ".md", ".stderr", ".stdout"];
    const XLA_OWN: [&str; 11] = [
        "before_optimizations",
        "after_codegen",
        "buffer_assignment.txt",
        "hlo_module_config",
        "target_arguments",
        "tpu_comp_env",
        "execution_options",
        "transfer_stats",
        "basic_compiler_metadata",
        "debug_options",
        "flagfile",
    ];
    let name = strip_gz(base(file));
    TEXT.iter().any(|e| name.ends_with(e))
        && !XLA_OWN.iter().any(|x| name.contains(x))
        && !is_ours(file)
        && !is_hlo_text(file)
}

/// The largest file of a folder searched for an out-of-memory message
/// ([`FolderPlan::texts`]): the text the search keeps ([`super::oom::search::MAX_OOM_TEXT`]).
pub const MAX_SEARCHED_TEXT: u64 = super::oom_search::MAX_OOM_TEXT as u64;

/// Which files of a dump folder to read, given their names: those named like dumps
/// ([`is_ours`]) and `*.error.txt` (an OOM message may be in it), with the HLO texts
/// apart; when none is named like a dump (renamed dumps, such as the TPU examples), every
/// `.txt` and `.txt.gz` that is not an HLO text, each then judged by its content. Other
/// text files ([`is_other_text`]) are searched for an out-of-memory message; every other
/// file is skipped and counted.
pub fn folder_plan<S: AsRef<str>>(names: &[S]) -> FolderPlan {
    let name = |i: usize| names[i].as_ref();
    let hlo: Vec<usize> = (0..names.len()).filter(|&i| is_hlo_text(name(i))).collect();
    let any_named = (0..names.len()).any(|i| is_ours(name(i)));
    let dumps: Vec<usize> = (0..names.len())
        .filter(|&i| !is_hlo_text(name(i)))
        .filter(|&i| {
            let n = name(i);
            if any_named {
                is_ours(n) || is_error_text(n)
            } else {
                strip_gz(base(n)).ends_with(".txt") && !n.contains("before_optimizations")
            }
        })
        .collect();
    let texts: Vec<usize> = (0..names.len())
        .filter(|&i| is_other_text(name(i)) && !dumps.contains(&i))
        .collect();
    let skipped = names.len() - dumps.len() - hlo.len() - texts.len();
    FolderPlan {
        dumps,
        hlo,
        texts,
        skipped,
    }
}

/// The one sentence for files skipped ([`FolderPlan::skipped`], `Load::skipped`).
pub fn skipped_sentence(n: usize) -> String {
    let files = if n == 1 { "file" } else { "files" };
    format!("{n} other {files} of the dump folder skipped (XLA's other output: options, HLO after codegen, MLIR, object code, …; logs with no out-of-memory message)")
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

    #[test]
    fn hlo_texts_and_folders() {
        let cpu = "d/module_0000.jit_f.cpu_after_optimizations.txt";
        assert!(is_hlo_text(cpu));
        assert!(!is_hlo_text(
            "module_0000.jit_f.cpu_after_optimizations-buffer-assignment.txt"
        ));
        assert_eq!(
            hlo_module_names(cpu),
            ["module_0000.jit_f.cpu_after_optimizations"]
        );
        assert_eq!(
            hlo_module_names("tpu_v5e_lm.after_optimizations.txt.gz"),
            ["tpu_v5e_lm.after_optimizations", "tpu_v5e_lm"]
        );
        let folder = [
            "m.cpu_after_optimizations-buffer-assignment.txt",
            "m.cpu_after_optimizations.txt",
            "m.cpu_before_optimizations.txt",
            "m.debug_options",
            "m.error.txt",
            "m.ll",
            "m.cpu_after_optimizations-memory-usage-report.txt",
        ];
        let plan = folder_plan(&folder);
        assert_eq!(plan.dumps, [0, 4, 6]);
        assert_eq!(plan.hlo, [1, 2]);
        assert_eq!(plan.skipped, 2);
        assert!(plan.texts.is_empty());
        let renamed = [
            "a.buffer-assignment.txt",
            "a.after_optimizations.txt",
            "a.before_optimizations.txt",
            "a.error.txt",
            "notes.md",
        ];
        let plan = folder_plan(&renamed);
        assert_eq!(
            (plan.dumps, plan.hlo, plan.texts, plan.skipped),
            (vec![0, 3], vec![1, 2], vec![4], 0)
        );
        let logs = [
            "m.buffer-assignment.txt",
            "compile.log",
            "job-123.out",
            "stderr.txt",
            "m.RESULT.json",
            "m.tpu_comp_env.txt",
            "train.log.gz",
            "m.ll",
        ];
        let plan = folder_plan(&logs);
        assert_eq!(
            (plan.dumps, plan.hlo, plan.texts, plan.skipped),
            (vec![0], vec![], vec![1, 2, 3, 6], 3)
        );
        let unnamed = [
            "000_x.txt",
            "000_x.after_optimizations.txt",
            "x.before_optimizations.txt",
            "x.mlir",
        ];
        let plan = folder_plan(&unnamed);
        assert_eq!((plan.dumps, plan.hlo, plan.skipped), (vec![0], vec![1, 2], 1));
        assert_eq!(
            hlo_module_names("d/waste.before_optimizations.txt"),
            ["waste.after_optimizations", "waste"]
        );
        assert_eq!(
            hlo_module_names("module_0044.jit_f.cl_1.before_optimizations.txt"),
            ["module_0044.jit_f.cl_1.after_optimizations", "module_0044.jit_f.cl_1"]
        );
        assert_eq!(hlo_module_names("m.cpu_before_optimizations.txt"), ["m.cpu_after_optimizations"]);
        assert!(plan.texts.is_empty());
    }
}

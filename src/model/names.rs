//! A module's name as people read it: as XLA's `HloModule` line names it
//! ([`xla_module_name`]), numbered where two of a read would read the same
//! ([`shown_module_names`]), and without the parts that differ between two compilations of
//! one program ([`without_compilation_parts`], which the Compare view pairs by). Pure
//! functions of the name the dump's files gave.

/// A module name without what differs between two compilations of the same program: a
/// leading all-digit timestamp (`1700000000123.`), the `module_NNNN.` number and any `.cl_N`
/// part (`cl_123`, XLA's compilation counter). A name with nothing to strip is returned as
/// it is.
pub fn without_compilation_parts(name: &str) -> String {
    let mut rest = name;
    if let Some((head, tail)) = rest.split_once('.') {
        if !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit()) && !tail.is_empty() {
            rest = tail;
        }
    }
    if let Some(tail) = rest.strip_prefix("module_") {
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            if let Some(after) = tail[digits..].strip_prefix('.') {
                rest = after;
            }
        }
    }
    let is_cl = |part: &str| {
        part.strip_prefix("cl_")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    rest.split('.')
        .filter(|part| !is_cl(part))
        .collect::<Vec<_>>()
        .join(".")
}

/// The `module_NNNN` number of a dump's module name, as printed (`0001`).
fn module_number(name: &str) -> Option<&str> {
    let at = name.find("module_")? + "module_".len();
    let digits = name[at..].bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0).then(|| &name[at..at + digits])
}

/// The GPU target of a dump's name (`sm_9.0a` of `….sm_9.0a_gpu_after_optimizations`,
/// `gfx90a` of a ROCm one).
fn gpu_target(name: &str) -> Option<&str> {
    let head = name.strip_suffix("_gpu_after_optimizations")?;
    let at = head.rfind(".sm_").or_else(|| head.rfind(".gfx"))?;
    Some(&head[at + 1..])
}

/// A module named as XLA names it in its `HloModule` line: the dump's file stem without
/// the compilation's parts ([`without_compilation_parts`]) and the compiler pipeline's
/// suffix (`.cpu_after_optimizations`, `.sm_9.0a_gpu_after_optimizations`,
/// `.after_optimizations`): `module_0001.jit_step.sm_9.0a_gpu_after_optimizations` →
/// `jit_step`. A name that would be left empty stays as it is.
pub fn xla_module_name(name: &str) -> String {
    let rest = without_compilation_parts(name);
    // The first `.` after which comes a pipeline's words and `after_optimizations`.
    let pipeline = |tail: &str| {
        tail.strip_suffix("after_optimizations").is_some_and(|p| {
            p.is_empty()
                || (p.ends_with('_')
                    && ["sm_", "gfx", "cpu_", "gpu_", "tpu_"]
                        .iter()
                        .any(|w| p.starts_with(w))
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
        })
    };
    let cut = (rest.match_indices('.'))
        .map(|(i, _)| i)
        .find(|&i| i > 0 && pipeline(&rest[i + 1..]));
    match cut {
        Some(i) => rest[..i].to_string(),
        None => rest,
    }
}

/// The names a read's modules are shown by: each as XLA names it ([`xla_module_name`]),
/// with its `module_NNNN` number where two would read the same (`jit_step (0001)`), and the
/// whole name where even that does not tell them apart.
pub fn shown_module_names<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    let short: Vec<String> = names.iter().map(|n| xla_module_name(n.as_ref())).collect();
    let twice = |list: &[String], s: &str| list.iter().filter(|o| o.as_str() == s).count() > 1;
    // Two of one name compiled for two GPU targets are told apart by target first.
    let targets_differ = |s: &str| {
        let of = (names.iter().zip(&short)).filter(|(_, o)| o.as_str() == s);
        let mut ts = of.map(|(n, _)| gpu_target(n.as_ref()));
        let first = ts.next().flatten();
        first.is_some() && ts.any(|t| t != first)
    };
    let numbered: Vec<String> = (names.iter().zip(&short))
        .map(|(n, s)| match (module_number(n.as_ref()), gpu_target(n.as_ref())) {
            (_, Some(t)) if twice(&short, s) && targets_differ(s) => format!("{s} ({t})"),
            (Some(k), _) if twice(&short, s) => format!("{s} ({k})"),
            _ => s.clone(),
        })
        .collect();
    (names.iter().zip(&numbered))
        .map(|(n, s)| {
            if twice(&numbered, s) {
                n.as_ref().to_string()
            } else {
                s.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn gpu_targets_tell_one_module_apart() {
        let names = [
            "module_0037.jit__full_run.sm_8.0_gpu_after_optimizations",
            "module_0041.jit__full_run.sm_9.0a_gpu_after_optimizations",
            "module_0001.jit_f.cpu_after_optimizations",
            "module_0002.jit_f.cpu_after_optimizations",
        ];
        assert_eq!(
            super::shown_module_names(&names),
            ["jit__full_run (sm_8.0)", "jit__full_run (sm_9.0a)", "jit_f (0001)", "jit_f (0002)"]
        );
    }

    #[test]
    fn modules_are_named_as_xla_names_them() {
        use super::{shown_module_names, xla_module_name as x};
        assert_eq!(
            x("module_0001.jit_step.sm_9.0a_gpu_after_optimizations"),
            "jit_step"
        );
        assert_eq!(
            x("1700000000.module_0012.jit_f.cl_42.cpu_after_optimizations"),
            "jit_f"
        );
        assert_eq!(
            x("module_0003.jit_g.gfx90a_gpu_after_optimizations"),
            "jit_g"
        );
        assert_eq!(
            x("module_0000.jit_train_step.cl_7.after_optimizations"),
            "jit_train_step"
        );
        assert_eq!(
            x("module_0005.jit_train.tpu_after_optimizations"),
            "jit_train"
        );
        // Renamed dumps and names with nothing to strip stay.
        assert_eq!(x("tpu_v5e_lm_scan_remat"), "tpu_v5e_lm_scan_remat");
        assert_eq!(x("cpu_tiny"), "cpu_tiny");
        assert_eq!(x("module_0009.jit_gpuish_smooth.cl_3"), "jit_gpuish_smooth");
        assert_eq!(x("after_optimizations"), "after_optimizations");
        // A program whose own name has a dot keeps it.
        assert_eq!(
            x("module_0002.jit_f.v2.cpu_after_optimizations"),
            "jit_f.v2"
        );
        let names = [
            "module_0001.jit_step.sm_9.0a_gpu_after_optimizations",
            "module_0002.jit_step.sm_9.0a_gpu_after_optimizations",
            "module_0003.jit_init.sm_9.0a_gpu_after_optimizations",
            "jit_x.cpu_after_optimizations",
            "jit_x.cl_2.cpu_after_optimizations",
        ];
        assert_eq!(
            shown_module_names(&names),
            [
                "jit_step (0001)",
                "jit_step (0002)",
                "jit_init",
                // No number tells these two apart: their whole names do.
                "jit_x.cpu_after_optimizations",
                "jit_x.cl_2.cpu_after_optimizations",
            ]
        );
    }
}

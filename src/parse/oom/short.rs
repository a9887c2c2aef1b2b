//! The one-line messages of today's runtimes and compilers, which list no buffers:
//!
//! ```text
//! RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom: Ran out of memory on HBM, the total memory required for HLO temporaries (24.35G) exceeds available HBM (15.75G). HLO module: jit_train_step.
//! RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding available bytes: 95.74G
//! RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 8.00M. That was not possible. There are 6.43M free.; (0x0x1_HBM0)
//! RESOURCE_EXHAUSTED: Allocation (size=107374182400) would exceed memory (size=17179869184) :: #allocation7 [shape = 'u8[…]{…}', space=hbm, size = 0xffffffffffffffff, tag = 'output of …'] :: <no-hlo-instruction>
//! RESOURCE_EXHAUSTED: Out of memory while trying to allocate 214748364800 bytes.
//! ```
//!
//! (the last one only where no `BufferAssignment OOM Debugging.` follows: then it is the
//! start of the GPU message). Each is read from its phrase wherever it stands on the line;
//! a figure the line lost (cut by the log) is a warning. What the message cannot tell is
//! said by the summary, as for the other forms.

use super::fields::plain_stat;
use super::lines::Line;
use crate::model::oom::{ByteSize, Capacity, OomForm, OomMessage, StatSection};
use super::size::{combined, exact_count, human, size};
use super::{finish, new_message};

const E1000: &str = "Ran out of memory on ";
const E1000_NAME: &str = "CompileTimeHbmOom";
const HBM_USAGE: &str = "TensorCore Hbm usage";
const DEVICE_BUFFER: &str = "Attempting to allocate ";
const ALLOCATION: &str = "Allocation (size=";
const GPU_STATUS: &str = "Out of memory while trying to allocate ";

/// Which one-line form is on `t`, if any.
fn form_of(t: &str) -> Option<OomForm> {
    if t.contains(HBM_USAGE) {
        Some(OomForm::TpuHbmUsage)
    } else if t.contains(E1000) || t.contains(E1000_NAME) {
        Some(OomForm::TpuCompileTimeHbmOom)
    } else if t.contains(DEVICE_BUFFER) && !t.contains("Attempting to reserve ") {
        Some(OomForm::TpuDeviceBuffer)
    } else if t.contains(ALLOCATION) && t.contains("would exceed memory") {
        Some(OomForm::TpuAllocationExceeds)
    } else if t.contains(GPU_STATUS) {
        Some(OomForm::GpuOutOfMemory)
    } else {
        None
    }
}

/// Whether a one-line message starts at `lines[i]` (checked after the GPU and TPU readers,
/// so a status line that opens their messages is theirs).
pub(crate) fn starts(lines: &[Line], i: usize) -> bool {
    form_of(lines[i].text.trim()).is_some()
}

/// Reads the message at `lines[i]` (and the `See https://openxla.org/…` line after an
/// E-coded one); returns it and the index after it.
pub(crate) fn read(lines: &[Line], i: usize) -> (OomMessage, usize) {
    let t = lines[i].text.trim();
    let form = form_of(t).unwrap_or(OomForm::GpuOutOfMemory);
    let mut m = new_message(form, lines[i].no);
    let from = t.find("RESOURCE_EXHAUSTED").unwrap_or(0);
    m.error = Some(t[from..].trim_end_matches([';', ' ']).to_string());
    m.code = code(t);
    match form {
        OomForm::TpuCompileTimeHbmOom => e1000(t, &mut m),
        OomForm::TpuHbmUsage => hbm_usage(t, &mut m),
        OomForm::TpuDeviceBuffer => device_buffer(t, &mut m),
        OomForm::TpuAllocationExceeds => allocation(t, &mut m),
        _ => gpu_status(t, &mut m),
    }
    let mut end = i + 1;
    if let Some(next) = lines.get(end) {
        let n = next.text.trim();
        if n.starts_with("See ") && n.contains("openxla.org/xla/errors") {
            m.notes.push(n.to_string());
            end += 1;
        }
    }
    finish(&mut m, lines, i, end);
    (m, end)
}

/// `E1000`, `E0100`: an `E` and four digits followed by `:`.
fn code(t: &str) -> Option<String> {
    t.match_indices('E').find_map(|(p, _)| {
        let c = t.get(p..p + 6)?;
        // Bytes, not a str slice: a character of several bytes may straddle them.
        let digits = c.as_bytes()[1..5].iter().all(u8::is_ascii_digit);
        let before_ok = p == 0 || !t.as_bytes()[p - 1].is_ascii_alphanumeric();
        (digits && c.ends_with(':') && before_ok).then(|| c[..5].to_string())
    })
}

/// The size right after `key` in `t`.
fn size_after(t: &str, key: &str) -> Option<ByteSize> {
    let p = t.find(key)?;
    size(t[p + key.len()..].trim_start()).ok().map(|(_, s)| s)
}

/// The rounded size inside the first `(…)` after `key`.
fn size_in_brackets_after(t: &str, key: &str) -> Option<ByteSize> {
    let p = t.find(key)?;
    let rest = &t[p + key.len()..];
    let open = rest.find('(')?;
    human(&rest[open + 1..]).ok().map(|(_, s)| s)
}

fn capacity(m: &mut OomMessage) -> &mut Capacity {
    m.capacity.get_or_insert_with(Capacity::default)
}

/// `exceeded_by = used − capacity`, computed and marked so, when both are known.
fn exceeded(m: &mut OomMessage) {
    let c = capacity(m);
    if let (Some(used), Some(cap), None) = (&c.used, &c.capacity, &c.exceeded_by) {
        c.exceeded_by = Some(combined(used, cap, -1));
        c.computed.push("exceeded_by".to_string());
    }
}

fn missing(m: &mut OomMessage, what: &str) {
    m.warnings
        .push(format!("{what} is not in the text: the line is cut before it"));
}

/// `Ran out of memory on HBM, the total memory required for HLO temporaries (24.35G)
/// exceeds available HBM (15.75G). HLO module: jit_train_step.`
fn e1000(t: &str, m: &mut OomMessage) {
    let space = t
        .find(E1000)
        .map(|p| &t[p + E1000.len()..])
        .and_then(|r| r.split([',', ' ', '.']).next())
        .filter(|s| !s.is_empty());
    m.memory_space = Some(space.unwrap_or("hbm").to_ascii_lowercase());
    let used = size_in_brackets_after(t, "required for ");
    let cap = t
        .find("exceeds available")
        .and_then(|p| size_in_brackets_after(&t[p..], "exceeds available"));
    if used.is_none() {
        missing(m, "the memory required (`required for … (X)`)");
    }
    if cap.is_none() {
        missing(m, "the memory available (`exceeds available … (Y)`)");
    }
    if let Some(p) = t.find("required for ") {
        let what = &t[p + "required for ".len()..];
        if let (Some(open), Some(u)) = (what.find(" ("), &used) {
            m.sections.push(StatSection {
                title: "Memory required".to_string(),
                total: Some(u.clone()),
                at_least: false,
                stats: vec![plain_stat(&what[..open], u.clone())],
            });
        }
    }
    let c = capacity(m);
    c.used = used;
    c.capacity = cap;
    exceeded(m);
}

/// `TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding available
/// bytes: 95.74G`: used is the sum of the parts (computed), each part a stat.
fn hbm_usage(t: &str, m: &mut OomMessage) {
    m.memory_space = Some("hbm".to_string());
    let tc = size_after(t, "TensorCore Hbm usage:");
    let sc = size_after(t, "SparseCore Hbm usage:").or_else(|| size_after(t, "SparseCore Hbm usage"));
    let cap = size_after(t, "exceeding available bytes:");
    let mut stats = Vec::new();
    for (label, s) in [("TensorCore Hbm usage", &tc), ("SparseCore Hbm usage", &sc)] {
        match s {
            Some(s) => stats.push(plain_stat(label, s.clone())),
            None => missing(m, &format!("the {label}")),
        }
    }
    if cap.is_none() {
        missing(m, "the memory available (`exceeding available bytes: Z`)");
    }
    let used = match (&tc, &sc) {
        (Some(a), Some(b)) => Some(combined(a, b, 1)),
        (Some(a), None) => Some(a.clone()),
        _ => None,
    };
    m.sections.push(StatSection {
        title: "Hbm usage".to_string(),
        total: used.clone(),
        at_least: sc.is_none(),
        stats,
    });
    let c = capacity(m);
    if tc.is_some() && sc.is_some() {
        c.computed.push("used".to_string());
    }
    c.used = used;
    c.capacity = cap;
    exceeded(m);
}

/// `Error allocating device buffer: Attempting to allocate 8.00M. That was not possible.
/// There are 6.43M free.; (0x0x1_HBM0)`
fn device_buffer(t: &str, m: &mut OomMessage) {
    m.request = size_after(t, DEVICE_BUFFER);
    if m.request.is_none() {
        missing(m, "the size it attempted to allocate");
    }
    let free = size_after(t, "There are ");
    if free.is_none() {
        missing(m, "the free memory (`There are X free.`)");
    }
    capacity(m).free = free;
    let space = t
        .rfind('(')
        .map(|p| &t[p + 1..])
        .and_then(|r| r.split(')').next())
        .and_then(|d| d.rsplit('_').next())
        .map(|s| s.trim_end_matches(|c: char| c.is_ascii_digit()).to_ascii_lowercase())
        .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase()));
    m.memory_space = space.or_else(|| Some("hbm".to_string()));
}

/// The `size=N` after `key`: exact bytes.
fn exact_after(t: &str, key: &str) -> Option<ByteSize> {
    let p = t.find(key)?;
    let rest = &t[p + key.len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ','))
        .unwrap_or(rest.len());
    exact_count(&rest[..end])
}

/// A `key = 'value'` or `key=value` field of the allocation's brackets.
fn field<'a>(inside: &'a str, key: &str) -> Option<&'a str> {
    let p = inside.find(key)?;
    let rest = inside[p + key.len()..].trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    if let Some(q) = rest.strip_prefix('\'') {
        return q.find('\'').map(|e| &q[..e]);
    }
    let end = rest.find([',', ']']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// `Allocation (size=N) would exceed memory (size=M) :: #allocationK [shape = '…',
/// space=hbm, size = 0x…, tag = '…'] :: <no-hlo-instruction>`
fn allocation(t: &str, m: &mut OomMessage) {
    m.request = exact_after(t, ALLOCATION);
    let cap = t
        .find("would exceed memory")
        .and_then(|p| exact_after(&t[p..], "(size="));
    if m.request.is_none() {
        missing(m, "the size of the allocation");
    }
    if cap.is_none() {
        missing(m, "the memory it would exceed (`would exceed memory (size=M)`)");
    }
    capacity(m).capacity = cap;
    let Some(hash) = t.find(":: #") else {
        missing(m, "the allocation (`:: #allocationN [...]`)");
        return;
    };
    let rest = &t[hash + 4..];
    let mut b = super::entries::empty(1, m.first_line);
    let name_end = rest.find([' ', '[']).unwrap_or(rest.len());
    b.allocation = Some(rest[..name_end].to_string()).filter(|n| !n.is_empty());
    b.size = m.request.clone();
    let close = rest.find("] ::").or_else(|| {
        let t = rest.trim_end();
        t.ends_with(']').then(|| t.len() - 1)
    });
    match (rest.find('['), close) {
        (Some(open), Some(close)) if close > open => {
            let inside = &rest[open + 1..close];
            b.shape = field(inside, "shape").map(str::to_string);
            b.memory_space = field(inside, "space").map(str::to_string);
            b.tag = field(inside, "tag").map(str::to_string);
            let after = rest[close + 1..].trim_start_matches([']', ' ', ':']).trim();
            b.xla_label = Some(after.to_string()).filter(|l| !l.is_empty());
        }
        _ => missing(m, "the end of the allocation's `[...]`"),
    }
    m.memory_space = b.memory_space.clone();
    m.buffers.push(b);
}

/// `Out of memory while trying to allocate N bytes.`
fn gpu_status(t: &str, m: &mut OomMessage) {
    m.request = t
        .find(GPU_STATUS)
        .and_then(|p| super::size::counted(&t[p + GPU_STATUS.len()..]).ok())
        .map(|(_, s)| s);
    if m.request.is_none() {
        missing(m, "the size of the failed request");
    }
}

/// The module (program) a message names: `HLO module: NAME.`, `Error loading program
/// 'NAME'`, `program 'NAME'`.
pub(crate) fn module_named(t: &str) -> Option<String> {
    if let Some(p) = t.find("HLO module: ") {
        let rest = &t[p + "HLO module: ".len()..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let name = rest[..end].trim_end_matches(['.', ',', ';']);
        return (!name.is_empty()).then(|| name.to_string());
    }
    for key in ["Error loading program '", "program '"] {
        if let Some(p) = t.find(key) {
            let rest = &t[p + key.len()..];
            let name = &rest[..rest.find('\'')?];
            return (!name.is_empty()).then(|| name.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_module_names() {
        assert_eq!(code("RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom"), Some("E1000".into()));
        assert_eq!(code("XE1000: x"), None);
        assert_eq!(code("E100: x"), None);
        // Found by the fuzzer: a character of several bytes inside the four digits' place.
        assert_eq!(code("EBp\u{FFFD}x:"), None);
        assert_eq!(code("E1\u{e9}0: E2000:"), Some("E2000".into()));
        assert_eq!(
            module_named("… HLO module: jit_train_step."),
            Some("jit_train_step".into())
        );
        assert_eq!(
            module_named("Error loading program 'jit_eval_step': Attempting"),
            Some("jit_eval_step".into())
        );
        assert_eq!(module_named("HLO module: "), None);
    }
}

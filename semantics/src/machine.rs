//! What the machine a run happens on can afford: the default heap limit,
//! derived from its free memory, and allocation of cells that fails as an
//! error instead of aborting the process; and the byte layout of elements
//! in heap blocks ([`load`], [`store`]).
//!
//! The heap limit counts cells (8 bytes each: an array element of the
//! value semantics, 8 bytes of a heap block, rounded up per block), but a cell
//! costs a run more than its 8 bytes: the heap semantics' race detector
//! keeps shadow records of the cells a kernel touches (16 bytes each, and
//! its page tables), results are read back into values of their own, and
//! the OpenCL driver keeps a host copy beside the device buffer. We budget
//! [`BYTES_PER_CELL`] bytes a cell, and give the heap [`MEMORY_SHARE`] of
//! the memory a process may still take, which is the least of:
//!
//! - `MemAvailable` in `/proc/meminfo`;
//! - the cgroup's limit less its usage (v2 `memory.max`, v1
//!   `memory.limit_in_bytes`);
//! - the soft `RLIMIT_AS` less the address space in use, and the soft
//!   `RLIMIT_DATA` less the data in use (`ulimit -v`, `ulimit -d`).
//!
//! When none of these can be read the limit is [`FALLBACK_MAX_HEAP`]; it is
//! never less than [`MIN_MAX_HEAP`]. Every run may still be given more or
//! less with `--max-heap`; then an allocation the system refuses is an
//! error too ([`zeroed`], [`reserve`]).

use crate::error::{ErrorKind, EvalError, Limits};
use funmem_lang::prim::Prim;
use funmem_lang::Span;
use std::sync::OnceLock;

/// The bytes a heap cell is budgeted to cost a run (see the module doc).
pub const BYTES_PER_CELL: u64 = 32;

/// The share of the memory a process may still take that the heap gets, as
/// a numerator and a denominator: a half.
pub const MEMORY_SHARE: (u64, u64) = (1, 2);

/// The heap limit when the machine's memory cannot be read: 2^27 cells
/// (1 GiB of integers, 4 GiB at [`BYTES_PER_CELL`]).
pub const FALLBACK_MAX_HEAP: u64 = 1 << 27;

/// The least default heap limit, however little memory seems free: 2^20
/// cells.
pub const MIN_MAX_HEAP: u64 = 1 << 20;

/// The memory this process may still take, in bytes, and where that figure
/// comes from; `None` when nothing could be read.
pub fn available_memory() -> Option<(u64, &'static str)> {
    let mut best: Option<(u64, &'static str)> = None;
    let mut offer = |bytes: Option<u64>, why: &'static str| {
        if let Some(b) = bytes {
            if best.is_none_or(|(old, _)| b < old) {
                best = Some((b, why));
            }
        }
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    offer(
        meminfo
            .as_deref()
            .and_then(|t| kib_field(t, "MemAvailable:")),
        "MemAvailable in /proc/meminfo",
    );
    offer(
        cgroup_room("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        "the cgroup's memory.max",
    );
    offer(
        cgroup_room(
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
        "the cgroup's memory.limit_in_bytes",
    );
    let limits = std::fs::read_to_string("/proc/self/limits").ok();
    let status = std::fs::read_to_string("/proc/self/status").ok();
    let room = |limit: &str, used: &str| {
        let max = soft_limit(limits.as_deref()?, limit)?;
        let used = status
            .as_deref()
            .and_then(|s| kib_field(s, used))
            .unwrap_or(0);
        Some(max.saturating_sub(used))
    };
    offer(
        room("Max address space", "VmSize:"),
        "RLIMIT_AS (ulimit -v)",
    );
    offer(room("Max data size", "VmData:"), "RLIMIT_DATA (ulimit -d)");
    best
}

/// The heap limit for `available` bytes of memory (see the module doc).
pub fn max_heap_for(available: Option<u64>) -> u64 {
    match available {
        None => FALLBACK_MAX_HEAP,
        Some(bytes) => {
            let share = bytes / MEMORY_SHARE.1 * MEMORY_SHARE.0;
            (share / BYTES_PER_CELL).max(MIN_MAX_HEAP)
        }
    }
}

/// The default heap limit on this machine, read once per process.
pub fn default_max_heap() -> u64 {
    static MAX: OnceLock<u64> = OnceLock::new();
    *MAX.get_or_init(|| max_heap_for(available_memory().map(|(b, _)| b)))
}

/// A field of `/proc/meminfo` or `/proc/self/status` given in kB, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A cgroup's limit less its usage; `None` when there is no limit.
fn cgroup_room(max: &str, current: &str) -> Option<u64> {
    let max: u64 = std::fs::read_to_string(max).ok()?.trim().parse().ok()?;
    // v1 says "no limit" with a number near 2^63.
    if max >= 1 << 60 {
        return None;
    }
    let used: u64 = std::fs::read_to_string(current)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(used))
}

/// The soft value of a line of `/proc/self/limits`, in bytes; `None` when
/// unlimited.
fn soft_limit(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The error of an allocation of `cells` that the system refused.
#[cold]
fn refused(cells: u64, rule: &'static str, span: Span) -> EvalError {
    EvalError {
        kind: ErrorKind::OutOfHeap,
        rule,
        span,
        message: format!(
            "the system refused memory for {cells} cells ({} bytes); give the run a smaller --max-heap, or it more memory",
            cells.saturating_mul(8)
        ),
    }
}

/// A vector of `cells` zeros, or an error at `span` charged to `rule` when
/// the system refuses the memory (instead of aborting the process).
///
/// The cells come zeroed from the allocator (`calloc`), so pages the program
/// never touches cost no memory, as with `vec![0; n]`, which would abort
/// instead of failing.
pub fn zeroed(cells: u64, rule: &'static str, span: Span) -> Result<Vec<i64>, EvalError> {
    let n = usize::try_from(cells).map_err(|_| refused(cells, rule, span))?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<i64>(n).map_err(|_| refused(cells, rule, span))?;
    // SAFETY: `layout` has a non-zero size (n > 0 cells of 8 bytes).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<i64>();
    if ptr.is_null() {
        return Err(refused(cells, rule, span));
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout
    // of `[i64; n]`, which is what a `Vec<i64>` of capacity n uses; all n
    // elements are initialised (zero is a valid i64).
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// A block of `bytes` zero bytes, as [`zeroed`] (the error counts the
/// block in 8-byte cells, rounded up, as the heap limit does).
pub fn zeroed_bytes(bytes: u64, rule: &'static str, span: Span) -> Result<Vec<u8>, EvalError> {
    let refuse = || refused(cells_of_bytes(bytes), rule, span);
    let n = usize::try_from(bytes).map_err(|_| refuse())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).map_err(|_| refuse())?;
    // SAFETY: `layout` has a non-zero size (n > 0 bytes).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(refuse());
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout
    // of `[u8; n]`, which is what a `Vec<u8>` of capacity n uses; all n
    // bytes are initialised.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// The heap limit's count of `bytes`: 8-byte cells, rounded up, so that a
/// block of n `i64`s counts n as it always did.
#[inline]
pub fn cells_of_bytes(bytes: u64) -> u64 {
    bytes.div_ceil(8)
}

/// Makes room in `v` for `cells` more elements, or an error as [`zeroed`]'s.
pub fn reserve(
    v: &mut Vec<i64>,
    cells: u64,
    rule: &'static str,
    span: Span,
) -> Result<(), EvalError> {
    let n = usize::try_from(cells).map_err(|_| refused(cells, rule, span))?;
    v.try_reserve_exact(n)
        .map_err(|_| refused(cells, rule, span))
}

/// Charges `cells` to a run's count `used` under `limits` (before
/// anything is allocated), then gives an empty vector with room for `room`
/// of them (at most `cells`), or an error as [`zeroed`]'s.
pub fn charged(
    limits: &Limits,
    used: &mut u64,
    cells: u64,
    room: u64,
    rule: &'static str,
    span: Span,
) -> Result<Vec<i64>, EvalError> {
    *used = limits.charge(*used, cells, rule, span)?;
    let mut v = Vec::new();
    reserve(&mut v, room.min(cells), rule, span)?;
    Ok(v)
}

/// The word ([`funmem_lang::prim::Const::to_bits`]) of an element of type
/// `t` in its little-endian bytes (as many as `t.size()`; a `bool` byte is
/// true when not zero). The heap semantics of FUNMEM and IMP read blocks
/// with it.
#[inline(always)]
pub fn load(t: Prim, b: &[u8]) -> i64 {
    match (t, b) {
        (Prim::I64 | Prim::F64, &[a0, a1, a2, a3, a4, a5, a6, a7]) => {
            i64::from_le_bytes([a0, a1, a2, a3, a4, a5, a6, a7])
        }
        (Prim::I32, &[a0, a1, a2, a3]) => i64::from(i32::from_le_bytes([a0, a1, a2, a3])),
        (Prim::F32, &[a0, a1, a2, a3]) => i64::from(u32::from_le_bytes([a0, a1, a2, a3])),
        (Prim::Bool, &[a0]) => i64::from(a0 != 0),
        _ => 0,
    }
}

/// Stores the word `v` of type `t` in its little-endian bytes (as many as
/// `t.size()`; a `bool` as 0 or 1).
#[inline(always)]
pub fn store(t: Prim, b: &mut [u8], v: i64) {
    match t {
        Prim::I64 | Prim::F64 => b.copy_from_slice(&v.to_le_bytes()),
        Prim::I32 | Prim::F32 => b.copy_from_slice(&(v as u32).to_le_bytes()),
        Prim::Bool => b.copy_from_slice(&[u8::from(v & 1 != 0)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_is_a_share_of_memory_over_the_cost_of_a_cell() {
        assert_eq!(max_heap_for(None), FALLBACK_MAX_HEAP);
        assert_eq!(max_heap_for(Some(64 << 30)), (32 << 30) / BYTES_PER_CELL);
        assert_eq!(max_heap_for(Some(1000)), MIN_MAX_HEAP);
    }

    #[test]
    fn reads_proc_formats() {
        let meminfo = "MemTotal:       24684092 kB\nMemAvailable:   23828508 kB\n";
        assert_eq!(kib_field(meminfo, "MemAvailable:"), Some(23828508 * 1024));
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max data size             unlimited            unlimited            bytes     \n\
                      Max address space         2048000000           unlimited            bytes     \n";
        assert_eq!(soft_limit(limits, "Max address space"), Some(2_048_000_000));
        assert_eq!(soft_limit(limits, "Max data size"), None);
    }

    #[test]
    fn this_machine_has_a_limit() {
        let m = default_max_heap();
        assert!(m >= MIN_MAX_HEAP, "{m}");
    }

    #[test]
    fn refused_allocations_are_errors() {
        let e = zeroed(u64::MAX / 2, "E-IOTA", Span::new(0, 1)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfHeap);
        assert!(e.message.contains("refused"), "{e}");
        assert_eq!(zeroed(3, "E-IOTA", Span::new(0, 1)), Ok(vec![0, 0, 0]));
        assert_eq!(zeroed_bytes(3, "E-IOTA", Span::new(0, 1)), Ok(vec![0u8; 3]));
        assert_eq!(cells_of_bytes(9), 2);
    }

    #[test]
    fn elements_are_little_endian_words() {
        let mut b = [0u8; 8];
        store(Prim::I32, &mut b[4..], -2);
        assert_eq!(b, [0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]);
        assert_eq!(load(Prim::I32, &b[4..]), -2);
        assert_eq!(load(Prim::F32, &b[4..]), 0xffff_fffe);
        assert_eq!(load(Prim::I64, &b), -2i64 << 32);
        store(Prim::Bool, &mut b[..1], 1);
        assert_eq!(load(Prim::Bool, &b[..1]), 1);
        assert_eq!(load(Prim::Bool, &b[5..6]), 1);
        let x = 1.5f64.to_bits() as i64;
        store(Prim::F64, &mut b, x);
        assert_eq!(load(Prim::F64, &b), x);
    }
}

//! A shadow-memory data-race detector for fork-join kernels.
//!
//! # What it checks
//!
//! The IFL 2022 paper gives its heap semantics (fig. 10, rule E-MEM-KERNEL)
//! a side condition on every kernel: with `R_i` and `W_i` the sets of
//! locations (block, offset) that iteration `i` reads and writes,
//!
//! ```text
//! racefree(R_1, ..., R_k, W_1, ..., W_k)  =  ∀i. W_i ∩ ⋃_{j≠i} (R_j ∪ W_j) = ∅      (eq. 4)
//! ```
//!
//! "the locations written by iteration *i* must be distinct from the
//! locations read or written by any other iteration". A location is a cell,
//! not a block: two iterations may write one block at different offsets.
//! An iteration's sets include everything it does, the iterations of the
//! kernels nested in it included (fig. 10 takes the union over a body's
//! statements, E-STMS), and eq. 4 is a premise of *every* kernel instance.
//! So:
//!
//! - two iterations of an outer kernel race when their inner kernels touch
//!   one location, one of them writing: a race of the outer kernel,
//!   reported with the outer kernel's span;
//! - two iterations of one instance of an inner kernel race by eq. 4 for
//!   that instance: a race of the inner kernel.
//!
//! Accesses outside every kernel, and accesses of one iteration (however
//! they are ordered inside it), never race. Kernels are fork-join: when one
//! is done, all its accesses happen before everything that follows, so two
//! kernels one after the other never race with each other, and neither do
//! two instances of an inner kernel run by the same outer iteration.
//! IMP's E-IMP-KERNEL (fig. 12) states no side condition; validity asks
//! for the same check there, so the IMP interpreter uses this detector too.
//!
//! Sequential loops (`loop ... for` / `while`) are not parallel and need no
//! events of their own: every access made in any iteration of a loop
//! inside a kernel iteration belongs to that kernel iteration (so two
//! kernel iterations writing one cell in different loop iterations race),
//! a loop outside every kernel races with nothing, and each kernel
//! instance a loop's body runs is an instance of its own, checked as
//! kernels in sequence are. An in-place update is writes (and the reads of
//! its new value), `concat` and `replicate` reads and writes, and a kernel
//! with several results writes each result's row in its iteration.
//!
//! # How
//!
//! The interpreters run a kernel's iterations one after another (the
//! semantics is sequential) and tell the detector when a kernel starts
//! ([`RaceDetector::enter_kernel`]), when each of its iterations starts
//! ([`RaceDetector::begin_iteration`]), when it ends
//! ([`RaceDetector::exit_kernel`]), and every heap read and write. The
//! detector keeps one *shadow memory* per active kernel level, recording for
//! each location what the level's current kernel instance did there:
//! nothing; *written* by iteration `w` (who may have read it too); *read* by
//! iteration `r` only; or *read* by two different iterations `r1` and `r2`.
//! Those four cases are all eq. 4 needs: once two iterations wrote, or one
//! wrote and another touched the location, there is a race; and of two
//! different readers, at least one differs from whichever iteration writes
//! next, so a third reader adds nothing.
//!
//! An access at nesting depth `D` (inside `D` kernels) updates the `D`
//! shadows, outermost first, each with *that level's* current iteration:
//! for an outer kernel, everything an inner kernel does belongs to the outer
//! iteration that runs it. A read conflicts with a writer from another
//! iteration; a write conflicts with a writer or a reader from another
//! iteration. The first conflict is reported as a [`Race`]: the level's
//! kernel, the location, the earlier access (its iteration at the racing
//! level, and whether it wrote) and the current one (its whole iteration
//! path from the racing level inwards). When a kernel instance ends, its
//! shadow is cleared and kept for the next instance (an inner kernel may be
//! instantiated millions of times), while the outer levels keep what they
//! recorded, under their own iterations.
//!
//! # Why it is right
//!
//! *Sound* (every report is a race): a report at level `L` names a location
//! that iteration `j` of the current instance of kernel `L` accesses now and
//! that another iteration `i ≠ j` of the same instance accessed before, one
//! of the two writing. So the location is in `W_i ∩ (R_j ∪ W_j)` or in
//! `W_j ∩ (R_i ∪ W_i)`, and eq. 4 fails for that instance.
//!
//! *Complete* (every race is reported): suppose eq. 4 fails for an instance
//! of kernel `L`: some location is written by an iteration and accessed by
//! another. Of all pairs of conflicting accesses to it (different
//! iterations, one writing), take one whose later access `b` comes first in
//! the run. Every earlier access of the instance to the location is summed
//! up in level `L`'s shadow (the shadow lives as long as the instance, and
//! all accesses of its iterations, nested ones included, pass through it),
//! and before `b` no two of them conflict, so the record is exact: the one
//! writer with its own reads, or the readers (one, or two of them). If `b`
//! writes, its partner wrote (then it is the recorded writer) or read (then
//! a recorded reader differs from `b`'s iteration); if `b` reads, its
//! partner wrote and is the recorded writer. Either way the detector stops
//! at `b`, or earlier at another race. This holds whatever the order of the
//! iterations, even one resuming after another, so it is exact for
//! fork-join kernels: the only concurrency is between iterations of one
//! instance, and eq. 4 (all pairs, both orders) is what is checked, no more.
//!
//! The fuzzer holds the detector to this (`funmem fuzz --source funmem`):
//! on programs with exactly one conflicting pair of accesses, at any depth
//! and in either order, its report (kernel, location, iterations, kinds)
//! must be that pair, as a brute-force semantics over explicit read and
//! write sets finds it; on every other program, one of the pairs found
//! there.
//!
//! # Cost
//!
//! Time: an access costs one shadow update per enclosing kernel, `O(depth)`,
//! and never compares sets; starting a kernel or an iteration is `O(1)`,
//! ending a kernel is proportional to what it touched. Memory: each level's
//! shadow is a hash map from (block, page) to 16 records of
//! 16 bytes, one per offset of an aligned page of 16 offsets, allocated when
//! the page is first touched: proportional to the locations touched (at
//! most 16 records each; exactly one each when accesses are dense), never a
//! shadow of a whole block. Pages keep a sweep over a block (the common
//! case) in cache, and the last page is remembered, so a dense sweep costs
//! one hash look-up per 16 accesses. (One map entry per location is 2-4
//! times bigger and slower: rehashing and cache misses dominate at 10^7
//! locations.)

use crate::error::{Access, Race};
use funmem_lang::Span;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// "No iteration". Iterations are indices `0 .. n-1`, so the two values
/// reserved here never name one.
const NONE: i64 = i64::MIN;
/// In [`Record::b`]: the location was written by iteration `a`.
const WRITTEN: i64 = i64::MIN + 1;

/// Offsets per page: a power of two.
const PAGE_BITS: u32 = 4;
const PAGE: usize = 1 << PAGE_BITS;

/// What one kernel instance did at one location, in 16 bytes:
///
/// | `a`    | `b`       | meaning                                  |
/// |--------|-----------|------------------------------------------|
/// | `NONE` | `NONE`    | nothing                                  |
/// | `w`    | `WRITTEN` | written by `w` (and perhaps read by `w`) |
/// | `r`    | `NONE`    | read by `r` only                         |
/// | `r1`   | `r2`      | read by `r1` and by `r2 ≠ r1`            |
#[derive(Clone, Copy)]
struct Record {
    a: i64,
    b: i64,
}

impl Record {
    const EMPTY: Record = Record { a: NONE, b: NONE };

    /// Iteration `it` reads; the conflicting earlier access, if any, as its
    /// iteration and whether it wrote.
    #[inline(always)]
    fn read(&mut self, it: i64) -> Option<(i64, bool)> {
        if self.b == WRITTEN {
            // Its own write is ordered before: a later write by another
            // iteration conflicts with that write already.
            return (self.a != it).then_some((self.a, true));
        }
        if self.a == NONE {
            self.a = it;
        } else if self.b == NONE && self.a != it {
            self.b = it;
        }
        None
    }

    /// Iteration `it` writes; the conflicting earlier access, if any.
    #[inline(always)]
    fn write(&mut self, it: i64) -> Option<(i64, bool)> {
        if self.b == WRITTEN {
            return (self.a != it).then_some((self.a, true));
        }
        if self.a != NONE && self.a != it {
            return Some((self.a, false));
        }
        // `b`, if set, is a reader different from `a`, which is `it`.
        if self.b != NONE {
            return Some((self.b, false));
        }
        *self = Record { a: it, b: WRITTEN };
        None
    }
}

/// A page: a block and `offset >> PAGE_BITS`.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Page {
    block: usize,
    number: i64,
}

impl Hash for Page {
    /// Runs of 8 consecutive pages keep their order in the hash's low bits,
    /// so that they fill neighbouring buckets and a sweep over a block stays
    /// in cache; the runs and the block are mixed (a 64-bit finaliser), so
    /// strided and scattered pages spread over the table too.
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        const RUN: u32 = 3;
        let run =
            (self.number as u64 >> RUN) ^ (self.block as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut m = run ^ (run >> 33);
        m = m.wrapping_mul(0xff51_afd7_ed55_8ccd);
        m ^= m >> 33;
        m = m.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        m ^= m >> 33;
        let low = (1u64 << RUN) - 1;
        state.write_u64((m & !low) | (self.number as u64 & low));
    }
}

/// The hasher of [`Page`]s: it passes on the one `u64` a page gives it.
#[derive(Default)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used by `Page`; an FNV-style fold keeps this a hasher.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// In [`Shadow::modes`]: the block is recorded byte by byte.
const BYTES: u8 = u8::MAX;

/// One level's shadow memory: records by page, allocated on first touch.
///
/// A location is a byte, but recording every byte would cost up to 8
/// updates per access. So each block is recorded in units of the width of
/// its accesses for as long as they all have one width `w` and start at
/// multiples of `w` (the common case: one element type per block): one
/// record per `w`-byte unit, exactly what byte records would say. The first
/// access of another width (or misaligned) converts the block's records to
/// one per byte, and from then on its accesses update each byte they
/// cover, so that overlaps of different widths are found exactly.
struct Shadow {
    /// Each page touched, to the index in `records` of its first record.
    pages: HashMap<Page, usize, BuildHasherDefault<PageHasher>>,
    records: Vec<Record>,
    /// The page last used, and where its records start (`usize::MAX`:
    /// none).
    last: Page,
    last_base: usize,
    /// Per block label: 0 (untouched), the width of its units, or
    /// [`BYTES`].
    modes: Vec<u8>,
    /// The blocks whose mode is set, to reset them when cleared.
    touched: Vec<usize>,
}

impl Default for Shadow {
    fn default() -> Shadow {
        Shadow {
            pages: HashMap::default(),
            records: Vec::new(),
            last: Page::default(),
            last_base: usize::MAX,
            modes: Vec::new(),
            touched: Vec::new(),
        }
    }
}

impl Shadow {
    /// The record of `offset` in `block`, made empty if new.
    #[inline(always)]
    fn record(&mut self, block: usize, offset: i64) -> &mut Record {
        // An arithmetic shift: negative offsets get pages of their own.
        let page = Page {
            block,
            number: offset >> PAGE_BITS,
        };
        let base = if self.last == page && self.last_base != usize::MAX {
            self.last_base
        } else {
            self.page(page)
        };
        let k = base + (offset & (PAGE as i64 - 1)) as usize;
        // `records` holds whole pages: `k` is in bounds.
        &mut self.records[k]
    }

    /// Whether an access of `width` bytes at `byte` of `block` is recorded
    /// as one unit (at `byte / width` of the block's unit pages); otherwise
    /// the block is (now) recorded byte by byte.
    #[inline(always)]
    fn unit_mode(&mut self, block: usize, byte: i64, width: u8) -> bool {
        let aligned = byte.rem_euclid(i64::from(width)) == 0;
        match self.modes.get(block) {
            Some(&m) if m == width && aligned => return true,
            Some(&BYTES) => return false,
            _ => {}
        }
        self.set_mode(block, width, aligned)
    }

    #[cold]
    #[inline(never)]
    fn set_mode(&mut self, block: usize, width: u8, aligned: bool) -> bool {
        if self.modes.len() <= block {
            self.modes.resize(block + 1, 0);
        }
        let m = self.modes[block];
        if m == 0 {
            self.touched.push(block);
            self.modes[block] = if aligned { width } else { BYTES };
            return aligned;
        }
        // Units of width m become m byte records each.
        let unit = unit_space(block);
        let mut pages: Vec<(Page, usize)> = self
            .pages
            .iter()
            .filter(|(p, _)| p.block == unit)
            .map(|(p, &b)| (*p, b))
            .collect();
        pages.sort_by_key(|(p, _)| p.number);
        for (page, base) in pages {
            for j in 0..PAGE {
                let rec = self.records[base + j];
                if rec.a == NONE && rec.b == NONE {
                    continue;
                }
                let key = (page.number << PAGE_BITS) + j as i64;
                for k in 0..i64::from(m) {
                    let at = key.wrapping_mul(i64::from(m)).wrapping_add(k);
                    *self.record(byte_space(block), at) = rec;
                }
            }
        }
        self.modes[block] = BYTES;
        false
    }

    fn page(&mut self, page: Page) -> usize {
        let fresh = self.records.len();
        let base = *self.pages.entry(page).or_insert(fresh);
        if base == fresh {
            self.records.resize(fresh + PAGE, Record::EMPTY);
        }
        self.last = page;
        self.last_base = base;
        base
    }

    /// Forgets everything; `false` when the map is too big to be worth
    /// keeping: clearing costs its capacity, which must be paid for by what
    /// the instance touched, or a million small inner instances would each
    /// clear one big table.
    fn clear(&mut self) -> bool {
        if self.pages.capacity() > 16 * self.pages.len().max(16) {
            return false;
        }
        self.pages.clear();
        self.records.clear();
        self.last_base = usize::MAX;
        for b in self.touched.drain(..) {
            self.modes[b] = 0;
        }
        true
    }
}

/// The key of a block's records by unit.
#[inline(always)]
fn unit_space(block: usize) -> usize {
    block.wrapping_mul(2)
}

/// The key of a block's records by byte.
#[inline(always)]
fn byte_space(block: usize) -> usize {
    block.wrapping_mul(2).wrapping_add(1)
}

/// One active kernel instance.
struct Level {
    kernel: Span,
    /// Which instance (numbered in order of entry), to tell apart two
    /// instances of one kernel inside one outer iteration.
    instance: u64,
    /// The current iteration (`NONE` before the first starts).
    iteration: i64,
    shadow: Shadow,
}

/// Checks eq. 4 of the IFL 2022 paper on every kernel instance of one
/// evaluation, as the evaluation goes (see the [module documentation](self)).
pub struct RaceDetector {
    /// The active kernel instances, outermost first.
    levels: Vec<Level>,
    /// Cleared shadows of finished instances, for the next ones.
    pool: Vec<Shadow>,
    /// Kernel instances entered so far.
    instances: u64,
    /// The one location whose every access is logged, if any.
    watch: Option<Box<Watch>>,
    /// The planted fault `RaceIgnoresReadsOnNestedWrite` was on when the
    /// detector was made (crate::fault; tests only).
    #[cfg(feature = "planted-faults")]
    nested_write_fault: bool,
}

/// The log of every access to one location, with the full iteration path
/// of each: what a race report's first access needs beyond its iteration
/// at the racing level. Logging one location costs nothing elsewhere.
struct Watch {
    block: usize,
    /// The byte.
    offset: i64,
    /// (instance, iteration) of every active level, and whether it wrote.
    seen: Vec<(Vec<(u64, i64)>, bool)>,
}

impl Default for RaceDetector {
    fn default() -> RaceDetector {
        RaceDetector::new()
    }
}

impl RaceDetector {
    /// A detector outside every kernel.
    pub fn new() -> RaceDetector {
        RaceDetector {
            levels: Vec::new(),
            pool: Vec::new(),
            instances: 0,
            watch: None,
            #[cfg(feature = "planted-faults")]
            nested_write_fault: crate::fault::active(
                crate::fault::Fault::RaceIgnoresReadsOnNestedWrite,
            ),
        }
    }

    /// A detector that also logs every access to `offset` of `block` with
    /// its full iteration path. Run the same evaluation again with it after
    /// a race there, then [`complete`](Self::complete) the report.
    pub fn watching(block: usize, offset: i64) -> RaceDetector {
        RaceDetector {
            watch: Some(Box::new(Watch {
                block,
                offset,
                seen: Vec::new(),
            })),
            ..RaceDetector::new()
        }
    }

    /// Fills in the full iteration path of a race's first access from a
    /// watching detector's log, where the log has it (the racing access is
    /// the last one logged).
    pub fn complete(&self, race: &mut Race) {
        let Some(w) = &self.watch else { return };
        let Some(((second, _), earlier)) = w.seen.split_last() else {
            return;
        };
        let Some(level) = second.len().checked_sub(race.second.path.len()) else {
            return;
        };
        let Some(&first_it) = race.first.path.first() else {
            return;
        };
        // The first access was made in the same instance of the racing
        // kernel (same instances and iterations outside it), by the
        // reported iteration, with the reported kind.
        let found = earlier.iter().find(|(path, write)| {
            *write == race.first.write
                && path.len() > level
                && path[..level] == second[..level]
                && path[level].0 == second[level].0
                && path[level].1 == first_it
        });
        if let Some((path, _)) = found {
            race.first.path = path[level..].iter().map(|&(_, i)| i).collect();
        }
    }

    #[cold]
    #[inline(never)]
    fn log(&mut self, block: usize, offset: i64, width: u8, write: bool) {
        let path: Vec<(u64, i64)> = self
            .levels
            .iter()
            .map(|l| (l.instance, l.iteration))
            .collect();
        if let Some(w) = self.watch.as_mut() {
            let covers = offset <= w.offset && w.offset < offset.saturating_add(i64::from(width));
            if w.block == block && covers {
                w.seen.push((path, write));
            }
        }
    }

    /// A kernel (the one at `kernel` in the source) starts, nested in the
    /// current iteration of the innermost active kernel, if any.
    pub fn enter_kernel(&mut self, kernel: Span) {
        let shadow = self.pool.pop().unwrap_or_default();
        self.instances += 1;
        self.levels.push(Level {
            kernel,
            instance: self.instances,
            iteration: NONE,
            shadow,
        });
    }

    /// Iteration `i` (an index `0 .. n-1`) of the innermost kernel starts;
    /// the previous one, if any, is done. Outside every kernel this does
    /// nothing. (Accesses between [`enter_kernel`](Self::enter_kernel) and
    /// the first iteration belong to no iteration of that kernel.)
    #[inline]
    pub fn begin_iteration(&mut self, i: i64) {
        debug_assert!(i != NONE && i != WRITTEN, "iteration index {i} is reserved");
        if let Some(l) = self.levels.last_mut() {
            l.iteration = i;
        }
    }

    /// The innermost kernel is done: its accesses happen before everything
    /// that follows (they stay recorded in the enclosing kernels, under
    /// their current iterations). Outside every kernel this does nothing.
    pub fn exit_kernel(&mut self) {
        if let Some(Level { mut shadow, .. }) = self.levels.pop() {
            if shadow.clear() {
                self.pool.push(shadow);
            }
        }
    }

    /// Whether a kernel is active. Outside kernels, accesses need not be
    /// reported (they are ignored if they are).
    #[inline]
    pub fn is_active(&self) -> bool {
        !self.levels.is_empty()
    }

    /// The current iteration reads location `offset` of `block` (a
    /// location of one byte: [`RaceDetector::read_bytes`] at `offset`, 1);
    /// a race if another iteration of an active kernel instance wrote
    /// there.
    #[inline]
    pub fn read(&mut self, block: usize, offset: i64) -> Result<(), Box<Race>> {
        self.access(block, offset, 1, false)
    }

    /// The current iteration writes location `offset` of `block`; a race
    /// if another iteration of an active kernel instance read or wrote
    /// there.
    #[inline]
    pub fn write(&mut self, block: usize, offset: i64) -> Result<(), Box<Race>> {
        self.access(block, offset, 1, true)
    }

    /// The current iteration reads bytes `byte .. byte + width` of `block`
    /// (`width` 1, 2, 4 or 8); a race if another iteration of an active
    /// kernel instance wrote one of them. A race's offset is the first
    /// racing byte.
    #[inline]
    pub fn read_bytes(&mut self, block: usize, byte: i64, width: u8) -> Result<(), Box<Race>> {
        self.access(block, byte, width, false)
    }

    /// The current iteration writes bytes `byte .. byte + width` of
    /// `block`; a race if another iteration of an active kernel instance
    /// read or wrote one of them.
    #[inline]
    pub fn write_bytes(&mut self, block: usize, byte: i64, width: u8) -> Result<(), Box<Race>> {
        self.access(block, byte, width, true)
    }

    /// Records an access at every active kernel level (eq. 4).
    #[inline(always)]
    fn access(
        &mut self,
        block: usize,
        offset: i64,
        width: u8,
        write: bool,
    ) -> Result<(), Box<Race>> {
        let width = width.max(1);
        if self.watch.is_some() {
            self.log(block, offset, width, write);
        }
        #[cfg(feature = "planted-faults")]
        let depth = self.levels.len();
        for (d, level) in self.levels.iter_mut().enumerate() {
            let it = level.iteration;
            // Before its first iteration a kernel has no access to record.
            if it == NONE {
                continue;
            }
            let (space, first, count) = if level.shadow.unit_mode(block, offset, width) {
                (unit_space(block), offset / i64::from(width), 1)
            } else {
                (byte_space(block), offset, i64::from(width))
            };
            for k in 0..count {
                let cell = level.shadow.record(space, first.wrapping_add(k));
                #[cfg(feature = "planted-faults")]
                if self.nested_write_fault && write && d + 1 < depth && cell.b != WRITTEN {
                    // The planted fault: the readers are forgotten, unchecked.
                    *cell = Record { a: it, b: WRITTEN };
                    continue;
                }
                let conflict = if write { cell.write(it) } else { cell.read(it) };
                if let Some(c) = conflict {
                    let at = if count == 1 {
                        offset
                    } else {
                        offset.wrapping_add(k)
                    };
                    return Err(self.report(d, block, at, c, write));
                }
            }
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn report(
        &self,
        d: usize,
        block: usize,
        offset: i64,
        first: (i64, bool),
        write: bool,
    ) -> Box<Race> {
        let levels = self.levels.get(d..).unwrap_or_default();
        Box::new(Race {
            kernel: levels.first().map_or(Span::DUMMY, |l| l.kernel),
            block,
            offset,
            first: Access {
                path: vec![first.0],
                write: first.1,
            },
            second: Access {
                path: levels.iter().map(|l| l.iteration).collect(),
                write,
            },
        })
    }
}

/// A race in words, for error messages: which location, which iterations
/// (an iteration of a nested kernel with its inner iterations, outermost
/// first), and whether each read or wrote. The kernel is the race's span.
pub fn describe(race: &Race) -> String {
    let access = |a: &Access| {
        let what = if a.write { "written" } else { "read" };
        let it = match a.path.split_first() {
            Some((i, [])) => format!("iteration {i}"),
            Some((i, inner)) => {
                let inner: Vec<String> = inner.iter().map(i64::to_string).collect();
                format!("iteration {i} (inner iterations {})", inner.join(", "))
            }
            None => "an iteration".to_string(),
        };
        (what, it)
    };
    let (w1, i1) = access(&race.first);
    let (w2, i2) = access(&race.second);
    format!(
        "data race: block {} at offset {} was {w1} by {i1} and then {w2} by {i2} of this kernel (eq. 4: a location written by one iteration must not be touched by another)",
        race.block, race.offset
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn span(k: usize) -> Span {
        Span::new(k, k + 1)
    }

    /// Two iterations of one kernel, each doing its accesses; the race, if any.
    fn two_iterations(a: &[(bool, usize, i64)], b: &[(bool, usize, i64)]) -> Result<(), Box<Race>> {
        let mut r = RaceDetector::new();
        r.enter_kernel(span(7));
        for (i, accs) in [a, b].into_iter().enumerate() {
            r.begin_iteration(i as i64);
            for &(w, blk, off) in accs {
                if w {
                    r.write(blk, off)?;
                } else {
                    r.read(blk, off)?;
                }
            }
        }
        r.exit_kernel();
        Ok(())
    }

    #[test]
    fn write_write() {
        let e = two_iterations(&[(true, 0, 3)], &[(true, 0, 3)]).unwrap_err();
        assert_eq!(e.kernel.start, 7);
        assert_eq!((e.block, e.offset), (0, 3));
        assert_eq!(
            e.first,
            Access {
                path: vec![0],
                write: true
            }
        );
        assert_eq!(
            e.second,
            Access {
                path: vec![1],
                write: true
            }
        );
        let msg = describe(&e);
        assert!(msg.contains("block 0 at offset 3"), "{msg}");
        assert!(msg.contains("written by iteration 0"), "{msg}");
    }

    #[test]
    fn read_write() {
        let e = two_iterations(&[(false, 1, 0)], &[(true, 1, 0)]).unwrap_err();
        assert_eq!(
            e.first,
            Access {
                path: vec![0],
                write: false
            }
        );
        assert_eq!(
            e.second,
            Access {
                path: vec![1],
                write: true
            }
        );
    }

    #[test]
    fn write_read() {
        let e = two_iterations(&[(true, 1, 0)], &[(false, 1, 0)]).unwrap_err();
        assert_eq!(
            e.first,
            Access {
                path: vec![0],
                write: true
            }
        );
        assert_eq!(
            e.second,
            Access {
                path: vec![1],
                write: false
            }
        );
    }

    #[test]
    fn reads_never_race() {
        assert!(two_iterations(&[(false, 0, 0)], &[(false, 0, 0)]).is_ok());
    }

    #[test]
    fn a_write_after_two_readers_names_the_other_one() {
        // Iterations 0 and 1 read; iteration 1 then writes: races with 0.
        let mut r = RaceDetector::new();
        r.enter_kernel(span(0));
        r.begin_iteration(0);
        r.read(0, 0).unwrap();
        r.begin_iteration(1);
        r.read(0, 0).unwrap();
        let e = r.write(0, 0).unwrap_err();
        assert_eq!(
            e.first,
            Access {
                path: vec![0],
                write: false
            }
        );
        // Reader recorded second, writer first: still found.
        let mut r = RaceDetector::new();
        r.enter_kernel(span(0));
        r.begin_iteration(5);
        r.read(0, 0).unwrap();
        r.begin_iteration(6);
        r.read(0, 0).unwrap();
        r.begin_iteration(5);
        let e = r.write(0, 0).unwrap_err();
        assert_eq!(
            e.first,
            Access {
                path: vec![6],
                write: false
            }
        );
    }

    #[test]
    fn one_iteration_reads_and_writes_freely() {
        assert!(two_iterations(
            &[(false, 0, 0), (true, 0, 0), (false, 0, 0), (true, 0, 0)],
            &[]
        )
        .is_ok());
        assert!(two_iterations(
            &[(true, 0, 0), (false, 0, 0)],
            &[(true, 0, 1), (false, 0, 1)]
        )
        .is_ok());
    }

    #[test]
    fn different_offsets_and_blocks_do_not_race() {
        assert!(two_iterations(&[(true, 0, 0)], &[(true, 0, 1)]).is_ok());
        assert!(two_iterations(&[(true, 0, 0)], &[(true, 1, 0)]).is_ok());
        assert!(two_iterations(&[(true, 0, -5)], &[(false, 0, 5)]).is_ok());
    }

    /// Two iterations' accesses of (write, block, byte, width).
    fn two_iterations_bytes(
        a: &[(bool, usize, i64, u8)],
        b: &[(bool, usize, i64, u8)],
    ) -> Result<(), Box<Race>> {
        let mut r = RaceDetector::new();
        r.enter_kernel(span(7));
        for (i, accs) in [a, b].into_iter().enumerate() {
            r.begin_iteration(i as i64);
            for &(w, blk, at, width) in accs {
                if w {
                    r.write_bytes(blk, at, width)?;
                } else {
                    r.read_bytes(blk, at, width)?;
                }
            }
        }
        r.exit_kernel();
        Ok(())
    }

    #[test]
    fn accesses_of_different_widths_race_where_their_bytes_overlap() {
        // One width: units.
        assert!(two_iterations_bytes(&[(true, 0, 0, 8)], &[(true, 0, 8, 8)]).is_ok());
        let r = two_iterations_bytes(&[(true, 0, 8, 8)], &[(false, 0, 8, 8)]).unwrap_err();
        assert_eq!((r.offset, r.first.write, r.second.write), (8, true, false));
        // An i32 inside an i64 written before, and one beside it.
        let r = two_iterations_bytes(&[(true, 0, 8, 8)], &[(true, 0, 12, 4)]).unwrap_err();
        assert_eq!(r.offset, 12);
        assert!(two_iterations_bytes(&[(true, 0, 8, 8)], &[(true, 0, 16, 4)]).is_ok());
        assert!(
            two_iterations_bytes(&[(true, 0, 0, 4), (true, 0, 4, 4)], &[(true, 0, 8, 8)]).is_ok()
        );
        // A bool byte read inside an f64 written by the other iteration;
        // a misaligned access converts the block too.
        let r = two_iterations_bytes(&[(false, 0, 21, 1)], &[(true, 0, 16, 8)]).unwrap_err();
        assert_eq!((r.offset, r.first.write, r.second.write), (21, false, true));
        let r = two_iterations_bytes(&[(true, 0, 4, 4)], &[(false, 0, 6, 4)]).unwrap_err();
        assert_eq!(r.offset, 6);
        // Other blocks are not affected by one block's mixed widths.
        assert!(two_iterations_bytes(
            &[(true, 0, 0, 8), (true, 1, 0, 4)],
            &[(true, 1, 4, 4), (true, 0, 8, 8)]
        )
        .is_ok());
    }

    #[test]
    fn outer_iterations_race_through_inner_kernels() {
        let mut r = RaceDetector::new();
        r.enter_kernel(span(1));
        r.begin_iteration(0);
        r.enter_kernel(span(2));
        r.begin_iteration(0);
        r.write(4, 9).unwrap();
        r.exit_kernel();
        r.begin_iteration(1);
        r.enter_kernel(span(2));
        r.begin_iteration(0);
        r.begin_iteration(1);
        let e = r.write(4, 9).unwrap_err();
        assert_eq!(e.kernel.start, 1, "a race of the outer kernel");
        assert_eq!(
            e.first,
            Access {
                path: vec![0],
                write: true
            }
        );
        assert_eq!(
            e.second,
            Access {
                path: vec![1, 1],
                write: true
            }
        );
        assert!(describe(&e).contains("iteration 1 (inner iterations 1)"));
    }

    #[test]
    fn inner_iterations_race() {
        let mut r = RaceDetector::new();
        r.enter_kernel(span(1));
        r.begin_iteration(3);
        r.write(0, 0).unwrap();
        r.enter_kernel(span(2));
        r.begin_iteration(0);
        // The outer iteration's own earlier write is ordered before.
        r.read(0, 0).unwrap();
        r.read(0, 1).unwrap();
        r.begin_iteration(1);
        let e = r.write(0, 1).unwrap_err();
        assert_eq!(e.kernel.start, 2, "a race of the inner kernel");
        assert_eq!(
            e.first,
            Access {
                path: vec![0],
                write: false
            }
        );
        assert_eq!(
            e.second,
            Access {
                path: vec![1],
                write: true
            }
        );
    }

    #[cfg(feature = "planted-faults")]
    #[test]
    fn the_planted_fault_misses_a_write_after_read_made_in_an_inner_kernel() {
        use crate::fault::{self, Fault};
        let run = |faulty: bool| {
            fault::set(if faulty {
                Fault::RaceIgnoresReadsOnNestedWrite
            } else {
                Fault::None
            });
            let mut r = RaceDetector::new();
            fault::set(Fault::None);
            r.enter_kernel(span(1));
            r.begin_iteration(0);
            r.read(0, 0).unwrap();
            r.begin_iteration(1);
            r.enter_kernel(span(2));
            r.begin_iteration(0);
            r.write(0, 0)
        };
        assert_eq!(run(false).unwrap_err().kernel.start, 1);
        assert!(run(true).is_ok());
    }

    #[test]
    fn sequential_kernels_do_not_race() {
        let mut r = RaceDetector::new();
        for k in 0..3 {
            r.enter_kernel(span(k));
            for i in 0..4 {
                r.begin_iteration(i);
                r.write(0, (i + k as i64) % 4).unwrap();
                r.read(1, 0).unwrap();
            }
            r.exit_kernel();
        }
        // Two inner kernels in one outer iteration are sequential too.
        r.enter_kernel(span(10));
        r.begin_iteration(0);
        for _ in 0..2 {
            r.enter_kernel(span(11));
            r.begin_iteration(0);
            r.write(2, 0).unwrap();
            r.exit_kernel();
            r.enter_kernel(span(11));
            r.begin_iteration(1);
            r.read(2, 0).unwrap();
            r.exit_kernel();
        }
        r.exit_kernel();
        assert!(!r.is_active());
    }

    #[test]
    fn accesses_outside_kernels_do_not_race() {
        let mut r = RaceDetector::new();
        assert!(!r.is_active());
        r.write(0, 0).unwrap();
        r.write(0, 0).unwrap();
        r.enter_kernel(span(0));
        assert!(r.is_active());
        r.begin_iteration(0);
        r.write(0, 0).unwrap();
        r.exit_kernel();
        r.read(0, 0).unwrap();
        r.write(0, 0).unwrap();
        // Accesses before a kernel's first iteration belong to none of its
        // iterations (but to the enclosing kernel's current one).
        r.enter_kernel(span(1));
        r.begin_iteration(0);
        r.enter_kernel(span(2));
        r.write(0, 5).unwrap();
        r.begin_iteration(0);
        r.write(0, 5).unwrap();
        r.begin_iteration(1);
        assert_eq!(r.read(0, 5).unwrap_err().kernel.start, 2);
        r.exit_kernel();
        r.exit_kernel();
        // Unbalanced calls are harmless.
        r.exit_kernel();
        r.begin_iteration(3);
        r.write(0, 0).unwrap();
    }

    #[test]
    fn big_tables_are_not_cleared_for_small_instances() {
        let mut r = RaceDetector::new();
        r.enter_kernel(span(0));
        r.begin_iteration(0);
        for k in 0..100_000 {
            r.write(0, k).unwrap();
        }
        r.exit_kernel();
        for i in 0..1000 {
            r.enter_kernel(span(1));
            r.begin_iteration(0);
            r.write(0, i).unwrap();
            r.begin_iteration(1);
            r.write(0, i + 1).unwrap();
            r.exit_kernel();
        }
        assert_eq!(r.pool.len(), 1);
        assert!(r.pool.iter().all(|s| s.pages.capacity() <= 1024));
    }

    // ---- the brute-force reference, straight from eq. 4 ----

    #[derive(Clone, Debug)]
    enum Item {
        Access(bool, usize, i64),
        /// A kernel: its iterations' indices and bodies, in the order
        /// they run. Interpreters run `0 .. n-1` in order; the detector
        /// allows any order, an index even resuming later, so the traces
        /// do too.
        Kernel(Vec<(i64, Vec<Item>)>),
    }

    #[derive(Clone, Copy, Debug)]
    enum Ev {
        Enter(usize),
        Begin(i64),
        Exit,
        Read(usize, i64),
        Write(usize, i64),
    }

    fn flatten(items: &[Item], next_id: &mut usize, out: &mut Vec<Ev>) {
        for it in items {
            match it {
                Item::Access(true, b, o) => out.push(Ev::Write(*b, *o)),
                Item::Access(false, b, o) => out.push(Ev::Read(*b, *o)),
                Item::Kernel(iters) => {
                    out.push(Ev::Enter(*next_id));
                    *next_id += 1;
                    for (i, body) in iters {
                        out.push(Ev::Begin(*i));
                        flatten(body, next_id, out);
                    }
                    out.push(Ev::Exit);
                }
            }
        }
    }

    type Set = HashSet<(usize, i64)>;

    /// Every kernel instance's per-iteration read and write sets.
    struct Instance {
        id: usize,
        iters: Vec<(i64, Set, Set)>,
    }

    fn instances(evs: &[Ev]) -> Vec<Instance> {
        let mut all: Vec<Instance> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        for ev in evs {
            match *ev {
                Ev::Enter(id) => {
                    open.push(all.len());
                    all.push(Instance {
                        id,
                        iters: Vec::new(),
                    });
                }
                Ev::Begin(i) => {
                    if let Some(&k) = open.last() {
                        all[k].iters.push((i, Set::new(), Set::new()));
                    }
                }
                Ev::Exit => {
                    open.pop();
                }
                Ev::Read(b, o) | Ev::Write(b, o) => {
                    for &k in &open {
                        if let Some((_, r, w)) = all[k].iters.last_mut() {
                            if matches!(ev, Ev::Write(..)) {
                                w.insert((b, o));
                            } else {
                                r.insert((b, o));
                            }
                        }
                    }
                }
            }
        }
        all
    }

    /// A violation of eq. 4: in kernel instance `kernel`, iteration
    /// `writer` wrote `loc` and iteration `other` read it or wrote it.
    #[derive(Debug)]
    struct Violation {
        kernel: usize,
        loc: (usize, i64),
        writer: i64,
        other: i64,
        other_wrote: bool,
    }

    /// Eq. 4 for every instance, all pairs of iterations compared.
    fn violations(evs: &[Ev]) -> Vec<Violation> {
        let mut out = Vec::new();
        for inst in instances(evs) {
            for (i, _, wi) in &inst.iters {
                for (j, rj, wj) in &inst.iters {
                    if i == j {
                        continue;
                    }
                    for loc in wi {
                        if wj.contains(loc) {
                            out.push(Violation {
                                kernel: inst.id,
                                loc: *loc,
                                writer: *i,
                                other: *j,
                                other_wrote: true,
                            });
                        }
                        if rj.contains(loc) {
                            out.push(Violation {
                                kernel: inst.id,
                                loc: *loc,
                                writer: *i,
                                other: *j,
                                other_wrote: false,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    fn run(evs: &[Ev]) -> Result<(), (usize, Box<Race>, usize)> {
        let mut r = RaceDetector::new();
        let mut depth = 0;
        for (t, ev) in evs.iter().enumerate() {
            let res = match *ev {
                Ev::Enter(id) => {
                    depth += 1;
                    r.enter_kernel(span(id));
                    Ok(())
                }
                Ev::Begin(i) => {
                    r.begin_iteration(i);
                    Ok(())
                }
                Ev::Exit => {
                    depth -= 1;
                    r.exit_kernel();
                    Ok(())
                }
                Ev::Read(b, o) => r.read(b, o),
                Ev::Write(b, o) => r.write(b, o),
            };
            res.map_err(|e| (t, e, depth))?;
        }
        Ok(())
    }

    fn access() -> BoxedStrategy<Item> {
        // Offsets on both sides of page boundaries.
        (
            any::<bool>(),
            0usize..2,
            prop::sample::select(vec![-1i64, 0, 15, 16]),
        )
            .prop_map(|(w, b, o)| Item::Access(w, b, o))
            .boxed()
    }

    fn kernel(body: BoxedStrategy<Item>) -> BoxedStrategy<Item> {
        let iters = prop_oneof![
            // In order, as interpreters run them ...
            3 => prop::collection::vec(prop::collection::vec(body.clone(), 0..4), 0..4)
                .prop_map(|bodies| bodies.into_iter().enumerate().map(|(i, b)| (i as i64, b)).collect()),
            // ... or in any order, resuming iterations.
            1 => prop::collection::vec((0i64..3, prop::collection::vec(body, 0..4)), 0..5),
        ];
        iters.prop_map(Item::Kernel).boxed()
    }

    fn trace() -> impl Strategy<Value = Vec<Item>> {
        let depth2 = prop_oneof![3 => access(), 1 => kernel(access())].boxed();
        let depth1 = prop_oneof![1 => access(), 3 => kernel(depth2)].boxed();
        prop::collection::vec(depth1, 0..5)
    }

    proptest! {
        // No regression file: the cases are cheap, so many are run each time.
        #![proptest_config(ProptestConfig {
            cases: 10000,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn agrees_with_eq_4(items in trace()) {
            let mut evs = Vec::new();
            flatten(&items, &mut 0, &mut evs);
            match run(&evs) {
                Ok(()) => prop_assert!(violations(&evs).is_empty(), "missed race: {:?}", violations(&evs)),
                Err((t, race, depth)) => {
                    // Nothing raced before this access ...
                    prop_assert!(violations(&evs[..t]).is_empty());
                    // ... and this access completes the race reported.
                    let v = violations(&evs[..=t]);
                    let loc = (race.block, race.offset);
                    let (a, b) = (&race.first, &race.second);
                    prop_assert_eq!(a.path.len(), 1);
                    prop_assert!(!b.path.is_empty() && b.path.len() <= depth);
                    let (i, j) = (a.path[0], b.path[0]);
                    let found = v.iter().any(|x| {
                        x.kernel == race.kernel.start && x.loc == loc && (
                            // first wrote, second accessed
                            (a.write && x.writer == i && x.other == j && x.other_wrote == b.write)
                            // first read, second wrote
                            || (!a.write && b.write && x.writer == j && x.other == i && !x.other_wrote)
                        )
                    });
                    prop_assert!(found, "reported {:?} not among {:?}", race, v);
                }
            }
        }
    }
}

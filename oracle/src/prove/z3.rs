//! The Z3 back end: the SMT-LIB2 query of [`super::smt`] handed to the
//! system's libz3 through the z3 crate, with a time limit that holds
//! whatever the query.
//!
//! The crate is newer than Debian's Z3 (4.8.12), so this module uses only
//! what that version has: it parses our own SMT-LIB2 text
//! (`Z3_solver_from_string`), checks, and reads integer constants from the
//! model. It inspects no other AST. [`version`] is checked before the
//! first query.
//!
//! # How the limit is kept
//!
//! Each query runs in a child process made by `fork(2)`, which checks the
//! query and writes its answer to a pipe; the parent waits on the pipe
//! with `poll(2)` until the limit, then kills the child (`SIGKILL`) and
//! answers unknown. Z3 cannot be trusted to stop by itself: 4.8's
//! nonlinear solver ignores its own `timeout` parameter on some queries,
//! its timer threads deadlocked two fuzzing threads, and on a claim over a
//! polynomial of degree 27 it did not look at the context's interrupt
//! flag for ten minutes. A killed process stops, whatever it was doing,
//! and gives back all its memory.
//!
//! Why `fork` and not a worker process that runs our own binary: the
//! provers are a library, called from the `funmem` binary, the fuzzer's
//! threads, test harnesses and benches, none of which could be re-executed
//! as a Z3 worker; a forked child needs nothing from the executable.
//!
//! Why forking is sound here, although the parent may have other threads:
//! only the forking thread exists in the child, so the child must not need
//! a lock another thread held at the fork. The parent never checks a
//! query itself: it only makes, once per thread and under the lock that
//! every fork takes, the Z3 context its children start from, and never
//! uses or deletes it, so no Z3 lock or half-made Z3 global is ever copied
//! into a child; glibc's `malloc` is usable in the child of a threaded
//! parent; and the child prints nothing (it points standard output and
//! error at `/dev/null`, so Z3 cannot print into ours either), runs no
//! destructor and leaves with `_exit`. Should anything still block or
//! crash there, the parent's limit ends it the same way: the child is
//! killed or dead, and the answer is unknown with the reason.
//!
//! Hygiene: the pipe is close-on-exec and made and forked under one lock,
//! so no other query's child inherits its writing end; the child closes
//! every other descriptor it inherited, asks the kernel to kill it if its
//! parent dies (`PR_SET_PDEATHSIG`), and caps Z3's memory; the parent
//! reaps every child, killed or not, so none is left behind. Queries in
//! different threads run at the same time, each in its own child.
//!
//! Cost: a fork per query that reaches Z3 (under a millisecond), and Z3's
//! work in a process whose pages are copied from the parent as it writes
//! them. Since children start from a context made once per thread (see
//! `warm`), a trivial query costs less than it did in process with a
//! fresh context each (docs/obligations.md has the figures). Memoised
//! verdicts and obligations decided by the other provers never fork.

use super::smt::Query;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;
use z3::ast::Int;
use z3::{SatResult, Solver};

/// The oldest Z3 this module is written against.
pub const MIN_VERSION: (u32, u32) = (4, 8);

/// Most memory (MiB) Z3 may use in a child before it gives up.
const MEMORY_MIB: u32 = 4096;

/// What Z3 said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// No counterexample exists.
    Unsat,
    /// A model: a value for each of the query's variables (those Z3 could
    /// give as 64-bit integers).
    Sat(BTreeMap<String, i64>),
    /// Time limit, incompleteness, or an unusable Z3.
    Unknown(String),
}

/// The linked Z3's full version string, and whether it is recent enough.
pub fn version() -> &'static Result<String, String> {
    static V: OnceLock<Result<String, String>> = OnceLock::new();
    V.get_or_init(|| {
        let full = z3::full_version().to_string();
        let v = z3::version();
        let text = format!("{v:?}");
        // Version's fields are private; read major and minor off the full
        // string ("Z3 4.8.12.0").
        let nums: Vec<u32> = full
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(2)
            .filter_map(|s| s.parse().ok())
            .collect();
        match nums.as_slice() {
            [maj, min] if (*maj, *min) >= MIN_VERSION => Ok(full),
            _ => Err(format!(
                "Z3 {full} ({text}) is older than {}.{}, which the prover needs",
                MIN_VERSION.0, MIN_VERSION.1
            )),
        }
    })
}

/// Runs the query with a time limit in milliseconds, in a child process
/// that is killed at the limit (see the module's documentation).
pub fn solve(q: &Query, timeout_ms: u32) -> Answer {
    if let Err(e) = version() {
        return Answer::Unknown(e.clone());
    }
    let limit = Duration::from_millis(u64::from(timeout_ms.max(1)));
    match child::run(q, limit) {
        child::Ending::Answered(text) => decode(q, &text),
        child::Ending::Killed => {
            Answer::Unknown(format!("Z3 exceeded its {timeout_ms} ms limit; killed"))
        }
        child::Ending::Died(why) => Answer::Unknown(format!("Z3's process {why}")),
    }
}

/// The answer in the small text format a child writes: `unsat`;
/// `sat` and then one line per variable of the query, in order, with its
/// value or `none`; or `unknown` and a line with the reason. Each
/// answer ends with the line `end`.
fn encode(q: &Query, a: &Answer) -> String {
    let mut s = String::new();
    match a {
        Answer::Unsat => s.push_str("unsat\n"),
        Answer::Sat(vals) => {
            s.push_str("sat\n");
            for v in &q.vars {
                match vals.get(v) {
                    Some(k) => s.push_str(&format!("{k}\n")),
                    None => s.push_str("none\n"),
                }
            }
        }
        Answer::Unknown(why) => {
            s.push_str("unknown\n");
            s.push_str(&why.replace('\n', " "));
            s.push('\n');
        }
    }
    s.push_str("end\n");
    s
}

/// Reads what [`encode`] wrote.
fn decode(q: &Query, text: &str) -> Answer {
    let garbled = || Answer::Unknown("Z3's process gave a garbled answer".to_string());
    let mut lines = text.lines();
    match lines.next() {
        Some("unsat") => Answer::Unsat,
        Some("unknown") => Answer::Unknown(lines.next().unwrap_or("unknown").to_string()),
        Some("sat") => {
            let mut vals = BTreeMap::new();
            for v in &q.vars {
                match lines.next() {
                    Some("none") => {
                        return Answer::Unknown(format!("Z3's model gives `{v}` no 64-bit value"))
                    }
                    Some(k) => match k.parse() {
                        Ok(k) => {
                            vals.insert(v.clone(), k);
                        }
                        Err(_) => return garbled(),
                    },
                    None => return garbled(),
                }
            }
            Answer::Sat(vals)
        }
        _ => garbled(),
    }
}

/// Makes this thread's Z3 context (the z3 crate's thread-local one) for
/// the children it forks to start from: making a context costs Z3 4.8
/// about 15 ms, which each child would otherwise pay again. The parent
/// never uses the context, and never deletes it (one handle is leaked),
/// so no Z3 code runs in the parent after this. Called under the fork
/// lock, so no child is forked while this runs.
fn warm() {
    thread_local! {
        static WARM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if !WARM.with(|w| w.replace(true)) {
        z3::set_global_param("memory_max_size", &MEMORY_MIB.to_string());
        std::mem::forget(z3::Context::thread_local());
    }
}

/// One query in the current thread's context, with no limit: what a child
/// runs (on its copy of the context [`warm`] made).
fn check(q: &Query) -> Answer {
    let solver = Solver::new();
    solver.from_string(q.body.as_str());
    match solver.check() {
        SatResult::Unsat => Answer::Unsat,
        SatResult::Unknown => Answer::Unknown(format!(
            "Z3: {}",
            solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".to_string())
        )),
        SatResult::Sat => {
            let Some(model) = solver.get_model() else {
                return Answer::Unknown("Z3 gave no model".to_string());
            };
            let mut vals = BTreeMap::new();
            for v in &q.vars {
                let c = Int::new_const(v.as_str());
                match model.eval(&c, true).and_then(|x| x.as_i64()) {
                    Some(k) => {
                        vals.insert(v.clone(), k);
                    }
                    None => {
                        return Answer::Unknown(format!("Z3's model gives `{v}` no 64-bit value"))
                    }
                }
            }
            Answer::Sat(vals)
        }
    }
}

/// The child process of one query: fork, wait with a limit, kill, reap.
mod child {
    use super::Query;
    use std::time::{Duration, Instant};

    /// How a child ended.
    pub enum Ending {
        /// It wrote a whole answer (in [`super::encode`]'s format).
        Answered(String),
        /// The limit passed first; it was killed.
        Killed,
        /// It died or could not be started; why.
        Died(String),
    }

    /// The last line of every whole answer.
    const END: &str = "end\n";

    /// Held while a pipe is made and its child forked, so that no other
    /// thread's child inherits the pipe's writing end.
    static FORKING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[cfg(test)]
    thread_local! {
        /// The last child this thread forked, for the tests.
        pub static LAST_CHILD: std::cell::Cell<libc::pid_t> = const { std::cell::Cell::new(0) };
    }

    /// Runs the query in a child process for at most `limit`.
    pub fn run(q: &Query, limit: Duration) -> Ending {
        let deadline = Instant::now() + limit;
        let parent = unsafe { libc::getpid() };
        let (pid, rfd) = {
            let _turn = FORKING.lock().unwrap_or_else(|p| p.into_inner());
            super::warm();
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: `fds` has room for the two descriptors.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Ending::Died(format!(
                    "could not be started (pipe: {})",
                    std::io::Error::last_os_error()
                ));
            }
            let [rfd, wfd] = fds;
            // SAFETY: the child runs only `serve`, which never returns.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // SAFETY: this is the child, and `wfd` is its pipe.
                unsafe { serve(q, rfd, wfd, parent) }
            }
            // SAFETY: the parent's copy of the writing end is ours to close.
            unsafe { libc::close(wfd) };
            if pid < 0 {
                let e = std::io::Error::last_os_error();
                unsafe { libc::close(rfd) };
                return Ending::Died(format!("could not be started (fork: {e})"));
            }
            #[cfg(test)]
            LAST_CHILD.with(|c| c.set(pid));
            (pid, rfd)
        };
        let waited = wait(rfd, deadline);
        if !matches!(waited, Waited::Answer(_)) {
            // SAFETY: `pid` is our child, not yet reaped, so the number
            // cannot have been reused.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let status = reap(pid);
        // SAFETY: `rfd` is ours and closed once.
        unsafe { libc::close(rfd) };
        match (waited, status) {
            (Waited::Answer(text), _) => Ending::Answered(text),
            (Waited::Failed(why), _) => Ending::Died(why),
            // It ended on its own, without a whole answer.
            (Waited::Closed | Waited::Deadline, Some(s)) if !killed_by_us(s) => {
                Ending::Died(died(s))
            }
            (Waited::Closed, _) => Ending::Died("ended without an answer".to_string()),
            (Waited::Deadline, _) => Ending::Killed,
        }
    }

    /// What waiting on the pipe gave.
    enum Waited {
        /// A whole answer.
        Answer(String),
        /// The pipe closed first: the child ended.
        Closed,
        /// The deadline passed.
        Deadline,
        /// Polling or reading failed; why.
        Failed(String),
    }

    fn killed_by_us(status: libc::c_int) -> bool {
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL
    }

    fn died(status: libc::c_int) -> String {
        if libc::WIFSIGNALED(status) {
            format!("died of signal {}", libc::WTERMSIG(status))
        } else {
            format!(
                "exited with status {} without an answer",
                libc::WEXITSTATUS(status)
            )
        }
    }

    /// Reads the child's answer until the deadline.
    fn wait(rfd: libc::c_int, deadline: Instant) -> Waited {
        let mut got: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Waited::Deadline;
            }
            let left = (deadline - now).as_micros().div_ceil(1000);
            let mut pfd = libc::pollfd {
                fd: rfd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, left.min(i32::MAX as u128) as libc::c_int) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Waited::Failed(format!("could not be waited for (poll: {e})"));
            }
            if r == 0 {
                continue;
            }
            // SAFETY: `buf` has room for `buf.len()` bytes.
            let n = unsafe { libc::read(rfd, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Waited::Failed(format!("could not be read (read: {e})"));
            }
            if n == 0 {
                // The child ended without a whole answer; its status
                // says why.
                return Waited::Closed;
            }
            got.extend_from_slice(&buf[..n as usize]);
            if got.ends_with(END.as_bytes()) {
                return Waited::Answer(String::from_utf8_lossy(&got).into_owned());
            }
        }
    }

    /// Waits for the child to end; its status, or `None` if waiting failed.
    fn reap(pid: libc::pid_t) -> Option<libc::c_int> {
        let mut status = 0;
        loop {
            // SAFETY: `pid` is our child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                return Some(status);
            }
            if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
    }

    /// The child: checks the query, writes the answer, and leaves with
    /// `_exit` (no destructor, no buffered output of the parent's).
    ///
    /// # Safety
    ///
    /// Only in the child of `fork`, with the pipe's two ends.
    unsafe fn serve(q: &Query, rfd: libc::c_int, wfd: libc::c_int, parent: libc::pid_t) -> ! {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            // The parent died before the request took effect.
            libc::_exit(3);
        }
        // Standard output and error to /dev/null: Z3 must not write into
        // the parent's output, nor take its locks.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
        }
        // Every other inherited descriptor but the pipe's writing end.
        libc::close(rfd);
        if wfd > 3 {
            libc::close_range(3, (wfd - 1) as libc::c_uint, 0);
        }
        libc::close_range((wfd + 1) as libc::c_uint, libc::c_uint::MAX, 0);
        let text = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::encode(q, &super::check(q))
        }))
        .unwrap_or_else(|_| {
            super::encode(
                q,
                &super::Answer::Unknown("Z3 failed (a panic)".to_string()),
            )
        });
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let n = libc::write(wfd, rest.as_ptr().cast(), rest.len());
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                libc::_exit(2);
            }
            rest = &rest[n as usize..];
        }
        libc::_exit(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::obligation::parse_obligations;

    fn q(src: &str, lemmas: bool) -> Query {
        let o = parse_obligations(&format!("obligation t\n  {src}\n")).unwrap();
        super::super::smt::query(&o[0], lemmas)
    }

    #[test]
    fn linked_z3_is_usable() {
        let v = version().as_ref().expect("a usable Z3");
        assert!(v.starts_with("4."), "{v}");
    }

    #[test]
    fn answers() {
        assert_eq!(
            solve(&q("given a <= b\n at-most a <= b + 1", false), 1000),
            Answer::Unsat
        );
        match solve(&q("given a >= 3\n at-most a <= 5", false), 1000) {
            Answer::Sat(m) => assert!(m["a"] > 5),
            a => panic!("{a:?}"),
        }
        // Even and odd rows, with the lemmas.
        let even_odd =
            "given n >= 1, m >= 0\n disjoint 0 + {(m : 2*n) (n : 1)} and n + {(m : 2*n) (n : 1)}";
        assert_eq!(solve(&q(even_odd, true), 5000), Answer::Unsat);
    }

    /// `(((x + m)^3)^3)^3 - h + x <= max(...)`: Z3 4.8 stays in its
    /// nonlinear solver on this for minutes without looking at an
    /// interrupt.
    pub(crate) const HIGH_DEGREE: &str = {
        "given 0 <= i, i < n\n at-most \
         ((((i + m) * (i + m) * (i + m)) * ((i + m) * (i + m) * (i + m)) * ((i + m) * (i + m) * (i + m))) \
         * (((i + m) * (i + m) * (i + m)) * ((i + m) * (i + m) * (i + m)) * ((i + m) * (i + m) * (i + m))) \
         * (((i + m) * (i + m) * (i + m)) * ((i + m) * (i + m) * (i + m)) * ((i + m) * (i + m) * (i + m)))) - h + i \
         <= max(m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m * m - h, \
         ((((n - 1 + m) * (n - 1 + m) * (n - 1 + m)) * ((n - 1 + m) * (n - 1 + m) * (n - 1 + m)) * ((n - 1 + m) * (n - 1 + m) * (n - 1 + m))) \
         * (((n - 1 + m) * (n - 1 + m) * (n - 1 + m)) * ((n - 1 + m) * (n - 1 + m) * (n - 1 + m)) * ((n - 1 + m) * (n - 1 + m) * (n - 1 + m))) \
         * (((n - 1 + m) * (n - 1 + m) * (n - 1 + m)) * ((n - 1 + m) * (n - 1 + m) * (n - 1 + m)) * ((n - 1 + m) * (n - 1 + m) * (n - 1 + m)))) - h + (n - 1))"
    };

    #[test]
    fn limit_holds_and_the_child_is_reaped() {
        let query = q(HIGH_DEGREE, true);
        for ms in [300, 1000] {
            let start = std::time::Instant::now();
            let a = solve(&query, ms);
            let took = start.elapsed();
            let pid = child::LAST_CHILD.with(|c| c.get());
            assert!(pid > 0);
            // Reaped: the number names no process of ours any more.
            assert!(
                !std::path::Path::new(&format!("/proc/{pid}")).exists() || {
                    // (or was reused by a process that is not our child)
                    let stat =
                        std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                    let ppid: Option<i32> = stat
                        .rsplit(')')
                        .next()
                        .and_then(|r| r.split_whitespace().nth(1))
                        .and_then(|x| x.parse().ok());
                    ppid != Some(std::process::id() as i32)
                }
            );
            match a {
                Answer::Unknown(why) => assert!(
                    why == format!("Z3 exceeded its {ms} ms limit; killed"),
                    "{why}"
                ),
                // A faster Z3 may decide it; the limit is what is tested.
                Answer::Unsat | Answer::Sat(_) => {}
            }
            assert!(
                took < std::time::Duration::from_millis(u64::from(ms) + 2000),
                "{ms} ms limit, took {took:?}"
            );
        }
    }

    #[test]
    fn answers_survive_the_pipe() {
        let query = q("given a >= 3, b == a * 2\n at-most b <= 5", false);
        for a in [
            Answer::Unsat,
            Answer::Sat([("a".to_string(), -4), ("b".to_string(), i64::MAX)].into()),
            Answer::Unknown("Z3: (incomplete\nquantifiers)".to_string()),
        ] {
            let back = decode(&query, &encode(&query, &a));
            match (&a, &back) {
                (Answer::Unknown(x), Answer::Unknown(y)) => assert_eq!(x.replace('\n', " "), *y),
                _ => assert_eq!(a, back),
            }
        }
        assert!(matches!(decode(&query, "sat\n1\n"), Answer::Unknown(_)));
        assert!(matches!(decode(&query, ""), Answer::Unknown(_)));
    }

    #[test]
    fn threads_query_at_once() {
        let easy = q("given a <= b\n at-most a <= b + 1", false);
        let hard = q(HIGH_DEGREE, true);
        let start = std::time::Instant::now();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..3 {
                        assert_eq!(solve(&easy, 5000), Answer::Unsat);
                        let _ = solve(&hard, 200);
                    }
                });
            }
        });
        // Twelve easy queries and twelve killed at 200 ms, four at a time.
        assert!(start.elapsed() < std::time::Duration::from_secs(30));
    }
}

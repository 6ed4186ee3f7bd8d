//! The Z3 back end: the SMT-LIB2 query of [`super::smt`] handed to the
//! system's libz3 through the z3 crate, with a time limit.
//!
//! The crate is newer than Debian's Z3 (4.8.12), so this module uses only
//! what that version has: it parses our own SMT-LIB2 text
//! (`Z3_solver_from_string`), checks, and reads integer constants from the
//! model. It inspects no other AST. [`version`] is checked before the
//! first query.

use super::smt::Query;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use z3::ast::Int;
use z3::{SatResult, Solver};

/// The oldest Z3 this module is written against.
pub const MIN_VERSION: (u32, u32) = (4, 8);

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

/// Runs the query with a time limit in milliseconds.
///
/// The limit is kept by a watchdog thread that interrupts the query's
/// context, not by Z3's own `timeout` parameter: Z3 4.8's nonlinear solver
/// does not always look at it, and its timer threads deadlock when several
/// queries run at once (seen with two fuzzing threads). Each query gets a
/// fresh context, so an interrupt can never reach a later query, and one
/// query runs at a time in the process.
pub fn solve(q: &Query, timeout_ms: u32) -> Answer {
    if let Err(e) = version() {
        return Answer::Unknown(e.clone());
    }
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let limit = std::time::Duration::from_millis(u64::from(timeout_ms.max(1)));
    z3::with_z3_config(&z3::Config::new(), || {
        let ctx = z3::Context::thread_local();
        let handle = ctx.handle();
        let (done, wait) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|s| {
            s.spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(limit) {
                    handle.interrupt();
                }
            });
            let answer = check(q);
            drop(done);
            answer
        })
    })
}

/// One query in the current thread's context.
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
}

//! A pipeline: a program lowered to FUNMEM, each pass in turn, then
//! (optionally) lowered to IMP, every stage type-checked in its language.

use crate::obligation::{Obligation, Prover, Verdict};
use crate::pass::{Counts, Pass};
use funmem_lang::ast::Lang;
use funmem_lang::check::check_any;
use funmem_lang::diag::Diagnostic;
use funmem_lang::parse::AnyProgram;

/// One stage of a pipeline: the program after a step.
#[derive(Clone, Debug)]
pub struct Stage {
    /// The step: `source`, `lower to FUNMEM`, a pass name, `lower to IMP`.
    pub name: String,
    /// The program it produced.
    pub program: AnyProgram,
    /// The obligations the step relied on, with their verdicts.
    pub obligations: Vec<(Obligation, Verdict)>,
    /// What the step did, counted (passes only; empty for the source and
    /// the lowerings).
    pub counts: Counts,
    /// What the step decided, one line each (passes that explain only).
    pub explain: Vec<String>,
}

/// Why a pipeline stopped.
#[derive(Clone, Debug)]
pub struct StageError {
    /// The step that failed.
    pub stage: String,
    /// What went wrong: the step refused its input, or its output does not
    /// type-check (a bug of the step).
    pub diagnostic: Box<Diagnostic>,
    /// The ill-typed output, printed, when there is one.
    pub output: Option<String>,
}

impl std::fmt::Display for StageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.output {
            Some(_) => write!(
                f,
                "stage `{}` produced an ill-typed program: {}",
                self.stage, self.diagnostic.message
            ),
            None => write!(f, "stage `{}`: {}", self.stage, self.diagnostic.message),
        }
    }
}

/// Runs the steps on a well-typed FUN or FUNMEM program: the source, its
/// lowering to FUNMEM (for FUN), each pass, and with `to_imp` the lowering
/// to IMP. Every produced program is type-checked; `prover` discharges the
/// passes' obligations.
pub fn stages(
    src: &AnyProgram,
    passes: &[Pass],
    to_imp: bool,
    prover: &dyn Prover,
) -> Result<Vec<Stage>, StageError> {
    let AnyProgram::Fun(p) = src else {
        return Err(StageError {
            stage: "source".into(),
            diagnostic: Box::new(Diagnostic::new(
                funmem_lang::diag::Phase::Transform,
                funmem_lang::Span::DUMMY,
                "an IMP program is already fully lowered; give a FUN or FUNMEM program",
            )),
            output: None,
        });
    };
    let mut out = vec![Stage {
        name: "source".into(),
        program: src.clone(),
        obligations: Vec::new(),
        counts: Counts::default(),
        explain: Vec::new(),
    }];
    let mut cur = p.clone();
    let fail = |stage: &str, d: Diagnostic| StageError {
        stage: stage.into(),
        diagnostic: Box::new(d),
        output: None,
    };
    let checked = |stage: &str, program: AnyProgram, obligations, counts, explain| match check_any(
        &program,
    ) {
        Ok(()) => Ok(Stage {
            name: stage.into(),
            program,
            obligations,
            counts,
            explain,
        }),
        Err(d) => Err(StageError {
            stage: stage.into(),
            diagnostic: Box::new(d),
            output: Some(program.print()),
        }),
    };
    if p.lang == Lang::Fun {
        let stage = "lower to FUNMEM";
        cur = crate::to_funmem::transform_program(p).map_err(|d| fail(stage, d))?;
        out.push(checked(
            stage,
            AnyProgram::Fun(cur.clone()),
            Vec::new(),
            Counts::default(),
            Vec::new(),
        )?);
    }
    for pass in passes {
        let r = pass.run(&cur, prover).map_err(|d| fail(pass.name, d))?;
        cur = r.program;
        out.push(checked(
            pass.name,
            AnyProgram::Fun(cur.clone()),
            r.obligations,
            r.counts,
            r.explain,
        )?);
    }
    if to_imp {
        let stage = "lower to IMP";
        let q = crate::to_imp::fun_mem_to_imp(&cur).map_err(|d| fail(stage, d))?;
        out.push(checked(
            stage,
            AnyProgram::Imp(q),
            Vec::new(),
            Counts::default(),
            Vec::new(),
        )?);
    }
    Ok(out)
}

//! What is stepped: a program at the layer and semantics the user asked
//! for, as source text whose positions the steps point into.
//!
//! A FUN program steps under its value semantics; asked for the heap
//! semantics it is first lowered to FUNMEM (and the passes run), asked for
//! IMP it is lowered to IMP. A lowered program is printed and read back, so
//! that every step's position points into text the user sees (the lowered
//! program's own positions point into the FUN source). A FUNMEM program
//! steps under the heap semantics (fig. 10) by default, or its value
//! semantics (`unmem`, fig. 9), or as IMP. An IMP program has one
//! semantics (fig. 12).

use crate::record::{Recorder, Trace};
use funmem_lang::parse::{AnyProgram, Layer};
use funmem_lang::Source;
use funmem_semantics::error::{EvalError, Limits};
use funmem_semantics::run::{layer_of, run, RunOptions, Semantics};
use funmem_semantics::value::Value;
use funmem_transforms::pass::Pass;
use std::fmt;

/// The semantics a stepper shows (`--semantics value|heap|imp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum View {
    /// Values: FUN's semantics (figs. 4-5); FUNMEM through `unmem`.
    Value,
    /// FUNMEM's heap semantics (fig. 10), a FUN program lowered first.
    Heap,
    /// IMP's semantics (fig. 12), a FUN or FUNMEM program lowered first.
    Imp,
}

impl View {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            View::Value => "value",
            View::Heap => "heap",
            View::Imp => "imp",
        }
    }

    /// The view a layer gets unless told.
    pub fn default_for(layer: Layer) -> View {
        match layer {
            Layer::Fun => View::Value,
            Layer::FunMem => View::Heap,
            Layer::Imp => View::Imp,
        }
    }
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A program ready to step.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The text the steps' positions point into.
    pub source: Source,
    /// The program.
    pub program: AnyProgram,
    /// Its layer.
    pub layer: Layer,
    /// The semantics it runs under.
    pub semantics: Semantics,
    /// The view asked for.
    pub view: View,
    /// What was done to the file to get here, for a title: `FUN`,
    /// `FUNMEM after simplify,expand-gpu`, `IMP (lowered)`.
    pub title: String,
}

/// Why a program cannot be stepped.
#[derive(Clone, Debug)]
pub enum PrepareError {
    /// The request does not fit the program (e.g. values of IMP).
    Usage(String),
    /// A stage of the pipeline failed on the program.
    Stage(funmem_transforms::pipeline::StageError),
    /// A lowered program did not read back (a bug of the printer).
    Internal(String),
}

impl fmt::Display for PrepareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrepareError::Usage(m) | PrepareError::Internal(m) => f.write_str(m),
            PrepareError::Stage(e) => write!(f, "{e}"),
        }
    }
}

fn layer_name(l: Layer) -> &'static str {
    match l {
        Layer::Fun => "FUN",
        Layer::FunMem => "FUNMEM",
        Layer::Imp => "IMP",
    }
}

/// Makes the program of `source` (already loaded as `p`) ready to step
/// under `view` (the layer's default when `None`), lowering it and running
/// `passes` on its FUNMEM form when the view needs it or passes are given.
pub fn prepare(
    source: &Source,
    p: &AnyProgram,
    view: Option<View>,
    passes: Option<&[Pass]>,
) -> Result<Subject, PrepareError> {
    let layer = layer_of(p);
    let view = view.unwrap_or(View::default_for(layer));
    let lower_to = match (layer, view) {
        (Layer::Imp, View::Value) => {
            return Err(PrepareError::Usage(
                "an IMP program has no value semantics: step it with --semantics imp".into(),
            ))
        }
        (Layer::Imp, _) => {
            if passes.is_some() {
                return Err(PrepareError::Usage(
                    "passes work on FUNMEM; an IMP program is already fully lowered".into(),
                ));
            }
            None
        }
        (_, View::Imp) => Some(true),
        (Layer::Fun, View::Heap) => Some(false),
        _ if passes.is_some() => Some(false),
        _ => None,
    };
    let Some(to_imp) = lower_to else {
        return Ok(Subject {
            source: source.clone(),
            program: p.clone(),
            layer,
            semantics: semantics_of(layer, view),
            view,
            title: layer_name(layer).to_string(),
        });
    };
    let default = funmem_transforms::pass::parse_list("simplify").unwrap_or_default();
    let passes = passes.unwrap_or(&default);
    let provers = funmem_oracle::prove::Provers::default();
    let stages = funmem_transforms::pipeline::stages(p, passes, to_imp, &provers)
        .map_err(PrepareError::Stage)?;
    let Some(last) = stages.last() else {
        return Err(PrepareError::Internal(
            "the pipeline made no program".into(),
        ));
    };
    let out_layer = layer_of(&last.program);
    let ext = match out_layer {
        Layer::Fun => "fun",
        Layer::FunMem => "funmem",
        Layer::Imp => "imp",
    };
    let names: Vec<&str> = passes.iter().map(|q| q.name).collect();
    let title = if names.is_empty() {
        format!("{} (lowered)", layer_name(out_layer))
    } else {
        format!(
            "{} after {}{}",
            layer_name(out_layer),
            names.join(","),
            if to_imp { ", lowered" } else { "" }
        )
    };
    let text = last.program.print();
    let lowered = Source::new(format!("{}.{ext}", source.name), text);
    let program = funmem_lang::front::load(&lowered).map_err(|d| {
        PrepareError::Internal(format!(
            "the lowered program does not read back: {}",
            d.message
        ))
    })?;
    Ok(Subject {
        source: lowered,
        program,
        layer: out_layer,
        semantics: semantics_of(out_layer, view),
        view,
        title,
    })
}

fn semantics_of(layer: Layer, view: View) -> Semantics {
    match (layer, view) {
        (Layer::Fun, _) | (Layer::FunMem, View::Value) => Semantics::Value,
        _ => Semantics::Heap,
    }
}

impl Subject {
    /// The program rule of this subject's semantics.
    pub fn program_rule(&self) -> &'static str {
        match (self.layer, self.semantics) {
            (Layer::Imp, _) => "E-IMP-PROG",
            (_, Semantics::Heap) => "E-MEM-PROG",
            _ => "E-PROG",
        }
    }

    /// Whether the steps have a heap to draw.
    pub fn has_heap(&self) -> bool {
        self.semantics == Semantics::Heap
    }

    /// The input types, for reading unsuffixed literals.
    pub fn input_prims(&self) -> Vec<funmem_lang::prim::Prim> {
        input_prims(&self.program)
    }

    /// Runs the program on `inputs`, keeping at most `budget` steps.
    pub fn record(&self, inputs: &[Value], limits: Limits, budget: usize) -> Recorded {
        let span = funmem_lang::Span::new(0, self.source.text.len());
        let mut rec = Recorder::new(budget, self.has_heap(), self.program_rule(), span);
        let opts = RunOptions {
            limits,
            race_check: true,
        };
        let outcome =
            run(&self.program, self.semantics, inputs, opts, &mut rec).unwrap_or_else(|| {
                Err(EvalError::stuck(
                    self.program_rule(),
                    span,
                    "this layer has no such semantics",
                ))
            });
        let trace = rec.finish(&outcome);
        Recorded { trace, outcome }
    }
}

/// A run and its steps.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The steps.
    pub trace: Trace,
    /// The results, or the error.
    pub outcome: Result<Vec<Value>, EvalError>,
}

/// The element types of a program's non-`mem` parameters, in order.
pub fn input_prims(p: &AnyProgram) -> Vec<funmem_lang::prim::Prim> {
    use funmem_lang::ast::Type;
    match p {
        AnyProgram::Fun(q) => q
            .params
            .iter()
            .filter_map(|x| match &x.ty {
                Type::Prim(t, _) => Some(*t),
                Type::Array(a, _) => Some(a.elem),
                Type::Mem(_) => None,
            })
            .collect(),
        AnyProgram::Imp(q) => q
            .params
            .iter()
            .map(|x| match x {
                funmem_lang::imp::Param::Scalar(_, t, _) => *t,
                funmem_lang::imp::Param::Array(a) => a.elem,
            })
            .collect(),
    }
}

//! Teaching views of the semantics: watch a program evaluate rule by rule.
//!
//! - [`record`]: an observer of the interpreters that turns their events
//!   into steps, each with the whole state after it (persistent maps, so
//!   that stepping back is as cheap as stepping forward);
//! - [`nav`]: the stepper's moves (into, over, out, back, run to an
//!   iteration, allocation, breakpoint or the end), pure functions over a
//!   trace;
//! - [`session`]: what is stepped (a program at the layer and semantics
//!   asked for, lowered and transformed as asked);
//! - [`text`]: one line, or one JSON object, per step;
//! - [`derive`]: the run as a derivation tree of the paper's rules (text,
//!   LaTeX).
//! - [`tui`]: the terminal UI of `funmem step` (ratatui);
//! - [`html`]: a self-contained page replaying the steps in a browser;
//! - [`diff`]: two runs side by side as text (`funmem step --diff`);
//! - [`align`]: which steps of two runs (before and after a pass)
//!   correspond, for side-by-side views.
//!
//! Architecture: this crate sits on top of the others (it lowers and runs
//! passes for side-by-side views) and below the binary; nothing depends on
//! it but the binary.

pub mod align;
pub mod derive;
pub mod diff;
pub mod html;
pub mod nav;
pub mod record;
pub mod session;
pub mod text;
pub mod tui;

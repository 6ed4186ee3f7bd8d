//! The terminal UI of `funmem step`: the source with the current statement
//! highlighted, the rule by its paper name, the environment, the step's
//! effects and the heap drawn as rows of cells coloured by the array (and
//! LMAD) that covers them.
//!
//! Moving is [`crate::nav`]'s business: every key maps to a [`Move`] of a
//! [`Cursor`], so that the UI, the web page and the tests agree on what
//! "over" or "next iteration" means. Each step keeps its whole state, so
//! going back redraws an older snapshot and recomputes nothing.
//!
//! Drawing is a pure function of an [`App`] (tested with ratatui's
//! `TestBackend`); only [`run`] touches the terminal. It restores the
//! terminal on exit, on error and on panic (ratatui's `try_init` installs a
//! hook that does). Side by side (`--diff`), two programs are drawn in two
//! columns and move together through pairs of corresponding steps.

use crate::nav::{target, Cursor, Move};
use crate::record::{Effect, State, Step, StepKind, Trace};
use crate::session::Subject;
use funmem_lang::prim::{Const, Prim};
use funmem_lang::{Name, Source};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::{Block as Panel, Clear, Paragraph, Wrap};
use ratatui::Frame;
use std::collections::HashMap;

/// The smallest terminal drawn; a smaller one shows a message instead.
pub const MIN_WIDTH: u16 = 60;
/// See [`MIN_WIDTH`].
pub const MIN_HEIGHT: u16 = 16;

/// Most cells of one block drawn (the rest are counted).
const MAX_CELLS: usize = 4096;

/// Background colours of arrays in the heap, in order of first binding.
const PALETTE: [Color; 8] = [
    Color::Cyan,
    Color::Green,
    Color::Magenta,
    Color::LightBlue,
    Color::LightGreen,
    Color::LightMagenta,
    Color::LightCyan,
    Color::LightYellow,
];

/// The keys, for the help line and the `?` screen.
const KEYS: [(&str, &str); 18] = [
    ("→ s Enter", "step into: the next step"),
    ("n", "step over: the next step not inside this statement"),
    ("o", "step out: the end of the enclosing statement"),
    ("← b", "step back"),
    (
        "p",
        "step back over: the previous step at this depth or shallower",
    ),
    ("i", "run to the next kernel iteration"),
    ("a", "run to the next allocation"),
    ("w", "run to the next write to the heap"),
    ("c", "continue to the next breakpoint line"),
    ("B", "toggle a breakpoint on the current line"),
    (":N Enter", "toggle a breakpoint on line N"),
    ("r e", "run to the end: results, error or race"),
    ("Home g", "back to the start"),
    ("Tab", "side by side: which side B and : set breakpoints on"),
    ("PgUp PgDn", "scroll the source"),
    ("?", "this help (any key closes it)"),
    ("q Esc", "quit"),
    (
        "",
        "going back is instant: every step keeps its whole state",
    ),
];

/// One program being stepped: its subject, trace and cursor.
pub struct Side<'a> {
    subject: &'a Subject,
    trace: &'a Trace,
    /// Where it is, and its breakpoints.
    pub cursor: Cursor,
    /// Each array's colour, by order of first binding over the whole run
    /// (stable while stepping).
    colours: HashMap<Name, Color>,
    /// Lines the source is scrolled by, beyond keeping the step in view.
    scroll: isize,
}

impl<'a> Side<'a> {
    /// A side at its first step.
    pub fn new(subject: &'a Subject, trace: &'a Trace) -> Side<'a> {
        let mut colours = HashMap::new();
        for s in &trace.steps {
            // A name gets its place in the step that binds it.
            for e in &s.effects {
                let Effect::Bind { name, .. } = e else {
                    continue;
                };
                let placed = s.state.env.get(name).is_some_and(|b| b.place.is_some());
                if placed && !colours.contains_key(name) {
                    let c = PALETTE[colours.len() % PALETTE.len()];
                    colours.insert(name.clone(), c);
                }
            }
        }
        Side {
            subject,
            trace,
            cursor: Cursor::default(),
            colours,
            scroll: 0,
        }
    }

    fn src(&self) -> &Source {
        &self.subject.source
    }

    fn step(&self) -> Option<&Step> {
        self.trace.steps.get(self.cursor.at)
    }

    /// The 1-based line of the current step's statement.
    fn line(&self) -> usize {
        self.step()
            .map_or(1, |s| self.src().line_col(s.span.start).0)
    }

    fn lines_in_source(&self) -> usize {
        self.src().text.lines().count().max(1)
    }
}

/// What the keys are typed into.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    Normal,
    Help,
    /// `:` typed, then digits.
    Line(String),
}

/// The stepper: one side, or two side by side moving through pairs of
/// corresponding steps.
pub struct App<'a> {
    sides: Vec<Side<'a>>,
    /// Side by side: pairs of corresponding step indices, in order.
    pairs: Vec<(usize, usize)>,
    /// Side by side: the current pair.
    pair: usize,
    /// The side `B` and `:` set breakpoints on.
    focus: usize,
    mode: Mode,
    /// A message for the status line (what the last key did).
    note: String,
    /// Set by `q`/Esc.
    pub quit: bool,
}

impl<'a> App<'a> {
    /// A stepper of one program.
    pub fn new(subject: &'a Subject, trace: &'a Trace) -> App<'a> {
        App {
            sides: vec![Side::new(subject, trace)],
            pairs: Vec::new(),
            pair: 0,
            focus: 0,
            mode: Mode::Normal,
            note: String::new(),
            quit: false,
        }
    }

    /// Two programs side by side; `pairs` are corresponding steps (left,
    /// right), increasing in both (pairs out of range are dropped).
    pub fn side_by_side(
        left: (&'a Subject, &'a Trace),
        right: (&'a Subject, &'a Trace),
        pairs: Vec<(usize, usize)>,
    ) -> App<'a> {
        let (nl, nr) = (left.1.steps.len(), right.1.steps.len());
        let mut pairs: Vec<(usize, usize)> = pairs
            .into_iter()
            .filter(|&(l, r)| l < nl && r < nr)
            .collect();
        if pairs.is_empty() {
            pairs.push((0, 0));
        }
        let mut app = App {
            sides: vec![Side::new(left.0, left.1), Side::new(right.0, right.1)],
            pairs,
            pair: 0,
            focus: 0,
            mode: Mode::Normal,
            note: String::new(),
            quit: false,
        };
        app.sync();
        app
    }

    fn diff(&self) -> bool {
        self.sides.len() == 2
    }

    /// The current step of each side.
    pub fn positions(&self) -> Vec<usize> {
        self.sides.iter().map(|s| s.cursor.at).collect()
    }

    fn sync(&mut self) {
        if let Some(&(l, r)) = self.pairs.get(self.pair) {
            self.sides[0].cursor.at = l;
            self.sides[1].cursor.at = r;
        }
        for s in &mut self.sides {
            s.scroll = 0;
        }
    }

    /// Applies a move; gives whether anything moved.
    pub fn go(&mut self, m: Move) -> bool {
        if !self.diff() {
            let s = &mut self.sides[0];
            let moved = s.cursor.go(s.trace, &s.subject.source, m);
            s.scroll = 0;
            return moved;
        }
        let p = self.pair;
        let last = self.pairs.len() - 1;
        let q = match m {
            Move::Into => (p + 1).min(last),
            Move::Back => p.saturating_sub(1),
            Move::Start => 0,
            Move::End => last,
            _ => {
                // Where the move leads on each side, then the first pair
                // (going forward; the last going back) that reaches it on
                // either side.
                let goals: Vec<usize> = self
                    .sides
                    .iter()
                    .map(|s| target(s.trace, s.src(), s.cursor.at, m, &s.cursor.breakpoints))
                    .collect();
                let at = [self.sides[0].cursor.at, self.sides[1].cursor.at];
                let side = |(l, r): (usize, usize), k: usize| if k == 0 { l } else { r };
                if m == Move::BackOver {
                    (0..2)
                        .filter(|&k| goals[k] < at[k])
                        .filter_map(|k| (0..p).rev().find(|&j| side(self.pairs[j], k) <= goals[k]))
                        .max()
                        .unwrap_or(p)
                } else {
                    (0..2)
                        .filter(|&k| goals[k] > at[k])
                        .filter_map(|k| {
                            (p + 1..=last).find(|&j| side(self.pairs[j], k) >= goals[k])
                        })
                        .min()
                        .unwrap_or(p)
                }
            }
        };
        self.pair = q;
        self.sync();
        q != p
    }

    /// Handles a key.
    pub fn key(&mut self, k: KeyEvent) {
        if k.kind == KeyEventKind::Release {
            return;
        }
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        match &mut self.mode {
            Mode::Help => {
                self.mode = Mode::Normal;
                return;
            }
            Mode::Line(digits) => {
                match k.code {
                    KeyCode::Char(c) if c.is_ascii_digit() && digits.len() < 9 => digits.push(c),
                    KeyCode::Backspace if digits.pop().is_none() => self.mode = Mode::Normal,
                    KeyCode::Enter => {
                        let line = digits.parse::<usize>().ok();
                        self.mode = Mode::Normal;
                        match line {
                            Some(l) => self.toggle(l),
                            None => self.note = "no line number given".into(),
                        }
                    }
                    KeyCode::Esc => self.mode = Mode::Normal,
                    _ => {}
                }
                return;
            }
            Mode::Normal => {}
        }
        self.note.clear();
        let m = match k.code {
            KeyCode::Right | KeyCode::Enter | KeyCode::Char('s') => Move::Into,
            KeyCode::Char('n') => Move::Over,
            KeyCode::Char('o') => Move::Out,
            KeyCode::Left | KeyCode::Char('b') => Move::Back,
            KeyCode::Char('p') => Move::BackOver,
            KeyCode::Char('i') => Move::Iteration,
            KeyCode::Char('a') => Move::Alloc,
            KeyCode::Char('w') => Move::Write,
            KeyCode::Char('c') => {
                if self.sides.iter().all(|s| s.cursor.breakpoints.is_empty()) {
                    self.note = "no breakpoints: set one with B or :LINE".into();
                    return;
                }
                Move::Breakpoint
            }
            KeyCode::Char('r') | KeyCode::Char('e') | KeyCode::End => Move::End,
            KeyCode::Home | KeyCode::Char('g') => Move::Start,
            KeyCode::Char('q') | KeyCode::Esc => {
                self.quit = true;
                return;
            }
            KeyCode::Char('?') | KeyCode::Char('h') => {
                self.mode = Mode::Help;
                return;
            }
            KeyCode::Char(':') => {
                self.mode = Mode::Line(String::new());
                return;
            }
            KeyCode::Char('B') => {
                let l = self.sides[self.focus].line();
                self.toggle(l);
                return;
            }
            KeyCode::Tab if self.diff() => {
                self.focus = 1 - self.focus;
                self.note = format!(
                    "breakpoints now go on the {} side",
                    if self.focus == 0 { "left" } else { "right" }
                );
                return;
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                let d = if k.code == KeyCode::PageUp { -10 } else { 10 };
                for s in &mut self.sides {
                    s.scroll += d;
                }
                return;
            }
            _ => {
                self.note = "unknown key: ? shows the keys".into();
                return;
            }
        };
        if !self.go(m) {
            self.note = match m {
                Move::Back | Move::BackOver | Move::Start => "at the start".into(),
                _ => "at the end".into(),
            };
        }
    }

    fn toggle(&mut self, line: usize) {
        let s = &mut self.sides[self.focus];
        let n = s.lines_in_source();
        if line == 0 || line > n {
            self.note = format!("no line {line}: the program has {n} lines");
            return;
        }
        s.cursor.toggle_breakpoint(line);
        self.note = if s.cursor.breakpoints.contains(&line) {
            format!("breakpoint set on line {line}; c continues to it")
        } else {
            format!("breakpoint on line {line} cleared")
        };
    }

    /// Draws the whole screen.
    pub fn draw(&self, f: &mut Frame) {
        let area = f.area();
        if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
            let msg = format!(
                "The terminal is {}×{}; the stepper needs at least {MIN_WIDTH}×{MIN_HEIGHT}. \
                 Make it larger, or press q to quit.",
                area.width, area.height
            );
            f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
            return;
        }
        let [main, status] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
        if self.diff() {
            let [l, r] =
                Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                    .areas(main);
            let (a, b) = (
                column_heights(&self.sides[0], l),
                column_heights(&self.sides[1], r),
            );
            let hs = (a.0.max(b.0), a.1.max(b.1));
            draw_column(f, l, &self.sides[0], self.focus == 0, "left", hs);
            draw_column(f, r, &self.sides[1], self.focus == 1, "right", hs);
        } else {
            draw_single(f, main, &self.sides[0]);
        }
        self.draw_status(f, status);
        if self.mode == Mode::Help {
            draw_help(f, area);
        }
    }

    fn draw_status(&self, f: &mut Frame, area: Rect) {
        let line = match &self.mode {
            Mode::Line(d) => Line::from(vec![
                TSpan::styled(":", Style::new().add_modifier(Modifier::BOLD)),
                TSpan::raw(d.clone()),
                TSpan::styled(
                    "▏  line number, Enter toggles its breakpoint, Esc cancels",
                    Style::new().fg(Color::DarkGray),
                ),
            ]),
            _ if !self.note.is_empty() => Line::from(TSpan::styled(
                self.note.clone(),
                Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            )),
            _ => {
                let key = Style::new().add_modifier(Modifier::BOLD);
                let mut v = Vec::new();
                for (k, what) in [
                    ("→/s", "into"),
                    ("n", "over"),
                    ("o", "out"),
                    ("←/b", "back"),
                    ("p", "back over"),
                    ("i", "iteration"),
                    ("a", "alloc"),
                    ("w", "write"),
                    ("B", "break"),
                    ("c", "continue"),
                    ("e", "end"),
                    ("g", "start"),
                    ("?", "help"),
                    ("q", "quit"),
                ] {
                    v.push(TSpan::styled(k, key));
                    v.push(TSpan::raw(format!(" {what}  ")));
                }
                Line::from(v)
            }
        };
        f.render_widget(Paragraph::new(line), area);
    }
}

/// The iterations in progress, outermost first: `kernel 3:3 i=1 › for
/// 5:5 j=0`.
pub fn iteration_path(src: &Source, state: &State) -> String {
    let parts: Vec<String> = state
        .iterations
        .iter()
        .map(|(span, k)| {
            let (l, c) = src.line_col(span.start);
            let text = src
                .text
                .get(span.start..span.end.min(src.text.len()))
                .unwrap_or("");
            let words: Vec<&str> = text
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '<'))
                .filter(|w| !w.is_empty())
                .collect();
            let kw = ["kernel", "for", "while", "loop", "reduce", "scan"];
            let found = words.iter().position(|w| kw.contains(w));
            let (what, index) = match found {
                Some(j) => {
                    let idx = match (words.get(j + 1), words.get(j + 2)) {
                        (Some(x), Some(&"<")) if matches!(words[j], "kernel" | "for") => Some(*x),
                        _ => None,
                    };
                    (words[j], idx)
                }
                None => ("iteration", None),
            };
            match index {
                Some(x) => format!("{what} {l}:{c} {x}={k}"),
                None => format!("{what} {l}:{c} #{k}"),
            }
        })
        .collect();
    parts.join(" › ")
}

/// A heap cell's value, without the type suffix.
pub(crate) fn cell_text(c: Const) -> String {
    match c {
        Const::Bool(b) => (if b { "true" } else { "false" }).to_string(),
        Const::I32(k) => k.to_string(),
        Const::I64(k) => k.to_string(),
        Const::F32(_) | Const::F64(_) => {
            let s = c.to_string();
            let suffix = if matches!(c, Const::F32(_)) {
                "f32"
            } else {
                "f64"
            };
            match s.strip_suffix(suffix) {
                Some(t) if !t.is_empty() => t.to_string(),
                _ => s,
            }
        }
    }
}

fn truncate(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// How a step touched a cell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    None,
    Read,
    Write,
    Race,
}

/// The heap as lines of coloured cells: per block, rows `b0[8] │1 │2 …`
/// (wrapped to `width`), then a legend of the arrays in it. Gives the lines
/// and, for each, the block it belongs to.
fn heap_lines(side: &Side, step: &Step, width: usize) -> Vec<(usize, Line<'static>)> {
    let state = &step.state;
    let mut out = Vec::new();
    let race = match &step.kind {
        StepKind::Stuck { race: Some(r), .. } => Some((r.block, r.offset)),
        _ => None,
    };
    if state.blocks.is_empty() {
        out.push((
            0,
            Line::from(TSpan::styled(
                "(no block allocated yet)",
                Style::new().fg(Color::DarkGray),
            )),
        ));
    }
    for (k, block) in state.blocks.iter().enumerate() {
        let t = block.elem;
        let size = (t.size() as i64).max(1);
        let n = block.len(t);
        let shown = n.min(MAX_CELLS);
        let cell_of = |offset: i64, elem: Prim| -> Option<usize> {
            let c = offset.checked_mul(elem.size() as i64)? / size;
            usize::try_from(c).ok().filter(|&c| c < shown)
        };
        // Owners: later bindings over earlier ones.
        let mut owner: Vec<Option<Color>> = vec![None; shown];
        let arrays = state.arrays_in(k);
        for (name, place) in &arrays {
            let colour = side.colours.get(*name).copied().unwrap_or(Color::Gray);
            for a in place.addresses(shown.saturating_mul(4).max(16)) {
                if let Some(c) = cell_of(a, place.elem) {
                    owner[c] = Some(colour);
                }
            }
        }
        let mut touch = vec![Touch::None; shown];
        for e in &step.effects {
            match e {
                Effect::Read {
                    block,
                    offset,
                    elem,
                } if *block == k => {
                    if let Some(c) = cell_of(*offset, *elem) {
                        if touch[c] == Touch::None {
                            touch[c] = Touch::Read;
                        }
                    }
                }
                Effect::Write {
                    block,
                    offset,
                    elem,
                    ..
                } if *block == k => {
                    if let Some(c) = cell_of(*offset, *elem) {
                        touch[c] = Touch::Write;
                    }
                }
                _ => {}
            }
        }
        if let Some((b, byte)) = race {
            if b == k {
                if let Some(c) = usize::try_from(byte / size).ok().filter(|&c| c < shown) {
                    touch[c] = Touch::Race;
                }
            }
        }
        let texts: Vec<String> = (0..shown)
            .map(|j| {
                block
                    .element(j as i64, t)
                    .map_or_else(|| "?".to_string(), cell_text)
            })
            .collect();
        let cw = texts
            .iter()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(1)
            .clamp(1, 12);
        let label_w = format!("b{k}[{}]", shown.saturating_sub(1)).len() + 1;
        let per_row = (width.saturating_sub(label_w) / (cw + 3)).max(1);
        if shown == 0 {
            out.push((
                k,
                Line::from(format!("b{k} {t}: empty ({} bytes)", block.bytes.len())),
            ));
        }
        for start in (0..shown).step_by(per_row) {
            let mut spans = vec![TSpan::styled(
                format!("{:<label_w$}", format!("b{k}[{start}]")),
                Style::new().add_modifier(Modifier::BOLD),
            )];
            for j in start..(start + per_row).min(shown) {
                // A cell in its array's colour; one the step wrote bold
                // (reversed when no array covers it), one it read
                // underlined; the racing cell white on red.
                let owned = match owner[j] {
                    Some(c) => Style::new().fg(Color::Black).bg(c),
                    None => Style::new().fg(Color::Gray),
                };
                let (mark, style) = match touch[j] {
                    Touch::None => (" ", owned),
                    Touch::Read => (
                        "R",
                        owned.add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
                    ),
                    Touch::Write if owner[j].is_none() => (
                        "W",
                        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
                    ),
                    Touch::Write => ("W", owned.add_modifier(Modifier::BOLD)),
                    Touch::Race => (
                        "!",
                        Style::new()
                            .fg(Color::White)
                            .bg(Color::Red)
                            .add_modifier(Modifier::BOLD),
                    ),
                };
                let mark_style = match touch[j] {
                    Touch::None => Style::new().fg(Color::DarkGray),
                    Touch::Race => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
                    _ => Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                };
                spans.push(TSpan::styled(
                    if mark == " " { "│" } else { mark },
                    mark_style,
                ));
                spans.push(TSpan::styled(
                    format!(" {:>cw$} ", truncate(&texts[j], cw)),
                    style,
                ));
            }
            out.push((k, Line::from(spans)));
        }
        let mut legend = vec![TSpan::styled(
            format!("{:<label_w$}", format!("{t}")),
            Style::new().fg(Color::DarkGray),
        )];
        if n > shown {
            legend.push(TSpan::raw(format!("… {} more cells  ", n - shown)));
        }
        // The block's names (`mem` bindings), then the arrays in it.
        let value = format!("block {k}");
        let mems: Vec<&str> = state
            .env_in_order()
            .into_iter()
            .filter(|(_, b)| b.place.is_none() && b.value == value)
            .map(|(n, _)| n.as_str())
            .collect();
        let named = if mems.is_empty() {
            String::new()
        } else {
            format!("{} ", mems.join(" = "))
        };
        legend.push(TSpan::styled(
            format!("{named}({} bytes)  ", block.bytes.len()),
            Style::new().fg(Color::DarkGray),
        ));
        if arrays.is_empty() && mems.is_empty() {
            legend.push(TSpan::styled(
                "no array in scope",
                Style::new().fg(Color::DarkGray),
            ));
        }
        for (name, place) in &arrays {
            let colour = side.colours.get(*name).copied().unwrap_or(Color::Gray);
            legend.push(TSpan::styled("■ ", Style::new().fg(colour)));
            legend.push(TSpan::styled(
                name.to_string(),
                Style::new().fg(colour).add_modifier(Modifier::BOLD),
            ));
            legend.push(TSpan::raw(format!(" {}  ", place.lmad_text())));
        }
        out.push((k, Line::from(legend)));
    }
    out
}

/// The blocks the step touched (allocated, read, written, raced on).
fn touched_blocks(step: &Step) -> Vec<usize> {
    let mut v: Vec<usize> = step
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Alloc { block, .. }
            | Effect::Read { block, .. }
            | Effect::Write { block, .. } => Some(*block),
            Effect::Bind { .. } => None,
        })
        .collect();
    if let StepKind::Stuck { race: Some(r), .. } = &step.kind {
        v.push(r.block);
    }
    v
}

fn bordered(title: String, focused: bool) -> Panel<'static> {
    let style = if focused {
        Style::new().fg(Color::White).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(Color::Gray)
    };
    Panel::bordered()
        .title(TSpan::styled(title, style))
        .border_style(Style::new().fg(Color::DarkGray))
}

/// The header's lines: step k/N and the rule; what the step is; where in
/// the iterations; for a race both accesses.
fn header_lines(side: &Side, step: &Step, width: usize) -> Vec<Line<'static>> {
    let src = side.src();
    let n = side.trace.steps.len();
    let k = side.cursor.at;
    let mut first = vec![
        TSpan::raw(format!("step {k}/{} ", n.saturating_sub(1))),
        TSpan::styled(
            format!(" {} ", step.rule),
            Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        ),
        TSpan::raw("  "),
        TSpan::styled(side.subject.title.clone(), Style::new().fg(Color::DarkGray)),
    ];
    if side.trace.cut > 0 {
        first.push(TSpan::styled(
            format!(
                "  ({} steps past the budget of {} not recorded)",
                side.trace.cut, side.trace.budget
            ),
            Style::new().fg(Color::Red),
        ));
    }
    let mut v = vec![Line::from(first)];
    let what = crate::text::describe(src, step, width.max(20));
    let style = match step.kind {
        StepKind::Stuck { .. } => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        StepKind::Finish { .. } => Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
        _ => Style::new().add_modifier(Modifier::BOLD),
    };
    v.push(Line::from(TSpan::styled(what, style)));
    if let Some(r) = crate::text::race_text(step, src) {
        v.push(Line::from(TSpan::styled(r, Style::new().fg(Color::Red))));
    }
    let path = iteration_path(src, &step.state);
    v.push(Line::from(vec![
        TSpan::styled("in: ", Style::new().fg(Color::DarkGray)),
        TSpan::raw(if path.is_empty() {
            "(no iteration)".to_string()
        } else {
            path
        }),
    ]));
    v
}

/// How many rows `lines` take wrapped to `width`.
fn wrapped_height(lines: &[Line], width: usize) -> usize {
    lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(width.max(1)))
        .sum()
}

/// The source with line numbers, the step's statement highlighted (its
/// first line strongly, the rest of it lightly), breakpoints marked.
fn source_lines(side: &Side, step: &Step, height: usize) -> (Vec<Line<'static>>, usize) {
    let src = side.src();
    let whole = matches!(step.kind, StepKind::Start | StepKind::Finish { .. });
    let (hs, he) = if whole {
        (usize::MAX, usize::MAX)
    } else {
        (step.span.start, step.span.end)
    };
    let cur_line = side.line();
    let total = side.lines_in_source();
    let num_w = total.to_string().len();
    let mut out = Vec::new();
    let mut offset = 0usize;
    for (j, raw) in src.text.split_inclusive('\n').enumerate() {
        let no = j + 1;
        let text = raw.trim_end_matches(['\n', '\r']);
        let bp = side.cursor.breakpoints.contains(&no);
        let here = !whole && no == cur_line;
        let gutter = format!(
            "{}{:>num_w$}{} ",
            if bp { "●" } else { " " },
            no,
            if here { "▶" } else { " " }
        );
        let gstyle = if bp {
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else if here {
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(Color::DarkGray)
        };
        let mut spans = vec![TSpan::styled(gutter, gstyle)];
        // Split the line at the highlighted byte range.
        let (ls, le) = (offset, offset + text.len());
        let a = hs.clamp(ls, le) - ls;
        let b = he.clamp(ls, le) - ls;
        let strong = Style::new().fg(Color::Black).bg(Color::Yellow);
        let light = Style::new().bg(Color::Indexed(236));
        let hl = if here { strong } else { light };
        let seg = |x: usize, y: usize| text.get(x..y).unwrap_or("").replace('\t', " ");
        if a < b && text.is_char_boundary(a) && text.is_char_boundary(b) {
            spans.push(TSpan::raw(seg(0, a)));
            spans.push(TSpan::styled(seg(a, b), hl));
            spans.push(TSpan::raw(seg(b, text.len())));
        } else {
            spans.push(TSpan::raw(seg(0, text.len())));
        }
        out.push(Line::from(spans));
        offset += raw.len();
    }
    // Scroll so that the statement's line is in the upper third.
    let want = cur_line.saturating_sub(1) as isize - (height / 3) as isize + side.scroll;
    let max_top = total.saturating_sub(height) as isize;
    let top = want.clamp(0, max_top.max(0)) as usize;
    (out, top)
}

/// The environment in binding order, names bound by this step bold, arrays
/// with their block and LMAD in their heap colour. The most recent last.
fn env_lines(side: &Side, step: &Step, width: usize) -> Vec<Line<'static>> {
    let bound: Vec<&Name> = step
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Bind { name, .. } => Some(name),
            _ => None,
        })
        .collect();
    let env = step.state.env_in_order();
    if env.is_empty() {
        return vec![Line::from(TSpan::styled(
            "(empty)",
            Style::new().fg(Color::DarkGray),
        ))];
    }
    env.into_iter()
        .map(|(name, b)| {
            let new = bound.contains(&name);
            let mut nstyle = Style::new().add_modifier(Modifier::BOLD);
            if let (Some(_), Some(c)) = (&b.place, side.colours.get(name)) {
                nstyle = nstyle.fg(*c);
            }
            let value = match &b.place {
                Some(p) => format!("block {} @ {}", p.block, p.lmad_text()),
                None => b.value.clone(),
            };
            let mark = if new { "+" } else { " " };
            let rest = width.saturating_sub(name.as_str().chars().count() + 4);
            let vstyle = if new {
                Style::new().fg(Color::Yellow)
            } else {
                Style::new()
            };
            Line::from(vec![
                TSpan::styled(mark, Style::new().fg(Color::Yellow)),
                TSpan::styled(name.to_string(), nstyle),
                TSpan::raw(" = "),
                TSpan::styled(truncate(&value, rest), vstyle),
            ])
        })
        .collect()
}

fn effect_lines(step: &Step, height: usize, width: usize) -> Vec<Line<'static>> {
    if step.effects.is_empty() {
        return vec![Line::from(TSpan::styled(
            "(none)",
            Style::new().fg(Color::DarkGray),
        ))];
    }
    let n = step.effects.len();
    let room = if n > height {
        height.saturating_sub(1)
    } else {
        n
    };
    let mut v: Vec<Line> = step
        .effects
        .iter()
        .take(room)
        .map(|e| {
            let style = match e {
                Effect::Write { .. } => Style::new().fg(Color::Yellow),
                Effect::Alloc { .. } => Style::new().fg(Color::Cyan),
                Effect::Read { .. } => Style::new().fg(Color::Gray),
                Effect::Bind { .. } => Style::new(),
            };
            Line::from(TSpan::styled(truncate(&e.to_string(), width), style))
        })
        .collect();
    if n > room {
        v.push(Line::from(format!("… {} more", n - room)));
    }
    v
}

/// The heap pane's lines scrolled so that the first block the step touched
/// is in view.
fn heap_view(side: &Side, step: &Step, width: usize, height: usize) -> Vec<Line<'static>> {
    let lines = heap_lines(side, step, width);
    let first = touched_blocks(step)
        .into_iter()
        .filter_map(|b| lines.iter().position(|(k, _)| *k == b))
        .min()
        .unwrap_or(0);
    let start = if first < height {
        0
    } else {
        first.min(lines.len().saturating_sub(height))
    };
    lines.into_iter().skip(start).map(|(_, l)| l).collect()
}

fn heap_height(side: &Side, step: &Step, width: usize, avail: u16) -> u16 {
    let n = heap_lines(side, step, width).len().min(1000) as u16 + 2;
    n.clamp(4, (avail / 5 * 2).max(4))
}

fn draw_single(f: &mut Frame, area: Rect, side: &Side) {
    let Some(step) = side.step() else {
        f.render_widget(Paragraph::new("no steps were recorded"), area);
        return;
    };
    let w = area.width.saturating_sub(2) as usize;
    let head = header_lines(side, step, w.saturating_sub(4));
    let hh = (wrapped_height(&head, w) as u16 + 2).min(area.height / 3);
    let heap = side.subject.has_heap();
    let hp = if heap {
        heap_height(side, step, w, area.height.saturating_sub(hh))
    } else {
        0
    };
    let [top, middle, bottom] = Layout::vertical([
        Constraint::Length(hh),
        Constraint::Min(3),
        Constraint::Length(hp),
    ])
    .areas(area);
    let title = format!(" funmem step: {} ", side.src().name);
    f.render_widget(
        Paragraph::new(head)
            .wrap(Wrap { trim: false })
            .block(bordered(title, true)),
        top,
    );
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(middle);
    draw_source(f, left, side, step, true);
    let [env, eff] =
        Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(right);
    draw_env(f, env, side, step);
    let eh = eff.height.saturating_sub(2) as usize;
    let ew = eff.width.saturating_sub(2) as usize;
    f.render_widget(
        Paragraph::new(effect_lines(step, eh, ew)).block(bordered(" effects ".into(), false)),
        eff,
    );
    if heap {
        draw_heap(f, bottom, side, step);
    }
}

fn draw_source(f: &mut Frame, area: Rect, side: &Side, step: &Step, focused: bool) {
    let h = area.height.saturating_sub(2) as usize;
    let (lines, top) = source_lines(side, step, h);
    let title = format!(" source: {} ", side.subject.title);
    f.render_widget(
        Paragraph::new(lines)
            .scroll((top.min(u16::MAX as usize) as u16, 0))
            .block(bordered(title, focused)),
        area,
    );
}

fn draw_env(f: &mut Frame, area: Rect, side: &Side, step: &Step) {
    let h = area.height.saturating_sub(2) as usize;
    let w = area.width.saturating_sub(2) as usize;
    let lines = env_lines(side, step, w);
    let skip = lines.len().saturating_sub(h);
    let title = if skip > 0 {
        format!(" environment ({skip} older above) ")
    } else {
        " environment ".to_string()
    };
    let lines: Vec<Line> = lines.into_iter().skip(skip).collect();
    f.render_widget(Paragraph::new(lines).block(bordered(title, false)), area);
}

fn draw_heap(f: &mut Frame, area: Rect, side: &Side, step: &Step) {
    let w = area.width.saturating_sub(2) as usize;
    let h = area.height.saturating_sub(2) as usize;
    let lines = heap_view(side, step, w, h);
    let title = format!(
        " heap: {} block{} (R read, W written by this step) ",
        step.state.blocks.len(),
        if step.state.blocks.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    f.render_widget(Paragraph::new(lines).block(bordered(title, false)), area);
}

/// A column's header: [`header_lines`] and the step's effects.
fn column_header(side: &Side, step: &Step, w: usize) -> Vec<Line<'static>> {
    let mut head = header_lines(side, step, w.saturating_sub(4));
    let eff = crate::text::effects_text(&step.effects, 4);
    head.push(if eff.is_empty() {
        Line::from(TSpan::styled(
            "(no effects)",
            Style::new().fg(Color::DarkGray),
        ))
    } else {
        Line::from(TSpan::styled(eff, Style::new().fg(Color::Yellow)))
    });
    head
}

/// The heights of a column's header and heap panes.
fn column_heights(side: &Side, area: Rect) -> (u16, u16) {
    let Some(step) = side.step() else {
        return (0, 0);
    };
    let w = area.width.saturating_sub(2) as usize;
    let head = column_header(side, step, w);
    let hh = (wrapped_height(&head, w) as u16 + 2).min(area.height / 3);
    let hp = if side.subject.has_heap() {
        heap_height(side, step, w, area.height.saturating_sub(hh))
    } else {
        0
    };
    (hh, hp)
}

/// One column of the side-by-side view: header, source, environment, heap;
/// `(hh, hp)` the heights of header and heap (the larger of both columns',
/// so that the panes line up).
fn draw_column(
    f: &mut Frame,
    area: Rect,
    side: &Side,
    focused: bool,
    which: &str,
    (hh, hp): (u16, u16),
) {
    let Some(step) = side.step() else {
        f.render_widget(Paragraph::new("no steps were recorded"), area);
        return;
    };
    let w = area.width.saturating_sub(2) as usize;
    let head = column_header(side, step, w);
    let heap = side.subject.has_heap();
    let hp = if heap { hp } else { 0 };
    let envh = (area.height / 6).max(3);
    let [top, src, env, bottom] = Layout::vertical([
        Constraint::Length(hh),
        Constraint::Min(3),
        Constraint::Length(envh),
        Constraint::Length(hp),
    ])
    .areas(area);
    let title = format!(" {which}: {} ", side.src().name);
    f.render_widget(
        Paragraph::new(head)
            .wrap(Wrap { trim: false })
            .block(bordered(title, focused)),
        top,
    );
    draw_source(f, src, side, step, focused);
    draw_env(f, env, side, step);
    if heap {
        draw_heap(f, bottom, side, step);
    }
}

fn draw_help(f: &mut Frame, area: Rect) {
    let w = area.width.min(84);
    let h = (KEYS.len() as u16 + 4).min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let mut lines: Vec<Line> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                TSpan::styled(
                    format!("{k:>10}  "),
                    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ),
                TSpan::raw(*what),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    lines.push(Line::from(TSpan::styled(
        "any key closes this help",
        Style::new().fg(Color::DarkGray),
    )));
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(bordered(" keys ".into(), true)),
        r,
    );
}

/// Runs the stepper on the terminal until `q`; the terminal is restored
/// whatever happens (a panic hook restores it on panic).
pub fn run(app: &mut App) -> std::io::Result<()> {
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            ratatui::restore();
            return Err(e);
        }
    };
    let r = (|| -> std::io::Result<()> {
        loop {
            terminal.draw(|f| app.draw(f))?;
            if app.quit {
                return Ok(());
            }
            match event::read()? {
                Event::Key(k) => app.key(k),
                Event::Resize(..) => terminal.autoresize()?,
                _ => {}
            }
        }
    })();
    ratatui::restore();
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{prepare, Subject};
    use funmem_semantics::error::Limits;
    use funmem_semantics::value::Value;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn subject(name: &str, text: &str) -> Subject {
        let src = Source::new(name, text);
        let p = funmem_lang::front::load(&src).expect("a program");
        prepare(&src, &p, None, None).expect("prepared")
    }

    fn record(s: &Subject, inputs: &[Value]) -> Trace {
        s.record(inputs, Limits::default(), 10_000).trace
    }

    /// The screen as text, one string per row.
    fn screen(app: &App, w: u16, h: u16) -> Vec<String> {
        let mut t = Terminal::new(TestBackend::new(w, h)).expect("a test terminal");
        t.draw(|f| app.draw(f)).expect("drawn");
        let buf = t.backend().buffer().clone();
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect())
            .collect()
    }

    fn key(app: &mut App, c: char) {
        app.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }

    const KERNEL: &str = "def main (n: int) =
  let (m: mem) = alloc n
  let (xs: [n]int @ m -> R(n)) = kernel i < n do
      let (v: int) = i * 10
      in (v)
  in (xs)
";

    const RACY: &str = "def main (n: int) =
  let (m: mem) = alloc 1
  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do
    in (i)
  in (n)
";

    #[test]
    fn the_first_screen_shows_the_start_and_the_source() {
        let s = subject("k.funmem", KERNEL);
        let t = record(&s, &[Value::int(3)]);
        let app = App::new(&s, &t);
        let rows = screen(&app, 120, 40);
        let all = rows.join("\n");
        assert!(rows[1].contains("step 0/"), "{all}");
        assert!(rows[1].contains("E-MEM-PROG"), "{all}");
        assert!(all.contains("program inputs"), "{all}");
        assert!(
            all.contains(" 3    let (xs: [n]int @ m -> R(n)) = kernel i < n do"),
            "{all}"
        );
        assert!(all.contains("n = 3i64"), "{all}");
        assert!(all.contains("no block allocated yet"), "{all}");
    }

    #[test]
    fn stepping_shows_the_rule_the_line_and_the_heap_cells() {
        let s = subject("k.funmem", KERNEL);
        let t = record(&s, &[Value::int(3)]);
        let mut app = App::new(&s, &t);
        key(&mut app, 's');
        let rows = screen(&app, 120, 40);
        let all = rows.join("\n");
        assert!(
            rows[1].contains("step 1/") && rows[1].contains("E-MEM-ALLOC"),
            "{all}"
        );
        assert!(all.contains("2▶   let (m: mem) = alloc n"), "{all}");
        assert!(all.contains("alloc b0 (24 bytes)"), "{all}");
        // The statement is highlighted, the rest of its line is not.
        let mut t2 = Terminal::new(TestBackend::new(120, 40)).expect("a test terminal");
        t2.draw(|f| app.draw(f)).expect("drawn");
        let buf = t2.backend().buffer().clone();
        let y = rows
            .iter()
            .position(|r| r.contains("2▶"))
            .expect("the line") as u16;
        let x = rows[y as usize].find("let (m").expect("the statement");
        let x = rows[y as usize][..x].chars().count() as u16;
        assert_eq!(buf[(x, y)].bg, Color::Yellow);
        assert_eq!(buf[(x + 21, y)].bg, Color::Yellow, "the n of alloc n");
        assert_ne!(buf[(x + 22, y)].bg, Color::Yellow, "past the statement");
        assert_ne!(buf[(x, y + 1)].bg, Color::Yellow, "the next line");
        // To the end: the kernel wrote 0, 10, 20 into b0, covered by xs.
        key(&mut app, 'e');
        let all = screen(&app, 120, 40).join("\n");
        assert!(all.contains("results: [0i64, 10i64, 20i64]"), "{all}");
        let row = all
            .lines()
            .find(|l| l.starts_with("│b0[0]"))
            .expect("a heap row");
        assert!(row.contains("R  0 R 10 R 20 "), "{row}");
        assert!(all.contains("■ xs 0 + {(3 : 1)}"), "{all}");
        // The last write of the kernel is marked W.
        let mut app = App::new(&s, &t);
        key(&mut app, 'w');
        let all = screen(&app, 120, 40).join("\n");
        assert!(all.contains("b0[0] W 0 │ 0 │ 0 "), "{all}");
        assert!(all.contains("in: kernel 3:3 i=0"), "{all}");
    }

    #[test]
    fn back_returns_to_the_identical_screen() {
        let s = subject("k.funmem", KERNEL);
        let t = record(&s, &[Value::int(3)]);
        let mut app = App::new(&s, &t);
        for _ in 0..4 {
            key(&mut app, 's');
        }
        let before = screen(&app, 100, 30);
        key(&mut app, 'n');
        key(&mut app, 'i');
        key(&mut app, 'b');
        key(&mut app, 'g');
        for _ in 0..4 {
            key(&mut app, 's');
        }
        assert_eq!(screen(&app, 100, 30), before);
    }

    #[test]
    fn a_race_shows_both_accesses_and_the_cell() {
        let s = subject("r.funmem", RACY);
        let t = record(&s, &[Value::int(2)]);
        let mut app = App::new(&s, &t);
        key(&mut app, 'e');
        let all = screen(&app, 140, 40).join("\n");
        assert!(all.contains("error: E-MEM-KERNEL: data race"), "{all}");
        assert!(
            all.contains("iteration 0 wrote, then iteration 1 wrote"),
            "{all}"
        );
        assert!(all.contains("b0[0] ! 1 "), "{all}");
        assert!(all.contains("m (8 bytes)"), "{all}");
    }

    #[test]
    fn breakpoints_are_set_by_line_and_reached() {
        let s = subject("k.funmem", KERNEL);
        let t = record(&s, &[Value::int(3)]);
        let mut app = App::new(&s, &t);
        key(&mut app, 'c');
        assert_eq!(app.note, "no breakpoints: set one with B or :LINE");
        key(&mut app, ':');
        key(&mut app, '4');
        app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert!(app.sides[0].cursor.breakpoints.contains(&4));
        let all = screen(&app, 100, 30).join("\n");
        assert!(all.contains("●4 "), "{all}");
        key(&mut app, 'c');
        let first = app.positions()[0];
        assert_eq!(s.source.line_col(t.steps[first].span.start).0, 4);
        key(&mut app, 'c');
        assert!(app.positions()[0] > first);
        assert_eq!(
            s.source.line_col(t.steps[app.positions()[0]].span.start).0,
            4
        );
        // `:` with a line past the end says so.
        key(&mut app, ':');
        key(&mut app, '9');
        key(&mut app, '9');
        app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(app.note, "no line 99: the program has 6 lines");
    }

    #[test]
    fn value_semantics_has_no_heap_and_help_lists_the_keys() {
        let s = subject(
            "v.fun",
            "def main (n: int) =\n  let (xs: [n]int) = iota n\n  in (xs)\n",
        );
        let t = record(&s, &[Value::int(2)]);
        let mut app = App::new(&s, &t);
        key(&mut app, 'e');
        let all = screen(&app, 100, 30).join("\n");
        assert!(!all.contains(" heap"), "{all}");
        assert!(all.contains("xs = [0i64, 1i64]"), "{all}");
        key(&mut app, '?');
        let all = screen(&app, 100, 30).join("\n");
        assert!(all.contains("run to the next kernel iteration"), "{all}");
        key(&mut app, 'x');
        assert!(!screen(&app, 100, 30)
            .join("\n")
            .contains("run to the next kernel"));
        key(&mut app, 'q');
        assert!(app.quit);
    }

    #[test]
    fn a_small_terminal_gets_a_message() {
        let s = subject("k.funmem", KERNEL);
        let t = record(&s, &[Value::int(3)]);
        let app = App::new(&s, &t);
        let all = screen(&app, 30, 10).join("");
        assert!(all.contains("needs at least"), "{all}");
        // Every size draws without panicking.
        for (w, h) in [(60, 16), (61, 17), (200, 16), (60, 80), (1, 1)] {
            screen(&app, w, h);
        }
    }

    #[test]
    fn side_by_side_moves_both_sides_through_pairs() {
        let a = subject("k.funmem", KERNEL);
        let ta = record(&a, &[Value::int(2)]);
        let b = subject("r.funmem", RACY);
        let tb = record(&b, &[Value::int(2)]);
        let pairs: Vec<(usize, usize)> = (0..ta.steps.len().min(tb.steps.len()))
            .map(|k| (k, k))
            .collect();
        let mut app = App::side_by_side((&a, &ta), (&b, &tb), pairs);
        key(&mut app, 's');
        assert_eq!(app.positions(), vec![1, 1]);
        key(&mut app, 'i');
        assert_eq!(app.positions(), vec![3, 3]);
        let all = screen(&app, 160, 40).join("\n");
        assert!(
            all.contains("left: k.funmem") && all.contains("right: r.funmem"),
            "{all}"
        );
        key(&mut app, 'b');
        assert_eq!(app.positions(), vec![2, 2]);
        // Tab: breakpoints go on the right side; c reaches its line 3.
        app.key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
        key(&mut app, ':');
        key(&mut app, '3');
        app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        assert!(app.sides[1].cursor.breakpoints.contains(&3));
        assert!(app.sides[0].cursor.breakpoints.is_empty());
        key(&mut app, 'g');
        key(&mut app, 'c');
        let at = app.positions();
        assert_eq!(at, vec![2, 2]);
        assert_eq!(b.source.line_col(tb.steps[at[1]].span.start).0, 3);
        assert!(matches!(tb.steps[at[1]].kind, StepKind::Rule));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// Any program, any keys, any terminal size: drawn without a panic,
        /// and the position stays in the trace.
        #[test]
        fn any_keys_on_any_program_draw(seed in proptest::prelude::any::<u64>(),
                                        mem in proptest::prelude::any::<bool>(),
                                        keys in proptest::collection::vec(0usize..24, 0..40),
                                        w in 1u16..200, h in 1u16..70) {
            use rand::SeedableRng;
            let mut rng = funmem_oracle::Rng::seed_from_u64(seed);
            let cfg = funmem_oracle::GenConfig {
                max_stms: 6,
                max_depth: 2,
                max_size: 3,
                ..funmem_oracle::GenConfig::default()
            };
            let case = if mem {
                funmem_oracle::gen_mem::gen_funmem(&mut rng, &cfg)
            } else {
                funmem_oracle::gen::gen_fun(&mut rng, &cfg)
            };
            let p = funmem_lang::parse::AnyProgram::Fun(case.program);
            let s = subject(if mem { "r.funmem" } else { "r.fun" }, &p.print());
            let t = record(&s, &case.inputs);
            let mut app = App::new(&s, &t);
            let codes = ['s', 'n', 'o', 'b', 'p', 'i', 'a', 'w', 'c', 'B', 'e', 'g', '?', ':', '3',
                         '9', 'x', '0'];
            for k in keys {
                match codes.get(k) {
                    Some(c) => key(&mut app, *c),
                    None => app.key(KeyEvent::new(
                        [KeyCode::Enter, KeyCode::Left, KeyCode::Right, KeyCode::Backspace,
                         KeyCode::PageUp, KeyCode::PageDown][k - codes.len()],
                        KeyModifiers::NONE,
                    )),
                }
                proptest::prop_assert!(app.positions()[0] < t.steps.len());
            }
            screen(&app, w, h);
        }

        /// Side by side, every move lands on a pair of corresponding steps.
        #[test]
        fn side_by_side_moves_stay_on_pairs(seed in proptest::prelude::any::<u64>(),
                                            keys in proptest::collection::vec(0usize..12, 0..30)) {
            use rand::SeedableRng;
            let mut rng = funmem_oracle::Rng::seed_from_u64(seed);
            let cfg = funmem_oracle::GenConfig {
                max_stms: 6,
                max_depth: 2,
                max_size: 3,
                ..funmem_oracle::GenConfig::default()
            };
            let case = funmem_oracle::gen_mem::gen_funmem(&mut rng, &cfg);
            let p = funmem_lang::parse::AnyProgram::Fun(case.program);
            let a = subject("a.funmem", &p.print());
            let ta = record(&a, &case.inputs);
            // The same program's value semantics on the right.
            let src = Source::new("b.funmem", p.print());
            let b = prepare(&src, &p, Some(crate::session::View::Value), None).expect("prepared");
            let tb = record(&b, &case.inputs);
            let pairs = crate::align::align(&ta, &tb);
            let mut app = App::side_by_side((&a, &ta), (&b, &tb), pairs.clone());
            let codes = ['s', 'n', 'o', 'b', 'p', 'i', 'a', 'w', 'c', 'B', 'e', 'g'];
            for k in keys {
                key(&mut app, codes[k]);
                let at = app.positions();
                proptest::prop_assert!(pairs.contains(&(at[0], at[1])));
            }
            screen(&app, 160, 50);
        }
    }

    #[test]
    fn iteration_paths_name_the_index() {
        let s = subject(
            "n.fun",
            "def main (n: int) =
  let (xss: [n][n]int) = kernel i < n do
      let (row: [n]int) = kernel j < n do
          let (v: int) = i + j
          in (v)
      in (row)
  in (xss)
",
        );
        let t = record(&s, &[Value::int(2)]);
        let deep = t
            .steps
            .iter()
            .find(|st| st.state.iterations.len() == 2)
            .expect("a nested iteration");
        assert_eq!(
            iteration_path(&s.source, &deep.state),
            "kernel 2:3 i=0 › kernel 3:7 j=0"
        );
    }
}

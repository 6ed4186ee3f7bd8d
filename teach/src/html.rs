//! A recorded run as one self-contained HTML page (`funmem trace --html`):
//! the source with the current statement highlighted, the rule by its
//! paper name, the environment, the heap drawn as cells coloured by the
//! arrays whose LMADs cover them, and controls to replay the steps (a
//! slider, buttons, keys, `#step=K` in the address).
//!
//! The page needs nothing but itself: its style and script are inline and
//! the steps travel as a JSON blob in a `<script type="application/json">`
//! element, so it works from `file://` with no network.
//!
//! A state per step would make long runs' pages huge, so the blob keeps
//! whole states only at *checkpoints* and, for every other step, what
//! changed since the step before (names bound or gone, blocks new or
//! retyped, cells changed). A checkpoint is placed when the changes since
//! the last one outweigh a few whole states, so both the page's size and the
//! work to show any step stay proportional to what the run did. Where an
//! array lives is interned once per distinct (name, block, LMAD) as a
//! *place*: its LMAD, from which the page enumerates the cells it covers
//! and writes how the LMAD computes each address as [`Place::explain`]
//! does (`xs[1][2] → 0 + 1·4 + 2·1 = 6`). Changed cells travel as runs,
//! a block just allocated as one value.
//!
//! Two traces can share a page (a program before and after passes): the
//! slider then moves over pairs of corresponding steps ([`crate::align`]).

use crate::record::{Block, Effect, Place, State, Step, StepKind, Trace};
use crate::text::{describe, race_text};
use funmem_lang::prim::{Const, Prim};
use funmem_lang::Source;
use serde_json::{json, Value as Json};
use std::collections::HashMap;

/// Most cells of a block the page draws (the rest are counted).
pub const CELLS_PER_BLOCK: usize = 512;
/// A checkpoint is placed when the changes since the last one outweigh
/// this many whole states: fewer checkpoints make a smaller page, more
/// make a step quicker to show.
pub const CHECKPOINT_RATIO: usize = 4;
/// Most elements of an array whose addresses the page explains.
pub const ELEMENTS_PER_PLACE: usize = 1024;
/// Most characters of a value the environment shows.
pub const VALUE_CHARS: usize = 240;
/// Most characters of a step's description.
pub const DESCRIPTION_CHARS: usize = 400;
/// Most characters of a result or an error message.
pub const RESULT_CHARS: usize = 4000;
/// Most effects listed for one step.
pub const EFFECTS_PER_STEP: usize = 64;
/// Most cells outlined as read or written in one step.
pub const ACCESSES_PER_STEP: usize = 2048;

/// One trace to show, with what it is about.
pub struct Pane<'a> {
    /// A heading: `FUNMEM`, `before: FUNMEM after simplify`.
    pub label: String,
    /// The text the steps' positions point into.
    pub source: &'a Source,
    /// Whether the run has a heap worth drawing.
    pub heap: bool,
    /// The steps.
    pub trace: &'a Trace,
}

/// The page: `title` and the panes (one, or two side by side stepping
/// through `pairs` of step indices).
pub fn page(title: &str, panes: &[Pane], pairs: Option<&[(usize, usize)]>) -> String {
    let data = data(title, panes, pairs);
    // Inside <script>, `</script>` or `<!--` would end or confuse the
    // element: `<` only occurs inside JSON strings, where \u003c reads back
    // the same.
    let blob = data.to_string().replace('<', "\\u003c");
    let mut out = String::with_capacity(blob.len() + TEMPLATE.len() + 256);
    let (head, rest) = TEMPLATE.split_once("{{TITLE}}").unwrap_or((TEMPLATE, ""));
    out.push_str(head);
    out.push_str(&escape(title));
    let (mid, tail) = rest.split_once("{{DATA}}").unwrap_or((rest, ""));
    out.push_str(mid);
    out.push_str(&blob);
    out.push_str(tail);
    out
}

/// HTML text for `s`.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

const TEMPLATE: &str = include_str!("trace_page.html");

/// The JSON the page replays (see the module's documentation).
pub fn data(title: &str, panes: &[Pane], pairs: Option<&[(usize, usize)]>) -> Json {
    let panes: Vec<Json> = panes.iter().map(pane_json).collect();
    json!({
        "title": title,
        "cellsPerBlock": CELLS_PER_BLOCK,
        "elementsPerPlace": ELEMENTS_PER_PLACE,
        "panes": panes,
        "pairs": pairs.map(|p| p.iter().map(|&(a, b)| json!([a, b])).collect::<Vec<_>>()),
    })
}

/// A cell's value without its type suffix (the block says the type).
pub fn cell_text(c: Const) -> String {
    let s = c.to_string();
    for suffix in ["i32", "i64", "f32", "f64"] {
        if let Some(t) = s.strip_suffix(suffix) {
            return t.to_string();
        }
    }
    s
}

fn cut_text(s: &str, limit: usize) -> String {
    if s.chars().count() <= limit {
        return s.to_string();
    }
    let mut t: String = s.chars().take(limit.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// The cells of a block the page draws.
fn shown(b: &Block) -> usize {
    b.len(b.elem).min(CELLS_PER_BLOCK)
}

/// Per block, the cells an array of another element type of the same size
/// covers (an f32 and an i32 array sharing a block): they are shown as
/// that array's type, the newest binding winning. Empty when no array's
/// type differs from its block's cells.
type Retyped = Vec<HashMap<usize, Prim>>;

fn retyped(s: &State) -> Retyped {
    let differs = |p: &Place| {
        s.blocks
            .get(p.block)
            .is_some_and(|b| b.elem != p.elem && b.elem.size() == p.elem.size())
    };
    if !s
        .env
        .values()
        .any(|b| b.place.as_ref().is_some_and(differs))
    {
        return Vec::new();
    }
    let mut out: Retyped = vec![HashMap::new(); s.blocks.len()];
    for (_, b) in s.env_in_order() {
        let Some(p) = b.place.as_ref().filter(|p| differs(p)) else {
            continue;
        };
        let n = shown(&s.blocks[p.block]) as i64;
        for a in p.addresses(ELEMENTS_PER_PLACE) {
            if (0..n).contains(&a) {
                out[p.block].insert(a as usize, p.elem);
            }
        }
    }
    out
}

/// The cells of block `bi` as the page shows them.
fn cells(b: &Block, bi: usize, rt: &Retyped) -> Vec<String> {
    let types = rt.get(bi);
    (0..shown(b))
        .map(|k| {
            let t = types.and_then(|m| m.get(&k)).copied().unwrap_or(b.elem);
            b.element(k as i64, t).map_or_else(String::new, cell_text)
        })
        .collect()
}

/// `[elem, length, cells]`, the cells one string when all are equal (a
/// block just allocated).
fn block_json(b: &Block, bi: usize, rt: &Retyped) -> Json {
    let cs = cells(b, bi, rt);
    let cells = match cs.first() {
        Some(c) if cs.len() > 1 && cs.iter().all(|x| x == c) => json!(c),
        _ => json!(cs),
    };
    json!([b.elem.to_string(), b.len(b.elem), cells])
}

/// The cell of a block of `cell_elem`s that element `addr` of `elem` starts in.
fn cell_of(addr: i64, elem: Prim, cell_elem: Prim) -> i64 {
    let bytes = addr.saturating_mul(elem.size() as i64);
    bytes.div_euclid(cell_elem.size().max(1) as i64)
}

/// Interns places: each distinct (name, place, cell type) once.
#[derive(Default)]
struct Places {
    ids: HashMap<(String, usize, String, Prim, Prim), usize>,
    list: Vec<Json>,
    /// Colour of each array name, by first appearance.
    colours: HashMap<String, usize>,
}

impl Places {
    fn id(&mut self, name: &str, p: &Place, state: &State) -> usize {
        let cell_elem = state.blocks.get(p.block).map_or(p.elem, |b| b.elem);
        let key = (name.to_string(), p.block, p.lmad_text(), p.elem, cell_elem);
        if let Some(&k) = self.ids.get(&key) {
            return k;
        }
        let n = self.colours.len();
        let colour = *self.colours.entry(name.to_string()).or_insert(n);
        let dims: Vec<Json> = p
            .lmad
            .dims
            .iter()
            .map(|d| json!([d.elems, d.stride]))
            .collect();
        // The page enumerates the elements (at most ELEMENTS_PER_PLACE) and
        // writes each address computation as `Place::explain` does: the
        // LMAD travels, not one string per element.
        self.list.push(json!({
            "name": name,
            "b": p.block,
            "lmad": p.lmad_text(),
            "elem": p.elem.to_string(),
            "c": colour,
            "off": p.lmad.offset,
            "dims": dims,
            "num": p.elem.size(),
            "den": cell_elem.size().max(1),
        }));
        let k = self.list.len() - 1;
        self.ids.insert(key, k);
        k
    }
}

fn env_entry(places: &mut Places, state: &State, name: &str, b: &crate::record::Binding) -> Json {
    let place = b
        .place
        .as_ref()
        .map_or(json!(null), |p| json!(places.id(name, p, state)));
    json!([name, b.seq, cut_text(&b.value, VALUE_CHARS), place])
}

/// A whole state, as the page's checkpoints hold it: `env` (entries
/// `[name, seq, value, place]`) and `blocks` (`[elem, length, cells]`,
/// the cells one string when all are equal).
fn state_json(places: &mut Places, s: &State) -> Json {
    let env: Vec<Json> = s
        .env
        .iter()
        .map(|(n, b)| env_entry(places, s, n.as_str(), b))
        .collect();
    let rt = retyped(s);
    let blocks: Vec<Json> = s
        .blocks
        .iter()
        .enumerate()
        .map(|(bi, b)| block_json(b, bi, &rt))
        .collect();
    json!({"env": env, "blocks": blocks})
}

/// What changed from `a` to `b`: `set` (env entries), `del` (names),
/// `blocks` (`[index, elem, length, cells]`, new or retyped blocks) and
/// `cells` (`[block, first cell, texts]`, runs of changed cells).
fn diff_json(places: &mut Places, a: &State, b: &State) -> (Json, usize) {
    let mut set = Vec::new();
    let mut del = Vec::new();
    for d in a.env.diff(&b.env) {
        match d {
            imbl::ordmap::DiffItem::Add(n, v) => set.push(env_entry(places, b, n.as_str(), v)),
            imbl::ordmap::DiffItem::Update { new: (n, v), .. } => {
                set.push(env_entry(places, b, n.as_str(), v))
            }
            imbl::ordmap::DiffItem::Remove(n, _) => del.push(json!(n.as_str())),
        }
    }
    let mut blocks = Vec::new();
    let mut cells = Vec::new();
    let mut weight = set.len() + del.len();
    let (ra, rb) = (retyped(a), retyped(b));
    for (k, nb) in b.blocks.iter().enumerate() {
        match a.blocks.get(k) {
            Some(ob) if ob.elem == nb.elem && ob.bytes.len() == nb.bytes.len() => {
                if ob.bytes.ptr_eq(&nb.bytes) && ra.get(k) == rb.get(k) {
                    continue;
                }
                let (old, new) = (self::cells(ob, k, &ra), self::cells(nb, k, &rb));
                // Runs of consecutive changed cells: [block, first, texts].
                let mut run: Option<(usize, Vec<String>)> = None;
                for (c, (x, y)) in old.iter().zip(new).enumerate() {
                    if *x == y {
                        if let Some((first, texts)) = run.take() {
                            cells.push(json!([k, first, texts]));
                        }
                        continue;
                    }
                    weight += 1;
                    match &mut run {
                        Some((_, texts)) => texts.push(y),
                        None => run = Some((c, vec![y])),
                    }
                }
                if let Some((first, texts)) = run {
                    cells.push(json!([k, first, texts]));
                }
            }
            _ => {
                let mut j = block_json(nb, k, &rb);
                if let Json::Array(v) = &mut j {
                    v.insert(0, json!(k));
                }
                weight += shown(nb) + 1;
                blocks.push(j);
            }
        }
    }
    let mut o = json!({});
    if !set.is_empty() {
        o["set"] = json!(set);
    }
    if !del.is_empty() {
        o["del"] = json!(del);
    }
    if !blocks.is_empty() {
        o["blocks"] = json!(blocks);
    }
    if !cells.is_empty() {
        o["cells"] = json!(cells);
    }
    // Blocks are never freed; should a state ever have fewer, say so.
    if b.blocks.len() < a.blocks.len() {
        o["nblocks"] = json!(b.blocks.len());
    }
    (o, weight)
}

fn kind_name(k: &StepKind) -> &'static str {
    match k {
        StepKind::Start => "start",
        StepKind::Rule => "rule",
        StepKind::Iteration { parallel: true, .. } => "iteration",
        StepKind::Iteration { .. } => "loop iteration",
        StepKind::Result { .. } => "result",
        StepKind::Done => "done",
        StepKind::Finish { .. } => "finish",
        StepKind::Stuck { .. } => "stuck",
    }
}

/// The cells a step read and wrote, as runs of consecutive cells:
/// `[block, first cell, count, "r"|"w"]`.
fn accesses(step: &Step) -> Vec<Json> {
    let mut runs: Vec<(usize, i64, i64, &str)> = Vec::new();
    let mut n = 0;
    for e in &step.effects {
        let (block, offset, elem, w) = match e {
            Effect::Read {
                block,
                offset,
                elem,
            } => (*block, *offset, *elem, "r"),
            Effect::Write {
                block,
                offset,
                elem,
                ..
            } => (*block, *offset, *elem, "w"),
            _ => continue,
        };
        if n >= ACCESSES_PER_STEP {
            break;
        }
        n += 1;
        let cell_elem = step.state.blocks.get(block).map_or(elem, |b| b.elem);
        let c = cell_of(offset, elem, cell_elem);
        match runs.last_mut() {
            Some((b, first, count, k)) if *b == block && *k == w && *first + *count == c => {
                *count += 1
            }
            _ => runs.push((block, c, 1, w)),
        }
    }
    runs.iter()
        .map(|(b, c, n, w)| json!([b, c, n, w]))
        .collect()
}

fn step_json(src: &Source, step: &Step) -> Json {
    let whole = matches!(step.kind, StepKind::Start | StepKind::Finish { .. });
    let lines = if whole {
        json!(null)
    } else {
        let (l0, _) = src.line_col(step.span.start);
        let end = step.span.end.max(step.span.start + 1).min(src.text.len());
        let (l1, _) = src.line_col(end.saturating_sub(1).max(step.span.start));
        json!([l0, l1.max(l0)])
    };
    let mut fx: Vec<String> = step
        .effects
        .iter()
        .take(EFFECTS_PER_STEP)
        .map(|e| e.to_string())
        .collect();
    if step.effects.len() > EFFECTS_PER_STEP {
        fx.push(format!(
            "… ({} more)",
            step.effects.len() - EFFECTS_PER_STEP
        ));
    }
    let its: Vec<String> = step
        .state
        .iterations
        .iter()
        .map(|(sp, i)| {
            let (l, c) = src.line_col(sp.start);
            format!("{i} (of {l}:{c})")
        })
        .collect();
    let mut o = json!({
        "k": kind_name(&step.kind),
        "r": step.rule,
        "d": step.depth,
        "t": cut_text(&describe(src, step, 160), DESCRIPTION_CHARS),
        "l": lines,
    });
    if let Some((l, c)) = (!whole).then(|| src.line_col(step.span.start)) {
        o["at"] = json!(format!("{l}:{c}"));
    }
    if !fx.is_empty() {
        o["fx"] = json!(fx);
    }
    let acc = accesses(step);
    if !acc.is_empty() {
        o["acc"] = json!(acc);
    }
    if step
        .effects
        .iter()
        .any(|e| matches!(e, Effect::Alloc { .. }))
    {
        o["alloc"] = json!(true);
    }
    if !its.is_empty() {
        o["its"] = json!(its);
    }
    match &step.kind {
        StepKind::Finish { results } => {
            let rs: Vec<String> = results.iter().map(|r| cut_text(r, RESULT_CHARS)).collect();
            o["results"] = json!(rs);
        }
        StepKind::Stuck { message, race } => {
            o["error"] = json!(cut_text(message, RESULT_CHARS));
            if let Some(r) = race {
                let elem = step
                    .state
                    .blocks
                    .get(r.block)
                    .map_or(Prim::Bool, |b| b.elem);
                let acc = |a: &funmem_semantics::error::Access| {
                    let path: Vec<String> = a.path.iter().map(|i| i.to_string()).collect();
                    format!(
                        "iteration {} {} it",
                        path.join("/"),
                        if a.write { "wrote" } else { "read" }
                    )
                };
                o["race"] = json!({
                    "b": r.block,
                    "cell": cell_of(r.offset, Prim::Bool, elem),
                    "byte": r.offset,
                    "first": acc(&r.first),
                    "second": acc(&r.second),
                    "text": race_text(step, src),
                });
            }
        }
        _ => {}
    }
    o
}

fn pane_json(p: &Pane) -> Json {
    let trace = p.trace;
    let mut places = Places::default();
    let mut steps = Vec::with_capacity(trace.steps.len());
    let mut checkpoints = serde_json::Map::new();
    let mut since = 0usize;
    for (k, s) in trace.steps.iter().enumerate() {
        let mut o = step_json(p.source, s);
        let weight = s.state.env.len() + s.state.blocks.iter().map(|b| shown(b) + 1).sum::<usize>();
        // Diffs come from the states themselves, so they hold across a
        // cut too (the end's state after steps that were not kept).
        let diff = (k > 0).then(|| diff_json(&mut places, &trace.steps[k - 1].state, &s.state));
        match diff {
            Some((d, w)) if since + w <= CHECKPOINT_RATIO * weight.max(64) => {
                since += w;
                o["diff"] = d;
            }
            _ => {
                since = 0;
                checkpoints.insert(k.to_string(), state_json(&mut places, &s.state));
            }
        }
        steps.push(o);
    }
    let lines: Vec<&str> = p.source.text.lines().collect();
    json!({
        "label": p.label,
        "file": p.source.name,
        "heap": p.heap,
        "lines": lines,
        "steps": steps,
        "checkpoints": checkpoints,
        "places": places.list,
        "cut": trace.cut,
        "budget": trace.budget,
        "total": trace.steps.len() as u64 + trace.cut,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::prepare;
    use funmem_semantics::error::Limits;
    use funmem_semantics::value::Value;

    const KERNEL: &str = "def main (n: int) (m: int) =
  let (xss_mem: mem) = alloc n * m
  let (xss: [n][m]int @ xss_mem -> R(n, m)) = kernel i < n do
    let (row_mem: mem) = alloc m
    let (row: [m]int @ row_mem -> R(m)) = iota m
    let (ys_mem: mem) = alloc m
    let (ys: [m]int @ ys_mem -> R(m)) = kernel j < m do
      let (x: int) = row[j]
      let (y: int) = x + i
      in (y)
    in (ys)
  in (xss)
";

    const RACY: &str = "-- </script><!-- a comment that must not end the page's script
def main (n: int) =
  let (m: mem) = alloc 1
  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do
    in (i)
  in (n)
";

    fn record(name: &str, text: &str, inputs: &[i64], budget: usize) -> (Source, Trace) {
        let src = Source::new(name, text.to_string());
        let p = funmem_lang::front::load(&src).expect("a program");
        let s = prepare(&src, &p, None, None).expect("ready");
        let inputs: Vec<Value> = inputs
            .iter()
            .map(|&k| Value::Scalar(Const::I64(k)))
            .collect();
        let r = s.record(&inputs, Limits::default(), budget);
        (s.source, r.trace)
    }

    type View = (
        Vec<(String, u64, String, Option<String>)>,
        Vec<(String, usize, Vec<String>)>,
    );

    /// What the page shows of a state, from the state itself.
    fn view_of(s: &State) -> View {
        let mut env: Vec<_> = s
            .env
            .iter()
            .map(|(n, b)| {
                (
                    n.as_str().to_string(),
                    b.seq,
                    cut_text(&b.value, VALUE_CHARS),
                    b.place.as_ref().map(|p| p.lmad_text()),
                )
            })
            .collect();
        env.sort();
        let rt = retyped(s);
        let blocks = s
            .blocks
            .iter()
            .enumerate()
            .map(|(bi, b)| (b.elem.to_string(), b.len(b.elem), cells(b, bi, &rt)))
            .collect();
        (env, blocks)
    }

    /// What the page shows of step `k`, replayed from the JSON as its
    /// script does: the checkpoint before `k`, then each diff.
    fn replay(pane: &Json, k: usize) -> View {
        let places = pane["places"].as_array().expect("places");
        let cps = pane["checkpoints"].as_object().expect("checkpoints");
        let c = (0..=k)
            .rev()
            .find(|c| cps.contains_key(&c.to_string()))
            .expect("a checkpoint");
        let entry = |e: &Json| {
            let place = e[3].as_u64().map(|p| {
                places[p as usize]["lmad"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            });
            (
                e[0].as_str().unwrap_or("").to_string(),
                (
                    e[1].as_u64().unwrap_or(0),
                    e[2].as_str().unwrap_or("").to_string(),
                    place,
                ),
            )
        };
        let block = |b: &[Json]| {
            (
                b[0].as_str().unwrap_or("").to_string(),
                b[1].as_u64().unwrap_or(0) as usize,
                match &b[2] {
                    Json::String(fill) => {
                        let n = (b[1].as_u64().unwrap_or(0) as usize).min(CELLS_PER_BLOCK);
                        vec![fill.clone(); n]
                    }
                    v => v.as_array().map_or(vec![], |v| {
                        v.iter()
                            .map(|x| x.as_str().unwrap_or("").to_string())
                            .collect()
                    }),
                },
            )
        };
        let cp = &cps[&c.to_string()];
        let mut env: std::collections::BTreeMap<String, (u64, String, Option<String>)> = cp["env"]
            .as_array()
            .expect("env")
            .iter()
            .map(entry)
            .collect();
        let mut blocks: Vec<(String, usize, Vec<String>)> = cp["blocks"]
            .as_array()
            .expect("blocks")
            .iter()
            .map(|b| block(b.as_array().expect("a block")))
            .collect();
        for j in c + 1..=k {
            let d = &pane["steps"][j]["diff"];
            for n in d["del"].as_array().into_iter().flatten() {
                env.remove(n.as_str().unwrap_or(""));
            }
            for e in d["set"].as_array().into_iter().flatten() {
                let (n, v) = entry(e);
                env.insert(n, v);
            }
            for b in d["blocks"].as_array().into_iter().flatten() {
                let b = b.as_array().expect("a block");
                let i = b[0].as_u64().unwrap_or(0) as usize;
                if blocks.len() <= i {
                    blocks.resize(i + 1, (String::new(), 0, vec![]));
                }
                blocks[i] = block(&b[1..]);
            }
            for c in d["cells"].as_array().into_iter().flatten() {
                let (b, i) = (
                    c[0].as_u64().unwrap_or(0) as usize,
                    c[1].as_u64().unwrap_or(0) as usize,
                );
                for (j, t) in c[2].as_array().into_iter().flatten().enumerate() {
                    blocks[b].2[i + j] = t.as_str().unwrap_or("").to_string();
                }
            }
        }
        let env = env.into_iter().map(|(n, (s, v, p))| (n, s, v, p)).collect();
        (env, blocks)
    }

    fn pane<'a>(src: &'a Source, t: &'a Trace) -> Pane<'a> {
        Pane {
            label: "test".into(),
            source: src,
            heap: true,
            trace: t,
        }
    }

    #[test]
    fn checkpoints_and_diffs_replay_to_every_step_s_state() {
        for (name, text, inputs) in [
            ("k.funmem", KERNEL, vec![2, 3]),
            ("r.funmem", RACY, vec![3]),
            ("k.fun", "def main (n: int) =\n  let (xs: [n]int) = iota n\n  let (s: int) = reduce (+) 0 xs\n  in (s)\n", vec![5]),
        ] {
            let (src, t) = record(name, text, &inputs, 1000);
            let d = data("t", &[pane(&src, &t)], None);
            let p = &d["panes"][0];
            assert!(p["checkpoints"].as_object().is_some_and(|c| c.contains_key("0")));
            for (k, s) in t.steps.iter().enumerate() {
                assert_eq!(replay(p, k), view_of(&s.state), "{name}: step {k}");
            }
        }
    }

    #[test]
    fn random_programs_replay_to_every_state() {
        use funmem_oracle::campaign::rng_for;
        use funmem_oracle::GenConfig;
        let cfg = GenConfig::default();
        let (mut runs, mut steps) = (0, 0);
        for seed in 0..40u64 {
            let mut rng = rng_for(0x7ace, seed);
            let case = if seed % 2 == 0 {
                funmem_oracle::gen_mem::gen_funmem(&mut rng, &cfg)
            } else {
                funmem_oracle::gen::gen_fun(&mut rng, &cfg)
            };
            let ext = if seed % 2 == 0 { "funmem" } else { "fun" };
            let src = Source::new(
                format!("r.{ext}"),
                funmem_lang::print::program(&case.program),
            );
            let p = funmem_lang::front::load(&src).expect("a generated program reads back");
            let view = (seed % 4 == 1).then_some(crate::session::View::Heap);
            let Ok(s) = prepare(&src, &p, view, None) else {
                continue;
            };
            let limits = Limits {
                fuel: 20_000,
                max_heap: 1 << 20,
            };
            let r = s.record(&case.inputs, limits, 3000);
            let d = data("t", &[pane(&s.source, &r.trace)], None);
            let p = &d["panes"][0];
            for (k, st) in r.trace.steps.iter().enumerate() {
                assert_eq!(replay(p, k), view_of(&st.state), "seed {seed}: step {k}");
            }
            // A cut run counts what it did not keep.
            if r.trace.cut == 0 {
                for budget in [3, 9] {
                    let t = s.record(&case.inputs, limits, budget).trace;
                    let total = t.steps.len() as u64 + t.cut;
                    assert_eq!(
                        total,
                        r.trace.steps.len() as u64,
                        "seed {seed}, budget {budget}"
                    );
                }
            }
            runs += 1;
            steps += r.trace.steps.len();
        }
        assert!(runs >= 30 && steps >= 1000, "{runs} runs, {steps} steps");
    }

    #[test]
    fn long_runs_keep_few_checkpoints() {
        let (src, t) = record("k.funmem", KERNEL, &[12, 12], 5000);
        let d = data("t", &[pane(&src, &t)], None);
        let p = &d["panes"][0];
        let cps = p["checkpoints"].as_object().map_or(0, |c| c.len());
        assert!(t.steps.len() > 400, "{}", t.steps.len());
        assert!(
            cps * 20 < t.steps.len(),
            "{cps} checkpoints for {} steps",
            t.steps.len()
        );
        for k in [0, 17, 200, t.steps.len() - 1] {
            assert_eq!(replay(p, k), view_of(&t.steps[k].state), "step {k}");
        }
    }

    #[test]
    fn the_page_is_self_contained_and_its_script_cannot_be_ended_by_the_source() {
        let (src, t) = record("r.funmem", RACY, &[2], 1000);
        let html = page("a <title> & more", &[pane(&src, &t)], None);
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(html.contains("<title>a &lt;title&gt; &amp; more</title>"));
        // One </script> per script element: the data's is escaped.
        assert_eq!(html.matches("</script>").count(), 2);
        assert!(!html.contains("<!-- a comment"));
        assert!(!html.contains("{{DATA}}") && !html.contains("{{TITLE}}"));
    }

    #[test]
    fn a_race_names_both_accesses_and_its_cell() {
        let (src, t) = record("r.funmem", RACY, &[2], 1000);
        let d = data("t", &[pane(&src, &t)], None);
        let steps = d["panes"][0]["steps"].as_array().expect("steps");
        let last = steps.last().expect("a step");
        assert_eq!(last["k"], "stuck");
        let r = &last["race"];
        assert_eq!((r["b"].as_u64(), r["cell"].as_i64()), (Some(0), Some(0)));
        assert_eq!(r["first"], "iteration 0 wrote it");
        assert_eq!(r["second"], "iteration 1 wrote it");
    }

    #[test]
    fn places_explain_each_element_s_address() {
        let (src, t) = record("k.funmem", KERNEL, &[2, 3], 1000);
        let d = data("t", &[pane(&src, &t)], None);
        let places = d["panes"][0]["places"].as_array().expect("places");
        let xss = places
            .iter()
            .find(|p| p["name"] == "xss")
            .expect("xss placed");
        assert_eq!(xss["lmad"], "0 + {(2 : 3) (3 : 1)}");
        // What the page needs to enumerate xss[1][2] → 0 + 1·3 + 2·1 = 5.
        assert_eq!(xss["off"], 0);
        assert_eq!(xss["dims"], json!([[2, 3], [3, 1]]));
        assert_eq!(
            (xss["num"].as_u64(), xss["den"].as_u64()),
            (Some(8), Some(8))
        );
    }

    #[test]
    fn a_cut_run_says_how_many_steps_it_had() {
        let (src, t) = record("k.funmem", KERNEL, &[4, 4], 10);
        let d = data("t", &[pane(&src, &t)], None);
        let p = &d["panes"][0];
        assert_eq!(p["steps"].as_array().map(Vec::len), Some(10));
        assert!(p["cut"].as_u64().unwrap_or(0) > 0);
        assert_eq!(
            p["total"].as_u64(),
            Some(10 + p["cut"].as_u64().unwrap_or(0))
        );
        assert!(p["steps"][9]["results"].is_array());
        // The end's state, after steps that were not kept, replays too.
        for (k, s) in t.steps.iter().enumerate() {
            assert_eq!(replay(p, k), view_of(&s.state), "step {k}");
        }
    }

    #[test]
    fn cells_of_an_array_of_another_type_show_as_its_type() {
        let text = "def main (n: int) (xm: mem) (xs: [n]f32 @ xm -> R(n)) =
  let (m: mem) = alloc n i64
  let (fs: [n]f32 @ m -> R(n)) = copy xs
  let (ks: [n]i32 @ m -> n + {(n : 1)}) = kernel i < n do
    let (x: f32) = fs[i]
    let (k: i32) = i32(x)
    in (k)
  in (fs, ks)
";
        let src = Source::new("m.funmem", text.to_string());
        let p = funmem_lang::front::load(&src).expect("a program");
        let s = prepare(&src, &p, None, None).expect("ready");
        let xs = funmem_semantics::textual::parse_values("2 [1.5f32, -3.5f32]").expect("values");
        let r = s.record(&xs, Limits::default(), 1000);
        let t = &r.trace;
        let d = data("t", &[pane(&s.source, t)], None);
        let p = &d["panes"][0];
        let last = t.steps.len() - 1;
        let (_, blocks) = replay(p, last);
        assert_eq!(blocks[1].2, ["1.5", "-3.5", "1", "-3"], "{blocks:?}");
        for (k, st) in t.steps.iter().enumerate() {
            assert_eq!(replay(p, k), view_of(&st.state), "step {k}");
        }
    }

    #[test]
    fn cells_drop_their_type_suffix() {
        assert_eq!(cell_text(Const::I64(-3)), "-3");
        assert_eq!(cell_text(Const::Bool(true)), "true");
        assert_eq!(cell_text(Const::I32(7)), "7");
    }
}

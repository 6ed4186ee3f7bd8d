//! `funmem trace --html`: the page it writes, checked in a real browser.
//! Headless Chromium loads the page with a small driver script appended
//! that clicks the page's own buttons, moves its slider, presses its keys
//! and changes the address's `#step=`, logging after each action what the
//! page shows; the test reads that log from the DOM Chromium dumps. The
//! browser tests are skipped, with a message, where Chromium is missing
//! (scripts/install-deps installs it).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{assert_exit, funmem as funmem_stdin};

use common::temp_dir;

fn write_temp(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("temp file");
    p.to_string_lossy().to_string()
}

/// The page for `file` on `input` (exit code `code`), as text.
fn page(dir: &Path, file: &str, input: &str, extra: &[&str], code: i32) -> String {
    let out = dir.join("page.html");
    let out = out.to_string_lossy();
    let mut args = vec!["trace", file, "--html", &out];
    args.extend_from_slice(extra);
    let o = funmem_stdin(&args, input);
    assert_exit(&o, code);
    let msg = String::from_utf8_lossy(&o.stdout);
    assert!(msg.starts_with(&format!("wrote {out} (")), "{msg}");
    std::fs::read_to_string(&*out).expect("the page was written")
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

const SKIP: &str = "skipped: chromium not installed (scripts/install-deps installs it)";

/// Loads `html` (with `driver` appended) in headless Chromium at `#hash`
/// and gives the text of the page's `<pre id="test-log">` after the
/// scripts ran. Kills the browser after a generous 120 s.
fn run_in_browser(browser: &str, dir: &Path, html: &str, driver: &str, hash: &str) -> String {
    let (head, tail) = html.rsplit_once("</body>").expect("a body");
    let page = format!(
        "{head}<pre id=\"test-log\"></pre>\n<script>\n{DRIVER_LIB}\n{driver}\n</script>\n</body>{tail}"
    );
    let file = dir.join("driven.html");
    std::fs::write(&file, page).expect("page written");
    let url = format!("file://{}{hash}", file.display());
    let profile = dir.join("profile");
    // The dump goes to a file: a pipe could fill before the browser exits.
    let dump = dir.join("dump.html");
    let out = std::fs::File::create(&dump).expect("dump file");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            "--virtual-time-budget=10000",
            "--dump-dom",
            &url,
        ])
        .stdout(Stdio::from(out))
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("waiting for chromium").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dom = std::fs::read_to_string(&dump).expect("the dumped page");
    let log = dom
        .split_once("<pre id=\"test-log\">")
        .and_then(|(_, r)| r.split_once("</pre>"))
        .map(|(l, _)| l)
        .unwrap_or_else(|| panic!("no test log in the dumped page:\n{dom}"));
    log.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// What the driver uses: `snap(tag)` logs a line `tag|stepno|rule|kind|
/// highlighted line|digest of pane 0`, `key`, `click`, `slide`, `cell`.
const DRIVER_LIB: &str = r##"
var LOG = [];
function $(id) { return document.getElementById(id); }
function digest(s) { var h = 5381; for (var i = 0; i < s.length; i++) h = ((h * 33) ^ s.charCodeAt(i)) >>> 0; return h; }
function snap(tag) {
  var hl = document.querySelector("#src0 .line.hl1");
  LOG.push([tag, $("stepno").textContent, $("rule0").textContent, $("kind0").textContent,
            hl ? hl.id : "-", digest($("pane0").innerHTML)].join("|"));
}
function cell(id) {
  var c = $(id);
  return c ? id + "=" + c.lastChild.textContent + " [" + c.className + "] " + window.funmemTrace.tip(id).split("\n").join(" ; ") : id + " missing";
}
function note(s) { LOG.push(s); }
function key(k) { document.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true })); }
function click(id) { $(id).click(); }
function slide(v) { var s = $("slider"); s.value = v; s.dispatchEvent(new Event("input", { bubbles: true })); }
function finish() { $("test-log").textContent = LOG.join("\n"); }
"##;

/// Fields of a `snap` line.
fn snap<'a>(log: &'a str, tag: &str) -> Vec<&'a str> {
    log.lines()
        .find(|l| l.starts_with(&format!("{tag}|")))
        .unwrap_or_else(|| panic!("no line {tag} in the log:\n{log}"))
        .split('|')
        .collect()
}

fn line<'a>(log: &'a str, start: &str) -> &'a str {
    log.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line {start} in the log:\n{log}"))
}

const KERNEL: &str = "papers/ifl2022/sec5_kernel_alloc.funmem";

#[test]
fn the_page_steps_forward_and_back_by_its_buttons_keys_slider_and_address() {
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("kernel");
    let html = page(&dir, KERNEL, "2 3", &[], 0);
    let driver = r##"
snap("load");
click("b-fwd"); snap("fwd");
click("b-back"); snap("back");
key("ArrowRight"); key("ArrowRight"); snap("right2");
key("i"); snap("iter");
key("a"); snap("alloc");
key("n"); snap("over-in");
click("b-start"); click("b-fwd"); click("b-fwd"); click("b-over"); snap("over");
slide(21); snap("slide21"); note(cell("c0-0-0")); note(cell("c0-2-0"));
key("End"); snap("end"); note("end: " + $("end0").textContent);
key("Home"); snap("home");
key("ArrowLeft"); snap("left-at-start");
location.hash = "#step=9";
setTimeout(function () { snap("hash9"); note(cell("c0-1-0")); finish(); }, 100);
"##;
    let log = run_in_browser(browser, &dir, &html, driver, "");
    let load = snap(&log, "load");
    assert_eq!(
        &load[1..5],
        ["step 0 / 42", "E-MEM-PROG", "start", "-"],
        "{log}"
    );
    let fwd = snap(&log, "fwd");
    assert_eq!(
        &fwd[1..5],
        ["step 1 / 42", "E-MEM-ALLOC", "rule", "s0-L10"],
        "{log}"
    );
    // Back returns to exactly what the page showed.
    let back = snap(&log, "back");
    assert_eq!(back[1..], load[1..], "{log}");
    assert_eq!(
        &snap(&log, "right2")[1..5],
        ["step 2 / 42", "E-MEM-KERNEL", "rule", "s0-L11"]
    );
    assert_eq!(
        &snap(&log, "iter")[1..5],
        ["step 3 / 42", "E-MEM-KERNEL", "iteration", "s0-L11"]
    );
    assert_eq!(
        &snap(&log, "alloc")[1..5],
        ["step 4 / 42", "E-MEM-ALLOC", "rule", "s0-L12"]
    );
    assert_eq!(
        &snap(&log, "over-in")[1..5],
        ["step 5 / 42", "E-MEM-IOTA", "rule", "s0-L13"]
    );
    // Over the whole outer kernel: to its end.
    assert_eq!(
        &snap(&log, "over")[1..5],
        ["step 41 / 42", "E-MEM-KERNEL", "done", "s0-L11"]
    );
    // Step 21: the first iteration's row copied into xss's block.
    assert_eq!(
        &snap(&log, "slide21")[1..5],
        ["step 21 / 42", "E-MEM-KERNEL", "result", "s0-L11"]
    );
    // xss's cell, written by the iteration: xss is in the environment
    // (being written) from the kernel's start, so its cells are coloured.
    let c = line(&log, "c0-0-0=");
    assert!(
        c.starts_with("c0-0-0=0 [cell wr]") && c.contains("xss[0][0] → 0 + 0·3 + 0·1 = 0"),
        "{c}"
    );
    let c = line(&log, "c0-2-0=");
    assert!(
        c.contains("[cell rd]") && c.contains("ys[0] → 0 + 0·1 = 0"),
        "{c}"
    );
    assert_eq!(
        &snap(&log, "end")[1..4],
        ["step 42 / 42", "E-MEM-PROG", "finish"]
    );
    let end = line(&log, "end: ");
    assert!(
        end.contains("results") && end.contains("[[0i64, 1i64, 2i64], [1i64, 2i64, 3i64]]"),
        "{end}"
    );
    assert_eq!(snap(&log, "home")[1..], load[1..]);
    assert_eq!(snap(&log, "left-at-start")[1..], load[1..]);
    assert_eq!(
        &snap(&log, "hash9")[1..5],
        ["step 9 / 42", "E-MEM-INDEX", "rule", "s0-L16"]
    );
    let c = line(&log, "c0-1-0=");
    assert!(
        c.starts_with("c0-1-0=0 [cell rd]") && c.contains("row[0] → 0 + 0·1 = 0"),
        "{c}"
    );
}

#[test]
fn the_address_opens_a_step_and_the_xss_block_is_coloured_after_the_kernel() {
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("hash");
    let html = page(&dir, KERNEL, "2 3", &[], 0);
    let driver = r##"snap("load"); note(cell("c0-0-4"));
$("c0-0-4").dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 100, clientY: 100 }));
note("tip " + $("tip").style.display + ": " + $("tip").textContent.split("\n").join(" ; "));
finish();"##;
    let log = run_in_browser(browser, &dir, &html, driver, "#step=41");
    assert_eq!(
        &snap(&log, "load")[1..5],
        ["step 41 / 42", "E-MEM-KERNEL", "done", "s0-L11"]
    );
    let c = line(&log, "c0-0-4=");
    assert!(
        c.starts_with("c0-0-4=2 [cell]") && c.contains("xss[1][1] → 0 + 1·3 + 1·1 = 4"),
        "{c}"
    );
    // Hovering the cell shows its address computation.
    assert_eq!(
        line(&log, "tip "),
        "tip block: b0[4] = 2 (i64) ; xss[1][1] → 0 + 1·3 + 1·1 = 4"
    );
}

#[test]
fn a_racing_program_s_page_ends_at_the_race_with_both_accesses() {
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("race");
    let racy = write_temp(
        &dir,
        "racy.funmem",
        "def main (n: int) =\n  let (m: mem) = alloc 1\n  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do\n    in (i)\n  in (n)\n",
    );
    let html = page(&dir, &racy, "2", &[], 1);
    let driver = r##"click("b-end"); snap("end"); note("end: " + $("end0").textContent); note(cell("c0-0-0")); finish();"##;
    let log = run_in_browser(browser, &dir, &html, driver, "");
    assert_eq!(
        &snap(&log, "end")[1..5],
        ["step 5 / 5", "E-MEM-KERNEL", "stuck", "s0-L3"]
    );
    let end = line(&log, "end: ");
    assert!(end.contains("data race"), "{end}");
    assert!(end.contains("first: iteration 0 wrote it"), "{end}");
    assert!(end.contains("then: iteration 1 wrote it"), "{end}");
    let c = line(&log, "c0-0-0=");
    assert!(
        c.contains(" race]") && c.contains("the racing location"),
        "{c}"
    );
}

#[test]
fn side_by_side_steps_both_runs_together() {
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("sbs");
    let html = page(
        &dir,
        "papers/ifl2022/sec5_kernel_alloc.fun",
        "2 3",
        &["--passes", "simplify,expand-cpu"],
        0,
    );
    let driver = r##"
snap("load"); note("panes: " + document.querySelectorAll(".pane").length);
key("End"); snap("end"); note("rule1: " + $("rule1").textContent + " " + $("kind1").textContent);
finish();"##;
    let log = run_in_browser(browser, &dir, &html, driver, "");
    assert_eq!(line(&log, "panes: "), "panes: 2");
    assert!(snap(&log, "load")[1].starts_with("step 0 / "), "{log}");
    assert!(snap(&log, "load")[1].contains("⇄  0 / "), "{log}");
    assert_eq!(snap(&log, "end")[3], "finish");
    assert_eq!(line(&log, "rule1: "), "rule1: E-MEM-PROG finish");
}

#[test]
fn the_page_is_self_contained() {
    let dir = temp_dir("self");
    for (file, input) in [
        (KERNEL, "2 3"),
        ("papers/ifl2022/fig02_if_sizes.fun", "1 3 2"),
    ] {
        let html = page(&dir, file, input, &[], 0);
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{file}"
        );
        for external in ["<link", " src=", "@import", "url("] {
            assert!(!html.contains(external), "{file}: {external}");
        }
    }
}

#[test]
fn a_long_run_is_cut_to_the_step_budget_and_the_page_stays_small() {
    let dir = temp_dir("long");
    let html = page(&dir, KERNEL, "300 300", &[], 0);
    assert!(html.len() < 5 << 20, "{} bytes", html.len());
    assert!(
        html.contains("\"cut\":360105"),
        "the page knows how many steps were cut"
    );
    let html = page(&dir, KERNEL, "300 300", &["--max-steps", "50"], 0);
    assert!(html.len() < 200_000, "{} bytes", html.len());
}

#[test]
fn bad_requests_exit_2_with_a_message() {
    let dir = temp_dir("bad");
    let out = dir.join("x.html");
    let out = out.to_string_lossy();
    let o = funmem_stdin(&["trace", KERNEL], "2 3");
    assert_exit(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--html"));
    let o = funmem_stdin(
        &[
            "trace",
            "papers/ifl2022/fig13_if_sizes.imp",
            "--semantics",
            "value",
            "--html",
            &out,
        ],
        "",
    );
    assert_exit(&o, 2);
    let o = funmem_stdin(
        &["trace", KERNEL, "--html", "/nonexistent-dir/x.html"],
        "2 3",
    );
    assert_exit(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write"));
}

/// The JSON blob of a page.
fn blob(html: &str) -> &str {
    html.split_once("id=\"trace-data\">")
        .and_then(|(_, r)| r.split_once("</script>"))
        .map(|(b, _)| b)
        .expect("a data blob")
}

#[test]
fn passes_diff_and_no_before_choose_the_panes() {
    let dir = temp_dir("panes");
    let fun = "papers/ifl2022/sec5_kernel_alloc.fun";
    let two = page(&dir, fun, "2 3", &["--passes", "simplify,expand-gpu"], 0);
    let b = blob(&two);
    assert!(
        b.contains("\"label\":\"before: FUNMEM after simplify\""),
        "{b:.300}"
    );
    assert!(b.contains("\"label\":\"after: FUNMEM after simplify,expand-gpu\""));
    assert!(b.contains("\"pairs\":[[0,0],[1,1],"));
    let one = page(
        &dir,
        fun,
        "2 3",
        &["--passes", "expand-gpu", "--no-before"],
        0,
    );
    let b = blob(&one);
    assert!(b.contains("\"pairs\":null") && !b.contains("before:"));
    let diff = page(
        &dir,
        KERNEL,
        "2 3",
        &[
            "--diff",
            "papers/ifl2022/sec5_expanded_gpu.funmem",
            "--title",
            "two",
        ],
        0,
    );
    assert!(diff.contains("<title>two</title>"));
    let b = blob(&diff);
    assert!(b.contains("sec5_expanded_gpu.funmem: FUNMEM"), "{b:.300}");
    assert!(b.contains("\"pairs\":[[0,0],"));
    // Value semantics: no heap, arrays as values.
    let v = page(&dir, "papers/ifl2022/fig02_if_sizes.fun", "1 3 2", &[], 0);
    let b = blob(&v);
    assert!(b.contains("\"heap\":false") && b.contains("[0i64, 1i64, 2i64]"));
}

#[test]
fn a_cut_run_s_page_says_what_was_cut() {
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("cut");
    let html = page(&dir, KERNEL, "30 30", &["--max-steps", "50"], 0);
    let driver = r##"note("banner: " + ($("banner").hidden ? "hidden" : $("banner").textContent));
key("End"); snap("end"); finish();"##;
    let log = run_in_browser(browser, &dir, &html, driver, "");
    assert_eq!(
        line(&log, "banner: "),
        "banner: showing the first 49 steps of 3815; the rest were not recorded (--max-steps 50), but for the last step, the end of the run"
    );
    assert_eq!(
        &snap(&log, "end")[1..4],
        ["step 49 / 49", "E-MEM-PROG", "finish"]
    );
}

#[test]
fn every_step_renders_and_going_back_shows_what_going_forward_showed() {
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("walk");
    let racy = write_temp(
        &dir,
        "racy.funmem",
        "def main (n: int) =\n  let (m: mem) = alloc 1\n  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do\n    in (i)\n  in (n)\n",
    );
    let driver = r##"
var errors = [];
window.addEventListener("error", function (e) { errors.push(e.message); });
if (!window.funmemTrace) { note("no page script"); } else {
  var T = window.funmemTrace, fwd = [], bad = [];
  for (var k = 0; k < T.count; k++) { T.go(k); fwd.push(digest($("panes").innerHTML)); }
  for (var k = T.count - 1; k >= 0; k--) { T.go(k); if (digest($("panes").innerHTML) !== fwd[k]) bad.push(k); }
  note("walked " + T.count + " differ " + bad.join(",") + " errors " + errors.length);
}
finish();"##;
    for (file, input, extra, code) in [
        (KERNEL, "2 3", &[][..], 0),
        (racy.as_str(), "3", &[][..], 1),
        ("papers/ifl2022/fig02_if_sizes.fun", "1 3 2", &[][..], 0),
        ("papers/ifl2022/fig13_if_sizes.imp", "0 3 2", &[][..], 0),
        (
            "tests/programs/fun/loop_kernel.fun",
            "3 [1, 2, 3] 2",
            &["--semantics", "heap"][..],
            0,
        ),
        (
            "papers/ifl2022/sec5_kernel_alloc.fun",
            "2 3",
            &["--passes", "simplify,expand-cpu"][..],
            0,
        ),
    ] {
        let html = page(&dir, file, input, extra, code);
        let log = run_in_browser(browser, &dir, &html, driver, "");
        let l = line(&log, "walked ");
        assert!(l.ends_with(" differ  errors 0"), "{file}: {l}");
        assert!(!l.starts_with("walked 0 "), "{file}: {l}");
    }
}

#[test]
fn a_big_heap_is_drawn_within_a_budget_and_a_cut_end_says_its_state_is_older() {
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("bigheap");
    // Each loop iteration allocates a new 600-element array.
    let f = write_temp(
        &dir,
        "grow.fun",
        "def main (n: int) (t: int) =\n  let (s: int) = loop (a: int) = (0) for k < t do\n    let (xs: [n]int) = iota n\n    let (y: int) = xs[k]\n    let (b: int) = a + y\n    in (b)\n  in (s)\n",
    );
    let html = page(
        &dir,
        &f,
        "600 100",
        &["--semantics", "heap", "--max-steps", "200"],
        0,
    );
    let driver = r##"key("End"); snap("end");
note("drawn " + document.querySelectorAll("#heap0 .block").length);
note("heap: " + $("heap0").firstChild.textContent.slice(0, 60));
note("end: " + $("end0").textContent);
finish();"##;
    let log = run_in_browser(browser, &dir, &html, driver, "");
    assert_eq!(snap(&log, "end")[3], "finish");
    let drawn: usize = line(&log, "drawn ")[6..].parse().expect("a count");
    assert!((1..=6).contains(&drawn), "{log}");
    assert!(
        line(&log, "heap: ").contains(" blocks not drawn (no name in scope uses them): b0, b1"),
        "{log}"
    );
    let end = line(&log, "end: ");
    assert!(
        end.contains("the environment and heap are as at the last step recorded"),
        "{end}"
    );
}

#[test]
fn the_page_explains_addresses_as_the_recorder_does() {
    use funmem_lang::lmad::{Dim, Lmad};
    use funmem_lang::prim::Prim;
    use funmem_teach::record::Place;
    let Some(browser) = chromium() else {
        eprintln!("{SKIP}");
        return;
    };
    let dir = temp_dir("explain");
    // Step 41: iteration 1 copies its interleaved row of ys (1 + {(3 : 2)}).
    let html = page(
        &dir,
        "papers/ifl2022/sec5_expanded_gpu.funmem",
        "2 3",
        &[],
        0,
    );
    let driver = r##"snap("load"); note(cell("c0-1-3")); note(cell("c0-2-5")); finish();"##;
    let log = run_in_browser(browser, &dir, &html, driver, "#step=41");
    let interleaved = Place {
        block: 1,
        lmad: Lmad {
            offset: 1,
            dims: vec![Dim {
                elems: 3,
                stride: 2,
            }],
        },
        elem: Prim::I64,
    };
    for (id, name, index) in [("c0-1-3=", "row", 1), ("c0-2-5=", "ys", 2)] {
        let expected = format!("{name}[{index}] → {}", interleaved.explain(&[index]));
        let c = line(&log, id);
        assert!(c.contains(&expected), "{c} should contain {expected}");
    }
}

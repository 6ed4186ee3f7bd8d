//! No input makes the front end panic: random bytes and random token
//! streams go through every parser and, when they parse, every checker; the
//! result is a program or a diagnostic whose position lies in the input.

use funmem_lang::front;
use funmem_lang::parse::Layer;
use funmem_lang::Source;
use proptest::prelude::*;

const LAYERS: [(&str, Layer); 3] = [
    ("f.fun", Layer::Fun),
    ("f.funmem", Layer::FunMem),
    ("f.imp", Layer::Imp),
];

/// Runs the whole front end; checks that a diagnostic points into the text
/// and renders.
fn front_end(text: &str) -> Result<(), TestCaseError> {
    for (name, _) in LAYERS {
        let src = Source::new(name, text);
        if let Err(d) = front::load(&src) {
            prop_assert!(
                d.span.start <= text.len() && d.span.end <= text.len(),
                "span {:?} outside input",
                d.span
            );
            let shown = d.render(&src, false);
            prop_assert!(shown.starts_with(name), "{}", shown);
        }
    }
    Ok(())
}

fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "def",
        "main",
        "let",
        "in",
        "if",
        "then",
        "else",
        "kernel",
        "do",
        "iota",
        "copy",
        "alloc",
        "transpose",
        "int",
        "mem",
        "min",
        "max",
        "var",
        "skip",
        "fi",
        "done",
        "out",
        "R",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        ";",
        "=",
        "@",
        "->",
        "<-",
        "+",
        "-",
        "*",
        "/",
        "%",
        "<",
        "<=",
        ">",
        ">=",
        "==",
        "!=",
        "&&",
        "||",
        "!",
        "x",
        "n",
        "xs",
        "m",
        "0",
        "1",
        "7",
        "99999999999999999999",
        "--",
        "\n",
    ])
}

/// Token streams that start like a program, so the parser gets deep.
fn tokens() -> impl Strategy<Value = String> {
    (prop::bool::ANY, prop::collection::vec(token(), 0..60)).prop_map(|(prefix, toks)| {
        let mut s = if prefix {
            String::from("def main (n: int) (x: [n]int) = ")
        } else {
            String::new()
        };
        s.push_str(&toks.join(" "));
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        front_end(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn random_tokens_never_panic(text in tokens()) {
        front_end(&text)?;
    }
}

/// Mutations of well-typed programs: each single-token deletion or
/// duplication of the corpus' sample must give a program or a diagnostic.
#[test]
fn token_mutations_of_samples_never_panic() {
    let samples = [
        "def main (n: int) (xs: [n]int) =\n  let (ys: [n]int) = kernel i < n do\n    let (x: int) = xs[i]\n    in (x)\n  in (ys)\n",
        "def main (c: int) (n: int) =\n  let (k: int) (m: mem) (a: [k]int @ m -> 0 + {(k : 1)}) = if c then\n    let (mm: mem) = alloc n\n    let (b: [n]int @ mm -> R(n)) = iota n\n    in (n, mm, b)\n  else\n    let (mm: mem) = alloc 1\n    let (b: [1]int @ mm -> R(1)) = iota 1\n    in (1, mm, b)\n  in (a)\n",
        "def main (n: int) =\n  var m: mem;\n  m <- alloc n;\n  kernel i < n do\n    m[i] <- i * 2\n  done\nout (a: [n]int @ m -> R(n))\n",
    ];
    for s in samples {
        let toks: Vec<&str> = s.split(' ').collect();
        for k in 0..toks.len() {
            let mut del = toks.clone();
            del.remove(k);
            front_end(&del.join(" ")).unwrap();
            let mut dup = toks.clone();
            dup.insert(k, toks[k]);
            front_end(&dup.join(" ")).unwrap();
        }
    }
}

/// Deep nesting is refused with a diagnostic, not a stack overflow.
#[test]
fn deep_nesting_is_an_error() {
    let n = 100_000;
    let deep = format!(
        "def main (x: int) = let (y: int) = {}x{} in (y)",
        "(x + ".repeat(n),
        ")".repeat(n)
    );
    let chain = format!(
        "def main (x: int) = let (y: int) = x{} in (y)",
        " + x".repeat(n)
    );
    let negs = format!(
        "def main (x: int) = let (y: int) = {}x in (y)",
        "- ".repeat(n)
    );
    let mut kernels = String::from("def main (n: int) = let (y: int) = 0 ");
    for k in 0..5000 {
        kernels.push_str(&format!("let (a{k}: [n]int) = kernel j{k} < n do "));
    }
    for (text, name) in [
        (deep, "f.fun"),
        (chain, "f.fun"),
        (negs, "f.fun"),
        (kernels, "f.fun"),
    ] {
        let src = Source::new(name, text);
        match front::load(&src) {
            Err(d) => assert!(
                d.message.contains("nested") || d.message.contains("unexpected"),
                "{}",
                d.message
            ),
            Ok(_) => panic!("a program nested this deep must be refused"),
        }
    }
    // Redundant parentheses build no nodes: any number of them is fine.
    let parens = format!(
        "def main (x: int) = let (y: int) = {}x{} in (y)",
        "(".repeat(n),
        ")".repeat(n)
    );
    assert!(front::load(&Source::new("f.fun", parens)).is_ok());
}

/// The obligation reader (`funmem prove`) never panics either: random text
/// made of its keywords and the programs' tokens gives obligations that
/// print and parse back, or a diagnostic inside the input.
fn obligation_words() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "obligation",
        "o1",
        "\n",
        "\n  ",
        "given",
        "expect",
        "proved",
        "refuted",
        "disjoint",
        "injective",
        "in-bounds",
        "at-most",
        "and",
        "within",
        "R",
        "(",
        ")",
        "{",
        "}",
        ":",
        ",",
        "+",
        "-",
        "*",
        "/",
        "%",
        "<=",
        "<",
        "==",
        "!=",
        "&&",
        "||",
        "!",
        "min",
        "max",
        "n",
        "m",
        "0",
        "1",
        "2",
        "--",
        "9223372036854775808",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn obligation_files_never_panic(words in prop::collection::vec(obligation_words(), 0..40)) {
        let text = words.join(" ");
        match funmem_lang::obligation::parse_obligations(&text) {
            Ok(obs) => {
                let printed: Vec<String> = obs.iter().map(|o| o.to_string()).collect();
                let back = funmem_lang::obligation::parse_obligations(&printed.join("\n"));
                prop_assert_eq!(back.as_ref().ok(), Some(&obs), "{}", printed.join("\n"));
            }
            Err(d) => prop_assert!(d.span.start <= text.len() && d.span.end <= text.len()),
        }
    }

    #[test]
    fn obligation_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = funmem_lang::obligation::parse_obligations(&text);
    }
}

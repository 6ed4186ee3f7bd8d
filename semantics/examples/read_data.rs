//! Times reading a data file (text or binary) with `textual::read_values`:
//! the figure of docs/data.md.
//!
//! ```sh
//! target/release/funmem dataset -b -g [100000000]f32 > big.bin
//! cargo run --release -p funmem-semantics --example read_data -- big.bin
//! ```
//!
//! Prints, for five runs, the time to read the file into memory, the time
//! to decode its values, and for comparison the time to copy its bytes into
//! a fresh vector (what any decoding into new memory costs at least), and
//! their medians.

use funmem_semantics::textual::read_values;
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read_data FILE");
        std::process::exit(2);
    };
    let (mut load, mut decode, mut copy) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        };
        load.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let values = match read_values(&bytes) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(2);
            }
        };
        decode.push(t.elapsed().as_secs_f64());
        drop(values);
        let t = Instant::now();
        let copied = bytes.to_vec();
        copy.push(t.elapsed().as_secs_f64());
        drop(copied);
        let values = read_values(&bytes).unwrap_or_default();
        let types: Vec<String> = values.iter().map(|v| v.type_name()).collect();
        println!(
            "{}: file read {:.3} s, decoded {:.3} s, bytes copied {:.3} s",
            types.join(" "),
            load[load.len() - 1],
            decode[decode.len() - 1],
            copy[copy.len() - 1]
        );
    }
    load.sort_by(f64::total_cmp);
    decode.sort_by(f64::total_cmp);
    copy.sort_by(f64::total_cmp);
    println!(
        "median: file read {:.3} s, decoded {:.3} s, bytes copied {:.3} s",
        load[2], decode[2], copy[2]
    );
}

//! Simulates one policy at one size on an oracleGeneral trace and prints the result as
//! JSON: `cargo run --release --example sim -- FILE POLICY SIZE [obj|byte]`.
//! (`kvlab sim` is the real command; this example times the library alone.)

#[path = "../tests/oracle.rs"]
#[expect(dead_code, reason = "the example only loads a file given by path")]
mod oracle;

use std::path::Path;

use kvlab_cachesim::{simulate, Capacity, Mode, PolicySpec, SimOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: sim FILE POLICY SIZE [obj|byte]");
        std::process::exit(2);
    }
    let trace = oracle::load(Path::new(&args[1]));
    let spec: PolicySpec = args[2].parse().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let mode = match args.get(4).map(String::as_str) {
        Some("byte") => Mode::Byte,
        _ => Mode::Object,
    };
    let cap: Capacity = args[3].parse().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let size = cap.resolve(&trace, mode);
    let opts = SimOptions {
        mode,
        ..SimOptions::default()
    };
    match simulate(&trace, &spec, size, opts) {
        Ok(r) => println!(
            "{}",
            serde_json::to_string(&r).expect("a result serializes")
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}

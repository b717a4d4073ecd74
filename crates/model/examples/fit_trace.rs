//! Fits db_bench's mixgraph model to a trace and prints the report, the model file and
//! the time taken: `cargo run --release -p kvlab-model --example fit_trace -- TRACE
//! [keyrange_num [span]]` (`span`: ranges of
//! equal key-space width, for db_bench's keys).

use std::path::Path;
use std::time::Instant;

use kvlab_model::{fit, FitOptions, KeyRangeRule, RangeCut};
use kvlab_trace::OpenOptions;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: fit_trace TRACE [keyrange_num [span]]")?;
    let mut options = FitOptions {
        source: path.clone(),
        ..FitOptions::default()
    };
    if let Some(n) = args.next() {
        options.key_ranges = KeyRangeRule::Ranges(n.parse()?);
    }
    if args.next().as_deref() == Some("span") {
        options.range_cut = RangeCut::EqualSpan;
    }
    let start = Instant::now();
    let mut reader = kvlab_trace::open(Path::new(&path), &OpenOptions::default())?;
    let fitted = fit(&mut reader, &options)?;
    let elapsed = start.elapsed();
    eprint!("{}", fitted.report);
    println!("{}", fitted.model.to_toml());
    eprintln!(
        "fitted {} requests in {:.3} s",
        fitted.report.requests,
        elapsed.as_secs_f64()
    );
    Ok(())
}

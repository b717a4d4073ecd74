//! Reports and comparisons from fixture result directories (golden files), and the
//! HTML report in headless chromium.

mod browser;
mod fuzz_smoke;
mod golden;
mod origin;

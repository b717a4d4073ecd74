//! Byte sizes as users write them (`64MiB`, `1.5G`, `4096`).

/// Parses a byte count with an optional binary unit suffix, case-insensitive: `B`,
/// `K`/`KB`/`KiB` (2¹⁰), `M`/`MB`/`MiB` (2²⁰), `G`/`GB`/`GiB` (2³⁰), `T`/`TB`/`TiB` (2⁴⁰).
/// Every suffix is binary, as memcached's `-m` and RocksDB's options read them. A
/// fractional number is allowed with a suffix (`1.5GiB`) and rounded down to bytes.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    if number.is_empty() {
        return None;
    }
    if let Ok(n) = number.parse::<u64>() {
        return n.checked_mul(1u64 << shift);
    }
    if shift == 0 {
        return None;
    }
    let x: f64 = number.parse().ok()?;
    let bytes = x * (1u64 << shift) as f64;
    (bytes.is_finite() && bytes < u64::MAX as f64).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_units() {
        assert_eq!(parse_bytes("256MiB"), Some(256 << 20));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("20gb"), Some(20 << 30));
        assert_eq!(parse_bytes("1.5KiB"), Some(1536));
        assert_eq!(parse_bytes("17"), Some(17));
        assert_eq!(parse_bytes("1.5"), None);
        assert_eq!(parse_bytes("GiB"), None);
        assert_eq!(parse_bytes("3 parsecs"), None);
    }
}

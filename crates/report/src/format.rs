//! Number formatting shared by tables and charts: few digits, units stated elsewhere (in
//! the column or axis label).

/// A throughput in operations per second: whole numbers from 1000 up, else 1–2 decimals.
pub(crate) fn rate(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A latency in microseconds, to about 3 significant digits (HDR histograms keep 3).
pub(crate) fn micros(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A percentage with `decimals` digits after the point.
pub(crate) fn percent(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "–".into()
    }
}

/// A ratio such as B/A, 3 decimals; `–` when undefined.
pub(crate) fn ratio(b: f64, a: f64) -> String {
    if a == 0.0 || !a.is_finite() || !b.is_finite() {
        "–".into()
    } else {
        format!("{:.3}", b / a)
    }
}

/// A byte count in binary units (`512 B`, `1.5 KiB`, `256.0 MiB`).
pub(crate) fn bytes(v: f64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if !v.is_finite() {
        return "–".into();
    }
    if v.abs() < 1024.0 {
        return format!("{v:.0} B");
    }
    let mut x = v / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if x.abs() < 1024.0 {
            break;
        }
        x /= 1024.0;
        unit = u;
    }
    format!("{x:.1} {unit}")
}

/// A compact axis label: SI suffixes from a thousand up (`1.5k`, `20M`), trailing zeros
/// dropped below.
pub(crate) fn compact(v: f64) -> String {
    let (x, suffix) = match v.abs() {
        a if a >= 1e12 => (v / 1e12, "T"),
        a if a >= 1e9 => (v / 1e9, "G"),
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let mut s = format!("{x:.3}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".into();
    }
    s + suffix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(rate(123456.78), "123457");
        assert_eq!(rate(45.67), "45.7");
        assert_eq!(rate(4.567), "4.57");
        assert_eq!(micros(1234.6), "1235");
        assert_eq!(micros(12.34), "12.3");
        assert_eq!(micros(0.5), "0.50");
        assert_eq!(ratio(3.0, 2.0), "1.500");
        assert_eq!(ratio(3.0, 0.0), "–");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(bytes(268435456.0), "256.0 MiB");
        assert_eq!(compact(1500.0), "1.5k");
        assert_eq!(compact(20e6), "20M");
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(compact(100.0), "100");
        assert_eq!(compact(-0.0), "0");
    }
}

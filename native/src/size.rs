//! Sizes on the command line: plain bytes or a number with a binary suffix
//! (`K`, `M`, `G`, `T`, optionally followed by `iB` or `B`), e.g. `1G`, `512M`, `64KiB`.

/// Parses a size. Suffixes are binary (1K = 1024), as mkfs tools use them.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("invalid size {s:?}: expected a number such as 512M or 1G"));
    }
    let n: u64 = num.parse().map_err(|_| format!("invalid size {s:?}: number too large"))?;
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("invalid size {s:?}: unknown suffix {suffix:?} (use K, M, G or T)")),
    };
    n.checked_mul(1u64 << shift).ok_or_else(|| format!("invalid size {s:?}: too large"))
}

/// Formats a byte count with a binary suffix, for messages and reports.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_size("2m").unwrap(), 2 << 20);
        assert!(parse_size("").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("99999999999999T").is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(human(10), "10 B");
        assert_eq!(human(1 << 30), "1.0 GiB");
    }
}

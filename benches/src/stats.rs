//! Small statistics and formatting helpers.

/// Median of the values (mean of the middle two for an even count); `None` when empty or
/// when a value is NaN.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// `a / b`, or `None` when either is missing or `b` is not positive.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

/// A ratio as printed in the report and on the last line: two decimals, `n/a` if missing.
pub fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        Some(r) => format!("{r:.2}"),
        None => "n/a".to_string(),
    }
}

/// A rate or a count with a sensible number of digits; `n/a` if missing.
pub fn fmt_num(v: Option<f64>) -> String {
    match v {
        None => "n/a".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// The last line `compare` prints.
pub fn ratios_line(
    sqlite_atomic_vs_delete: Option<f64>,
    sqlite_atomic_vs_wal: Option<f64>,
    fsync_vs_ext4: Option<f64>,
    fsync_vs_raw: Option<f64>,
) -> String {
    format!(
        "ratios: sqlite-atomic/ext4-delete={} sqlite-atomic/ext4-wal={} fsync4k/ext4={} fsync4k/raw-fdatasync={}",
        fmt_ratio(sqlite_atomic_vs_delete),
        fmt_ratio(sqlite_atomic_vs_wal),
        fmt_ratio(fsync_vs_ext4),
        fmt_ratio(fsync_vs_raw)
    )
}

/// Whether the disk, not rollfs, limits the fsync rate: the raw 4 KiB pwrite+fdatasync
/// loop on the disk (`raw_ops`) is slower than rollfs's own fsync loop on an image in RAM
/// (`rollfs_ram_ops`, where a flush costs nothing: rollfs's CPU-bound rate). Then every
/// fsync ratio measures the disk. `rollfs_disk_ops` (the same loop on this disk) says how
/// much of the raw rate rollfs reaches: far below it, the cost is rollfs's own device
/// round trips per fsync on this disk, not only the disk's rate. The suffix of the
/// `ratios:` line.
pub fn disk_verdict(raw_ops: Option<f64>, rollfs_ram_ops: Option<f64>, rollfs_disk_ops: Option<f64>) -> String {
    let share = ratio(rollfs_disk_ops, raw_ops);
    let bound = match (raw_ops, rollfs_ram_ops) {
        (Some(r), Some(c)) if r < c => match share {
            Some(x) if x < 0.5 => format!(
                " DISK-BOUND (the raw device is slower than rollfs on a RAM disk, and rollfs reaches {} of its rate: \
                 each fsync's device round trips, not the CPU, set the fsync figures)",
                fmt_ratio(share)
            ),
            _ => {
                " DISK-BOUND (the raw device is slower than rollfs on a RAM disk: fsync ratios measure the disk)".into()
            }
        },
        (Some(_), Some(_)) => String::new(),
        _ => " (disk-bound unknown)".into(),
    };
    format!(
        "raw-fdatasync={}/s rollfs-ram-fsync={}/s rollfs-fsync/raw={}{bound}",
        fmt_num(raw_ops),
        fmt_num(rollfs_ram_ops),
        fmt_ratio(share)
    )
}

/// A percentile (0..=100) of the values by nearest rank; `None` when empty.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    Some(v[rank.clamp(1, v.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn ratios_format() {
        assert_eq!(fmt_ratio(ratio(Some(3.0), Some(2.0))), "1.50");
        assert_eq!(fmt_ratio(ratio(Some(3.0), Some(0.0))), "n/a");
        assert_eq!(fmt_ratio(ratio(None, Some(2.0))), "n/a");
        assert_eq!(
            ratios_line(Some(2.0), Some(1.234), None, Some(0.5)),
            "ratios: sqlite-atomic/ext4-delete=2.00 sqlite-atomic/ext4-wal=1.23 fsync4k/ext4=n/a fsync4k/raw-fdatasync=0.50"
        );
        assert!(disk_verdict(Some(300.0), Some(6000.0), Some(290.0)).contains("DISK-BOUND"));
        assert!(!disk_verdict(Some(300.0), Some(6000.0), Some(290.0)).contains("round trips"));
        let far = disk_verdict(Some(14000.0), Some(28000.0), Some(3900.0));
        assert!(
            far.contains("DISK-BOUND") && far.contains("reaches 0.28") && far.contains("rollfs-fsync/raw=0.28"),
            "{far}"
        );
        assert!(!disk_verdict(Some(9000.0), Some(6000.0), Some(5000.0)).contains("DISK-BOUND"));
        assert!(disk_verdict(None, Some(6000.0), None).contains("unknown"));
        assert_eq!(
            ratios_line(Some(2.0), Some(1.234), None, Some(0.5)),
            "ratios: sqlite-atomic/ext4-delete=2.00 sqlite-atomic/ext4-wal=1.23 fsync4k/ext4=n/a fsync4k/raw-fdatasync=0.50"
        );
    }

    #[test]
    fn numbers_and_percentiles() {
        assert_eq!(fmt_num(Some(1234.56)), "1235");
        assert_eq!(fmt_num(Some(12.345)), "12.3");
        assert_eq!(fmt_num(Some(1.2345)), "1.23");
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&[], 50.0), None);
    }
}

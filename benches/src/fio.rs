//! Parsing of `fio --output-format=json`.

use serde_json::Value;

/// What one fio run reports, summed over its jobs (group_reporting or not).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FioResult {
    /// Write operations per second, all jobs together.
    pub write_iops: f64,
    /// Write bandwidth, bytes per second, all jobs together.
    pub write_bw_bytes: f64,
    /// Worst job's 99th-percentile write completion latency, microseconds.
    pub write_p99_us: Option<f64>,
    /// Worst job's 99th-percentile fsync latency, microseconds (fio's `sync` section).
    pub sync_p99_us: Option<f64>,
}

fn f(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

fn p99_ns(lat: &Value) -> Option<f64> {
    let p = lat.get("percentile")?;
    p.get("99.000000").and_then(f).or_else(|| {
        // Some versions print fewer decimals.
        p.as_object()?.iter().find(|(k, _)| k.parse::<f64>().ok() == Some(99.0)).and_then(|(_, v)| f(v))
    })
}

/// Parses fio's JSON output. fio may print warnings before the JSON; they are skipped.
pub fn parse(output: &str) -> Result<FioResult, String> {
    let start = output.find('{').ok_or("no JSON object in fio output")?;
    let v: Value = serde_json::from_str(&output[start..]).map_err(|e| format!("fio JSON: {e}"))?;
    let jobs = v.get("jobs").and_then(Value::as_array).ok_or("fio JSON has no jobs")?;
    if jobs.is_empty() {
        return Err("fio JSON has an empty job list".into());
    }
    let mut r = FioResult { write_iops: 0.0, write_bw_bytes: 0.0, write_p99_us: None, sync_p99_us: None };
    let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, None) => a,
        (None, b) => b,
    };
    for j in jobs {
        let w = j.get("write").ok_or("fio job without a write section")?;
        r.write_iops += w.get("iops").and_then(f).unwrap_or(0.0);
        // "bw_bytes" in fio >= 3.x; "bw" is KiB/s.
        r.write_bw_bytes +=
            w.get("bw_bytes").and_then(f).or_else(|| w.get("bw").and_then(f).map(|k| k * 1024.0)).unwrap_or(0.0);
        r.write_p99_us = max(r.write_p99_us, w.get("clat_ns").and_then(p99_ns).map(|ns| ns / 1000.0));
        r.sync_p99_us =
            max(r.sync_p99_us, j.get("sync").and_then(|s| s.get("lat_ns")).and_then(p99_ns).map(|ns| ns / 1000.0));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"note: both iodepth >= 1 and synchronous I/O engine are selected
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {
      "jobname" : "w",
      "write" : {
        "io_bytes" : 4096000, "bw_bytes" : 2048000, "bw" : 2000, "iops" : 500.5,
        "clat_ns" : { "min" : 1000, "percentile" : { "50.000000" : 20000, "99.000000" : 1200000, "99.900000" : 2000000 } }
      },
      "sync" : { "lat_ns" : { "percentile" : { "99.000000" : 3000000 } }, "total_ios" : 1000 }
    },
    {
      "jobname" : "w",
      "write" : {
        "bw_bytes" : 1024000, "iops" : 250.0,
        "clat_ns" : { "percentile" : { "99.000000" : 900000 } }
      },
      "sync" : { "lat_ns" : { "percentile" : { "99.000000" : 5000000 } } }
    }
  ]
}"#;

    #[test]
    fn parses_two_jobs_with_a_warning_in_front() {
        let r = parse(SAMPLE).unwrap();
        assert!((r.write_iops - 750.5).abs() < 1e-9);
        assert!((r.write_bw_bytes - 3_072_000.0).abs() < 1e-9);
        assert_eq!(r.write_p99_us, Some(1200.0));
        assert_eq!(r.sync_p99_us, Some(5000.0));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse("fio: no such file").is_err());
        assert!(parse("{\"jobs\": []}").is_err());
    }
}

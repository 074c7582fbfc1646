//! Summaries of timings.

/// Median of `xs` (mean of the middle two for an even count); 0 for none.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Smallest of `xs`; 0 for none.
pub fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().reduce(f64::min).unwrap_or(0.0)
}

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Sample standard deviation (n − 1); 0 for fewer than two.
pub fn std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// Half the width of the 95% confidence interval of the mean of `xs` (Student's t,
/// two-sided): `mean ± this`. 0 for fewer than two values.
pub fn ci95_half_width(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    // t(0.975, df) for df = 1..=30; the normal's 1.96 beyond.
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    let t = T.get(xs.len() - 2).copied().unwrap_or(1.96);
    t * std_dev(xs) / (xs.len() as f64).sqrt()
}

/// TestDFSIO's "IO rate std deviation": `sqrt(|mean(rate²) − mean(rate)²|)`.
pub fn io_rate_std_dev(rates: &[f64]) -> f64 {
    let m = mean(rates);
    let sq: Vec<f64> = rates.iter().map(|r| r * r).collect();
    (mean(&sq) - m * m).abs().sqrt()
}

/// utime + stime of a process, in seconds (clock-tick resolution).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after_comm.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// A process's resident set now (`VmRSS`) and at its peak (`VmHWM`), in bytes.
pub fn rss_bytes(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some((kib("VmRSS:")? * 1024, kib("VmHWM:")? * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(min(&[3.0, 1.5, 2.0]), 1.5);
    }

    #[test]
    fn this_process_has_a_resident_set() {
        let (now, peak) = rss_bytes(std::process::id()).unwrap();
        assert!(now > 0 && peak >= now, "{now} {peak}");
    }

    #[test]
    fn std_dev_matches_testdfsio() {
        assert!((io_rate_std_dev(&[2.0, 4.0]) - 1.0).abs() < 1e-12);
        assert_eq!(io_rate_std_dev(&[5.0, 5.0, 5.0]), 0.0);
    }

    #[test]
    fn confidence_interval_of_a_mean() {
        // 2, 4, 6: sd 2, se 2/sqrt(3), t(2) = 4.303.
        assert!((std_dev(&[2.0, 4.0, 6.0]) - 2.0).abs() < 1e-12);
        let half = ci95_half_width(&[2.0, 4.0, 6.0]);
        assert!((half - 4.303 * 2.0 / 3f64.sqrt()).abs() < 1e-9, "{half}");
        assert_eq!(ci95_half_width(&[7.0]), 0.0);
        let many = vec![1.0; 50];
        assert_eq!(ci95_half_width(&many), 0.0);
    }
}

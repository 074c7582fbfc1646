//! Summaries of timings.

use statrs::distribution::{ContinuousCDF, StudentsT};

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

/// Sample variance (n − 1); 0 for fewer than two values.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// The half-width of the 95% confidence interval of the mean of `xs` (Student's t with
/// n − 1 degrees of freedom); 0 for fewer than two values.
pub fn ci95(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let df = (xs.len() - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, df)
        .expect("positive degrees of freedom")
        .inverse_cdf(0.975);
    t * (variance(xs) / xs.len() as f64).sqrt()
}

/// Welch's t-test of two samples' means (unequal variances).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Welch {
    /// (mean a − mean b) / its standard error.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's test of `a` against `b`; `None` with fewer than two values on a side or no
/// variance at all.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (va, vb) = (variance(a) / a.len() as f64, variance(b) / b.len() as f64);
    let se2 = va + vb;
    if se2 <= 0.0 {
        return None;
    }
    let t = (mean(a) - mean(b)) / se2.sqrt();
    let df = se2 * se2 / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(Welch {
        t,
        df,
        p: 2.0 * (1.0 - dist.cdf(t.abs())),
    })
}

/// TestDFSIO's "IO rate std deviation": `sqrt(|mean(rate²) − mean(rate)²|)`.
pub fn io_rate_std_dev(rates: &[f64]) -> f64 {
    let m = mean(rates);
    let sq: Vec<f64> = rates.iter().map(|r| r * r).collect();
    (mean(&sq) - m * m).abs().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_and_welchs_test_match_textbook_values() {
        // Five values of mean 10 and sample standard deviation 1: t(4, 0.975) = 2.776.
        let xs = [9.0, 9.0, 10.0, 11.0, 11.0];
        assert!((variance(&xs) - 1.0).abs() < 1e-9, "{}", variance(&xs));
        assert!(
            (ci95(&xs) - 2.776_445 / 5f64.sqrt()).abs() < 1e-4,
            "{}",
            ci95(&xs)
        );
        // Two samples far apart: tiny p; the same sample: p = 1.
        let far = welch(&[1.0, 1.1, 0.9, 1.05], &[2.0, 2.1, 1.9, 2.05]).unwrap();
        assert!(far.t < -10.0 && far.p < 1e-4, "{far:?}");
        let same = welch(&xs, &xs).unwrap();
        assert!((same.p - 1.0).abs() < 1e-12 && same.t == 0.0);
        assert!(
            (same.df - 8.0).abs() < 1e-9,
            "equal variances and sizes: df = 2(n − 1)"
        );
        assert!(welch(&[1.0], &xs).is_none());
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(min(&[3.0, 1.5, 2.0]), 1.5);
    }

    #[test]
    fn std_dev_matches_testdfsio() {
        assert!((io_rate_std_dev(&[2.0, 4.0]) - 1.0).abs() < 1e-12);
        assert_eq!(io_rate_std_dev(&[5.0, 5.0, 5.0]), 0.0);
    }
}

//! Hadoop's Aggregate package as streaming's `-reducer aggregate` uses it: the mapper
//! emits `TYPE:key\tvalue` lines, and the reducer (`aggregate`) folds each key's values
//! with the aggregator the type names, writing `key\treport`. As in Hadoop the combiner
//! (`aggregate` with argument `combine`) folds the values it sees and emits the
//! aggregator's partial output under the same `TYPE:key`.
//!
//! Types and reports (Hadoop's `ValueAggregator`s): `LongValueSum`, `LongValueMax`,
//! `LongValueMin` (a number), `DoubleValueSum` (a Java double), `StringValueMax`,
//! `StringValueMin` (a string), `UniqValueCount` (the number of distinct values),
//! `ValueHistogram` (values `v` or `v\tcount`; the report is the number of distinct
//! values, then the minimum, median and maximum count, their average and standard
//! deviation, tab-separated).

use std::collections::BTreeMap;

use crate::api::{Emitter, Reducer, Values};
use crate::error::{MapReduceError, Result};
use crate::registry::Registry;

pub fn register(r: &mut Registry) {
    r.register_reducer("aggregate", |args| {
        Ok(Box::new(AggregateReducer {
            combine: args.first().is_some_and(|a| a == "combine"),
        }))
    });
}

/// Hadoop's `ValueAggregatorReducer` (or, with `combine`, its `ValueAggregatorCombiner`).
struct AggregateReducer {
    combine: bool,
}

impl Reducer for AggregateReducer {
    fn reduce(&mut self, key: &[u8], values: &mut Values, out: &mut dyn Emitter) -> Result<()> {
        let colon = key.iter().position(|&b| b == b':').ok_or_else(|| {
            MapReduceError::Task(format!(
                "aggregate: key {:?} names no aggregator (TYPE:key)",
                String::from_utf8_lossy(key)
            ))
        })?;
        let kind = std::str::from_utf8(&key[..colon]).unwrap_or("");
        let mut aggregator = Aggregator::named(kind)?;
        for v in values {
            aggregator.add(&String::from_utf8_lossy(v))?;
        }
        if self.combine {
            for partial in aggregator.combiner_output() {
                out.emit(key, partial.as_bytes())?;
            }
            Ok(())
        } else {
            out.emit(&key[colon + 1..], aggregator.report().as_bytes())
        }
    }
}

/// One key's fold.
#[derive(Debug, PartialEq)]
enum Aggregator {
    LongSum(i64),
    LongMax(i64),
    LongMin(i64),
    DoubleSum(f64),
    StringMax(Option<String>),
    StringMin(Option<String>),
    Uniq(BTreeMap<String, ()>),
    Histogram(BTreeMap<String, i64>),
}

impl Aggregator {
    fn named(kind: &str) -> Result<Aggregator> {
        Ok(match kind {
            "LongValueSum" => Aggregator::LongSum(0),
            "LongValueMax" => Aggregator::LongMax(i64::MIN),
            "LongValueMin" => Aggregator::LongMin(i64::MAX),
            "DoubleValueSum" => Aggregator::DoubleSum(0.0),
            "StringValueMax" => Aggregator::StringMax(None),
            "StringValueMin" => Aggregator::StringMin(None),
            "UniqValueCount" => Aggregator::Uniq(BTreeMap::new()),
            "ValueHistogram" => Aggregator::Histogram(BTreeMap::new()),
            other => {
                return Err(MapReduceError::Task(format!(
                    "aggregate: unknown aggregator type {other:?}"
                )))
            }
        })
    }

    fn add(&mut self, value: &str) -> Result<()> {
        match self {
            Aggregator::LongSum(sum) => *sum = sum.wrapping_add(long(value)?),
            Aggregator::LongMax(max) => *max = (*max).max(long(value)?),
            Aggregator::LongMin(min) => *min = (*min).min(long(value)?),
            Aggregator::DoubleSum(sum) => {
                *sum += value.trim().parse::<f64>().map_err(|_| {
                    MapReduceError::Task(format!("aggregate: not a number: {value:?}"))
                })?
            }
            Aggregator::StringMax(max) => {
                if max.as_deref().is_none_or(|m| value > m) {
                    *max = Some(value.to_string());
                }
            }
            Aggregator::StringMin(min) => {
                if min.as_deref().is_none_or(|m| value < m) {
                    *min = Some(value.to_string());
                }
            }
            Aggregator::Uniq(items) => {
                items.insert(value.to_string(), ());
            }
            Aggregator::Histogram(items) => {
                let (item, count) = match value.rsplit_once('\t') {
                    Some((item, count)) => (item, long(count)?),
                    None => (value, 1),
                };
                *items.entry(item.to_string()).or_default() += count;
            }
        }
        Ok(())
    }

    /// What the reducer writes for the key.
    fn report(&self) -> String {
        match self {
            Aggregator::LongSum(n) | Aggregator::LongMax(n) | Aggregator::LongMin(n) => {
                n.to_string()
            }
            Aggregator::DoubleSum(x) => java_double(*x),
            Aggregator::StringMax(s) | Aggregator::StringMin(s) => s.clone().unwrap_or_default(),
            Aggregator::Uniq(items) => items.len().to_string(),
            Aggregator::Histogram(items) => histogram_report(items),
        }
    }

    /// What a combiner passes on: the partial result, or for the set-like aggregators
    /// each distinct value (with its count for a histogram).
    fn combiner_output(&self) -> Vec<String> {
        match self {
            Aggregator::Uniq(items) => items.keys().cloned().collect(),
            Aggregator::Histogram(items) => {
                items.iter().map(|(v, n)| format!("{v}\t{n}")).collect()
            }
            Aggregator::StringMax(None) | Aggregator::StringMin(None) => Vec::new(),
            other => vec![other.report()],
        }
    }
}

fn long(value: &str) -> Result<i64> {
    value
        .parse()
        .map_err(|_| MapReduceError::Task(format!("aggregate: not a long: {value:?}")))
}

/// `ValueHistogram.getReport`: distinct values, then min, median, max, average and
/// standard deviation of their counts.
fn histogram_report(items: &BTreeMap<String, i64>) -> String {
    let mut counts: Vec<i64> = items.values().copied().collect();
    counts.sort_unstable();
    let mut report = counts.len().to_string();
    if counts.is_empty() {
        return report;
    }
    let n = counts.len() as f64;
    let average = counts.iter().sum::<i64>() as f64 / n;
    let sd = (counts
        .iter()
        .map(|&c| (c as f64 - average).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    for part in [
        counts[0].to_string(),
        counts[counts.len() / 2].to_string(),
        counts[counts.len() - 1].to_string(),
        java_double(average),
        java_double(sd),
    ] {
        report.push('\t');
        report.push_str(&part);
    }
    report
}

/// A double as Java's `Double.toString` writes it: `2.0`, `0.5`, `1.0E7`, `1.5E-4`.
fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let magnitude = x.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let s = format!("{x}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    let s = format!("{x:E}");
    match s.split_once('E') {
        Some((mantissa, exp)) if !mantissa.contains('.') => format!("{mantissa}.0E{exp}"),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::Counters;

    #[derive(Default)]
    struct Collect(Vec<(String, String)>, Counters);

    impl Emitter for Collect {
        fn emit(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
            self.0.push((
                String::from_utf8_lossy(key).into(),
                String::from_utf8_lossy(value).into(),
            ));
            Ok(())
        }
        fn counters(&mut self) -> &mut Counters {
            &mut self.1
        }
    }

    fn reduce(combine: bool, key: &str, values: &[&str]) -> Vec<(String, String)> {
        let mut r = AggregateReducer { combine };
        let mut out = Collect::default();
        let mut it = values.iter().map(|v| v.as_bytes());
        r.reduce(key.as_bytes(), &mut it, &mut out).unwrap();
        out.0
    }

    fn report(key: &str, values: &[&str]) -> String {
        let out = reduce(false, key, values);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, key.split_once(':').unwrap().1);
        out[0].1.clone()
    }

    #[test]
    fn each_aggregator_reports_as_hadoops() {
        assert_eq!(report("LongValueSum:a", &["3", "4", "-2"]), "5");
        assert_eq!(report("LongValueMax:a", &["3", "40", "-2"]), "40");
        assert_eq!(report("LongValueMin:a", &["3", "40", "-2"]), "-2");
        assert_eq!(report("DoubleValueSum:a", &["1.5", "0.5"]), "2.0");
        assert_eq!(report("StringValueMax:a", &["pear", "apple", "zoo"]), "zoo");
        assert_eq!(
            report("StringValueMin:a", &["pear", "apple", "zoo"]),
            "apple"
        );
        assert_eq!(report("UniqValueCount:a", &["x", "y", "x"]), "2");
        // Counts 1 (c), 2 (b), 3 (a): min, median, max, average, standard deviation.
        assert_eq!(
            report("ValueHistogram:k", &["a", "b", "a\t2", "c", "b"]),
            "3\t1\t2\t3\t2.0\t0.816496580927726"
        );
        // The key keeps everything after the first colon.
        assert_eq!(reduce(false, "LongValueSum:a:b", &["1"])[0].0, "a:b");
    }

    #[test]
    fn the_combiner_passes_partial_results_under_the_typed_key() {
        assert_eq!(
            reduce(true, "LongValueSum:a", &["3", "4"]),
            vec![("LongValueSum:a".into(), "7".into())]
        );
        assert_eq!(
            reduce(true, "ValueHistogram:k", &["a", "a", "b"]),
            vec![
                ("ValueHistogram:k".into(), "a\t2".into()),
                ("ValueHistogram:k".into(), "b\t1".into())
            ]
        );
        assert_eq!(reduce(true, "UniqValueCount:k", &["b", "a", "b"]).len(), 2);
    }

    #[test]
    fn bad_input_fails_the_task() {
        let mut r = AggregateReducer { combine: false };
        let mut out = Collect::default();
        for (key, value) in [("NoType", "1"), ("Bogus:a", "1"), ("LongValueSum:a", "x")] {
            let mut it = std::iter::once(value.as_bytes());
            assert!(r.reduce(key.as_bytes(), &mut it, &mut out).is_err());
        }
    }

    #[test]
    fn doubles_print_as_java_does() {
        assert_eq!(java_double(2.0), "2.0");
        assert_eq!(java_double(0.25), "0.25");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(1.5e-4), "1.5E-4");
        assert_eq!(java_double(0.0), "0.0");
    }
}

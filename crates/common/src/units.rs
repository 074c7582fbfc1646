//! Hadoop's `StringUtils.TraditionalBinaryPrefix.long2String`: sizes as `1 K`, `1.5 M`,
//! `1.10 MB`, used in messages and shell output that must read as Hadoop's.

const SYMBOLS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];

/// `n` with the largest binary prefix it reaches, `decimals` places unless exact, then
/// `unit` (`binary_prefix(1536, "B", 2)` = `1.50 KB`; below 1024 `12` or `12 B`).
pub fn binary_prefix(n: i64, unit: &str, decimals: usize) -> String {
    let sign = if n < 0 { "-" } else { "" };
    let v = n.unsigned_abs();
    if v < 1024 {
        return match unit {
            "" => format!("{sign}{v}"),
            _ => format!("{sign}{v} {unit}"),
        };
    }
    let mut i = 0;
    while i + 1 < SYMBOLS.len() && v >> (10 * (i + 2)) > 0 {
        i += 1;
    }
    let shift = 10 * (i + 1);
    let body = if v & ((1u64 << shift) - 1) == 0 {
        (v >> shift).to_string()
    } else {
        let s = format!("{:.decimals$}", v as f64 / (1u64 << shift) as f64);
        // 1023.99 K rounds up to 1024.0 K: Hadoop then uses the next prefix.
        if s.starts_with("1024") && i + 1 < SYMBOLS.len() {
            i += 1;
            format!("{:.decimals$}", v as f64 / (1u64 << (shift + 10)) as f64)
        } else {
            s
        }
    };
    format!("{sign}{body} {}{unit}", SYMBOLS[i])
}

#[cfg(test)]
mod tests {
    use super::binary_prefix;

    #[test]
    fn reads_as_hadoop_writes_it() {
        assert_eq!(binary_prefix(1000, "", 1), "1000");
        assert_eq!(binary_prefix(10, "B", 2), "10 B");
        assert_eq!(binary_prefix(1 << 20, "", 1), "1 M");
        assert_eq!(binary_prefix(1536, "", 1), "1.5 K");
        assert_eq!(binary_prefix(1_150_976, "B", 2), "1.10 MB");
        assert_eq!(binary_prefix(-2048, "", 1), "-2 K");
    }
}

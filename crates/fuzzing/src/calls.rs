//! A sequence of calls in one fuzz input: `selector: u8, len: u16 BE, payload[len]`,
//! repeated. A short last call takes whatever bytes are left, so every byte string is a
//! valid sequence and the fuzzer never wastes an input on framing.

/// The calls in `data`, in order.
pub fn split(mut data: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    std::iter::from_fn(move || {
        let (&selector, rest) = data.split_first()?;
        let len = match rest {
            [a, b, ..] => u16::from_be_bytes([*a, *b]) as usize,
            _ => 0,
        };
        let rest = rest.get(2..).unwrap_or_default();
        let (payload, next) = rest.split_at(len.min(rest.len()));
        data = next;
        Some((selector, payload))
    })
}

/// Lays out `calls` so that [`split`] returns them.
pub fn join(calls: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (selector, payload) in calls {
        let len = u16::try_from(payload.len()).expect("a seed call fits in 64 KiB");
        out.push(*selector);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(payload);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_then_split_round_trips_and_any_bytes_split() {
        let calls = vec![(3, b"abc".to_vec()), (200, vec![]), (7, vec![9; 300])];
        let data = join(&calls);
        let back: Vec<(u8, Vec<u8>)> = split(&data).map(|(s, p)| (s, p.to_vec())).collect();
        assert_eq!(back, calls);
        // A length past the end takes the rest; a lone selector has no payload.
        let got: Vec<(u8, &[u8])> = split(&[1, 0, 9, b'x']).collect();
        assert_eq!(got, vec![(1, &b"x"[..])]);
        let got: Vec<(u8, &[u8])> = split(&[4]).collect();
        assert_eq!(got, vec![(4, &b""[..])]);
    }
}

//! K-way merge of sorted runs, and grouping of a sorted run by key for reducers and
//! combiners.

use std::io;

use crate::error::Result;
use crate::record::Run;

/// Many sorted runs read as one; equal keys come out in run order, so values keep the
/// order of the runs (earlier spill, earlier map) they came from.
pub struct Merge<'a> {
    /// The inputs; a run leaves the heap when it ends but stays here until drop.
    runs: Vec<Box<dyn Run + 'a>>,
    /// Indices of runs that have a current record, as a min-heap on (key, index).
    heap: Vec<usize>,
    started: bool,
}

impl<'a> Merge<'a> {
    pub fn new(runs: Vec<Box<dyn Run + 'a>>) -> Self {
        Merge {
            runs,
            heap: Vec::new(),
            started: false,
        }
    }

    fn less(&self, a: usize, b: usize) -> bool {
        (self.runs[a].key(), a) < (self.runs[b].key(), b)
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut min = i;
            if l < self.heap.len() && self.less(self.heap[l], self.heap[min]) {
                min = l;
            }
            if r < self.heap.len() && self.less(self.heap[r], self.heap[min]) {
                min = r;
            }
            if min == i {
                return;
            }
            self.heap.swap(i, min);
            i = min;
        }
    }

    fn start(&mut self) -> io::Result<()> {
        for i in 0..self.runs.len() {
            if self.runs[i].advance()? {
                self.heap.push(i);
            }
        }
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
        self.started = true;
        Ok(())
    }
}

impl Run for Merge<'_> {
    fn advance(&mut self) -> io::Result<bool> {
        if !self.started {
            self.start()?;
            return Ok(!self.heap.is_empty());
        }
        let Some(&top) = self.heap.first() else {
            return Ok(false);
        };
        if !self.runs[top].advance()? {
            let last = self.heap.pop().expect("heap is not empty");
            if self.heap.is_empty() {
                return Ok(false);
            }
            self.heap[0] = last;
        }
        self.sift_down(0);
        Ok(true)
    }

    fn key(&self) -> &[u8] {
        self.runs[self.heap[0]].key()
    }

    fn value(&self) -> &[u8] {
        self.runs[self.heap[0]].value()
    }
}

/// Calls `f` once per distinct key of a sorted run with an iterator over its values.
/// Values of one key are gathered in one reused buffer, so memory is bounded by the
/// largest group, and nothing is allocated per record. Returns the number of groups.
pub fn for_each_group(
    run: &mut dyn Run,
    mut f: impl FnMut(&[u8], &mut dyn Iterator<Item = &[u8]>) -> Result<()>,
) -> Result<u64> {
    let mut key = Vec::new();
    let mut values = Vec::new();
    let mut ends = Vec::new();
    let mut groups = 0;
    let mut more = run.advance().map_err(corrupt_run)?;
    while more {
        key.clear();
        key.extend_from_slice(run.key());
        values.clear();
        ends.clear();
        loop {
            values.extend_from_slice(run.value());
            ends.push(values.len());
            more = run.advance().map_err(corrupt_run)?;
            if !more || run.key() != key.as_slice() {
                break;
            }
        }
        let mut start = 0;
        let mut iter = ends.iter().map(|&end| {
            let v = &values[start..end];
            start = end;
            v
        });
        f(&key, &mut iter)?;
        groups += 1;
    }
    Ok(groups)
}

fn corrupt_run(e: io::Error) -> crate::MapReduceError {
    crate::MapReduceError::Corrupt {
        what: "sorted run".into(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{put_record, SliceRun};

    fn run(records: &[(&str, &str)]) -> Box<dyn Run> {
        let mut buf = Vec::new();
        for (k, v) in records {
            put_record(&mut buf, k.as_bytes(), v.as_bytes());
        }
        Box::new(SliceRun::new(buf))
    }

    #[test]
    fn merges_and_groups_in_key_then_run_order() {
        let mut merge = Merge::new(vec![
            run(&[("a", "1"), ("c", "1")]),
            run(&[]),
            run(&[("a", "2"), ("b", "2"), ("c", "2")]),
            run(&[("b", "3")]),
        ]);
        let mut got = Vec::new();
        let groups = for_each_group(&mut merge, |k, vals| {
            let vals: Vec<String> = vals.map(|v| String::from_utf8_lossy(v).into()).collect();
            got.push(format!("{}={}", String::from_utf8_lossy(k), vals.join(",")));
            Ok(())
        })
        .unwrap();
        assert_eq!(groups, 3);
        assert_eq!(got, ["a=1,2", "b=2,3", "c=1,2"]);
    }

    #[test]
    fn empty_merge_has_no_records() {
        let mut merge = Merge::new(vec![run(&[]), run(&[])]);
        assert!(!merge.advance().unwrap());
        assert!(!merge.advance().unwrap());
    }
}

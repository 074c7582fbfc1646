//! Potential-Reception of one reduce: the bytes of map output it still has to fetch.
//!
//! Definition (what the NodeManager sums over its reduces and the status-aware
//! scheduler reads): the segments of this reduce's partition that finished maps have
//! announced and the reduce has not fetched yet, at their size on the map's disk (what
//! crosses the network, compressed when the job compresses map output), plus, for maps
//! not announced yet, an estimate: the mean announced segment size times their number.
//! Before the first map is announced nothing is known and the value is 0; once every
//! segment is fetched it is 0.

use std::collections::BTreeMap;

use super::MapOutputLocation;

/// What one reduce knows of its map outputs, as completions arrive and fetches end.
#[derive(Debug)]
pub struct PotentialReception {
    num_maps: u32,
    partition: u32,
    /// Segment bytes by map index, from the announcement; 0 when it gave no sizes.
    announced: BTreeMap<u32, u64>,
    announced_bytes: u64,
    /// Announced bytes already fetched.
    fetched_bytes: u64,
    fetched: Vec<bool>,
}

impl PotentialReception {
    pub fn new(num_maps: u32, partition: u32) -> Self {
        PotentialReception {
            num_maps,
            partition,
            announced: BTreeMap::new(),
            announced_bytes: 0,
            fetched_bytes: 0,
            fetched: vec![false; num_maps as usize],
        }
    }

    /// A finished map's output became known; returns the new value.
    pub fn announce(&mut self, map: &MapOutputLocation) -> u64 {
        let index = map.attempt.task.index;
        if index < self.num_maps && !self.announced.contains_key(&index) {
            let bytes = map
                .partition_bytes
                .get(self.partition as usize)
                .copied()
                .unwrap_or(0);
            self.announced.insert(index, bytes);
            self.announced_bytes += bytes;
            if self.fetched[index as usize] {
                self.fetched_bytes += bytes;
            }
        }
        self.value()
    }

    /// The segment of map `index` is here; returns the new value.
    pub fn fetched(&mut self, index: u32) -> u64 {
        if let Some(done) = self.fetched.get_mut(index as usize).filter(|d| !**d) {
            *done = true;
            self.fetched_bytes += self.announced.get(&index).copied().unwrap_or(0);
        }
        self.value()
    }

    /// Known remainder plus the estimate for maps not announced yet.
    pub fn value(&self) -> u64 {
        let announced = self.announced.len() as u64;
        if announced == 0 {
            return 0;
        }
        let known = self.announced_bytes - self.fetched_bytes;
        let unannounced = u64::from(self.num_maps) - announced;
        known + unannounced * (self.announced_bytes / announced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{JobId, TaskType};

    fn map(index: u32, sizes: &[u64]) -> MapOutputLocation {
        let job = JobId {
            cluster_ts: 1,
            seq: 1,
        };
        MapOutputLocation {
            attempt: job.task(TaskType::Map, index).attempt(0),
            shuffle_addr: "n:1".into(),
            local_dir: None,
            partition_bytes: sizes.to_vec(),
        }
    }

    #[test]
    fn known_remainder_plus_the_mean_for_maps_still_running() {
        // Reduce 1 of a job with 4 maps.
        let mut pr = PotentialReception::new(4, 1);
        assert_eq!(pr.value(), 0, "nothing known before the first map ends");
        // Map 0's segment for partition 1 is 100 bytes: 100 known + 3 × 100 estimated.
        assert_eq!(pr.announce(&map(0, &[7, 100])), 400);
        // Map 2: 300 bytes; mean 200: 400 known + 2 × 200.
        assert_eq!(pr.announce(&map(2, &[7, 300])), 800);
        // Announced twice (a second attempt) changes nothing.
        assert_eq!(pr.announce(&map(2, &[7, 999])), 800);
        assert_eq!(pr.fetched(0), 700);
        assert_eq!(pr.fetched(0), 700);
        assert_eq!(pr.announce(&map(1, &[7, 50])), 300 + 50 + 150);
        assert_eq!(pr.announce(&map(3, &[7, 10])), 360);
        for i in 1..4 {
            pr.fetched(i);
        }
        assert_eq!(pr.value(), 0, "every segment fetched");
    }

    #[test]
    fn announcements_without_sizes_count_nothing() {
        let mut pr = PotentialReception::new(2, 0);
        assert_eq!(pr.announce(&map(0, &[])), 0);
        assert_eq!(pr.fetched(0), 0);
        assert_eq!(pr.fetched(9), 0, "an index out of range is ignored");
    }
}

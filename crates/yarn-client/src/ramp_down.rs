//! The reduce ramp-down rule of a MapReduce ApplicationMaster (Hadoop's
//! `RMContainerAllocator.preemptReducesIfNeeded`): when maps wait for containers that
//! the job's reduces hold, the AM withdraws its reduce asks and preempts its newest
//! running reduces. A pure function of what the AM sees, shared by Tusk's MapReduce AM
//! and the ResourceManager's scheduler simulator, so both follow one rule.

use std::time::Duration;

/// When the AM preempts its running reduces so that waiting maps get containers
/// (Hadoop's reduce ramp-down, `RMContainerAllocator.preemptReducesIfNeeded`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReducePreemption {
    /// A map waiting this long while the headroom, less the reduces still asked for,
    /// has no room for it (`mapreduce.job.reducer.preempt.delay.sec`, 0; negative
    /// counts as 0).
    pub no_headroom_delay: Duration,
    /// A map waiting this long whatever the headroom
    /// (`mapreduce.job.reducer.unconditional-preempt.delay.sec`, 300 s; `None` when
    /// negative: never).
    pub unconditional_delay: Option<Duration>,
    /// Share of the job's resource limit one round may free
    /// (`yarn.app.mapreduce.am.job.reduce.preemption.limit`, 0.5).
    pub limit: f64,
}

impl Default for ReducePreemption {
    /// Hadoop's defaults.
    fn default() -> Self {
        ReducePreemption {
            no_headroom_delay: Duration::ZERO,
            unconditional_delay: Some(Duration::from_secs(300)),
            limit: 0.5,
        }
    }
}

/// What the ramp-down rule looks at, in MiB where it is a size.
#[derive(Clone, Debug, Default)]
pub struct RampDownView {
    pub running_maps: usize,
    /// How long each map that has no attempt running has waited for its container.
    pub waiting_maps: Vec<Duration>,
    pub running_reduces: usize,
    /// Reduce containers asked for and not yet received.
    pub asked_reduces: usize,
    /// Free resources in the cluster, from the latest allocate response.
    pub headroom_mb: u64,
    /// What the job's running task containers hold.
    pub used_mb: u64,
    pub map_mb: u64,
    pub reduce_mb: u64,
}

/// The ramp-down decision: `None` when nothing is to be done, else how many running
/// reduces to preempt (newest first); the reduce asks outstanding are withdrawn too.
///
/// As Hadoop: only when no map of the job runs and some wait; then at once if a map has
/// waited `unconditional_delay`, else when the headroom less the reduces still asked
/// for cannot hold one map and a map has waited `no_headroom_delay`. The count frees
/// room for at least one map, or for `limit` of the job's resource limit (headroom plus
/// what it holds), but no more than the waiting maps need.
pub fn reduces_to_preempt(o: &ReducePreemption, v: &RampDownView) -> Option<usize> {
    if (v.running_reduces == 0 && v.asked_reduces == 0)
        || v.running_maps > 0
        || v.waiting_maps.is_empty()
    {
        return None;
    }
    let waited = |delay: Duration| v.waiting_maps.iter().filter(|w| **w >= delay).count();
    let hanging = match o.unconditional_delay.map(waited) {
        Some(n) if n > 0 => n,
        _ => {
            let for_maps = v
                .headroom_mb
                .saturating_sub(v.reduce_mb * v.asked_reduces as u64);
            if for_maps >= v.map_mb {
                return None;
            }
            match waited(o.no_headroom_delay) {
                0 => return None,
                n => n,
            }
        }
    };
    let reduce_mb = v.reduce_mb.max(1);
    let containers = |mb: f64| (mb / reduce_mb as f64).ceil() as usize;
    let for_one_map = containers(v.map_mb as f64);
    let for_limit = containers(o.limit * (v.headroom_mb + v.used_mb) as f64);
    let for_all = containers((v.map_mb * hanging as u64) as f64);
    Some(
        for_one_map
            .max(for_limit)
            .min(for_all)
            .min(v.running_reduces),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn hadoop() -> ReducePreemption {
        ReducePreemption {
            no_headroom_delay: Duration::ZERO,
            unconditional_delay: Some(Duration::from_secs(300)),
            limit: 0.5,
        }
    }

    /// Three reduces hold a 4 GiB cluster (with the AM); four maps wait.
    fn reduces_hold_the_cluster() -> RampDownView {
        RampDownView {
            running_maps: 0,
            waiting_maps: vec![Duration::from_millis(10); 4],
            running_reduces: 3,
            asked_reduces: 0,
            headroom_mb: 0,
            used_mb: 3 * 1024,
            map_mb: 1024,
            reduce_mb: 1024,
        }
    }

    #[test]
    fn reduces_holding_the_headroom_from_waiting_maps_are_preempted() {
        let v = reduces_hold_the_cluster();
        // Room for one map, or half the job's limit (1.5 → 2 reduces), at most 3.
        assert_eq!(reduces_to_preempt(&hadoop(), &v), Some(2));
        // One waiting map needs only one reduce gone.
        let one = RampDownView {
            waiting_maps: vec![Duration::from_millis(10)],
            ..v.clone()
        };
        assert_eq!(reduces_to_preempt(&hadoop(), &one), Some(1));
    }

    #[test]
    fn nothing_is_preempted_while_a_map_runs_or_room_is_left() {
        let v = reduces_hold_the_cluster();
        let running = RampDownView {
            running_maps: 1,
            ..v.clone()
        };
        assert_eq!(reduces_to_preempt(&hadoop(), &running), None);
        let room = RampDownView {
            headroom_mb: 1024,
            ..v.clone()
        };
        assert_eq!(reduces_to_preempt(&hadoop(), &room), None);
        // Room, but a reduce still asked for would take it first.
        let asked = RampDownView {
            headroom_mb: 1024,
            asked_reduces: 1,
            ..v.clone()
        };
        assert_eq!(reduces_to_preempt(&hadoop(), &asked), Some(2));
        let no_maps = RampDownView {
            waiting_maps: vec![],
            ..v
        };
        assert_eq!(reduces_to_preempt(&hadoop(), &no_maps), None);
    }

    #[test]
    fn the_delays_count_from_the_map_ask() {
        let v = reduces_hold_the_cluster();
        let patient = ReducePreemption {
            no_headroom_delay: Duration::from_secs(5),
            ..hadoop()
        };
        assert_eq!(reduces_to_preempt(&patient, &v), None);
        let waited = RampDownView {
            waiting_maps: vec![Duration::from_secs(6), Duration::from_secs(1)],
            ..v.clone()
        };
        assert_eq!(reduces_to_preempt(&patient, &waited), Some(1));
        // With room for maps, only the unconditional delay preempts.
        let room = RampDownView {
            headroom_mb: 4096,
            waiting_maps: vec![Duration::from_secs(301)],
            ..v
        };
        assert_eq!(reduces_to_preempt(&hadoop(), &room), Some(1));
        let never = ReducePreemption {
            unconditional_delay: None,
            ..hadoop()
        };
        assert_eq!(reduces_to_preempt(&never, &room), None);
    }
}

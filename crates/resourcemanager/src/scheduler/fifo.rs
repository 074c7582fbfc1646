use super::{AppDemand, Scheduler};

/// Hadoop's FifoScheduler order: the earliest submitted application first.
pub struct FifoScheduler;

impl Scheduler for FifoScheduler {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn order(&self, apps: &[AppDemand<'_>]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..apps.len()).filter(|&i| apps[i].pending).collect();
        order.sort_by_key(|&i| apps[i].seq);
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Resource;

    #[test]
    fn earliest_first_and_only_pending() {
        let app = |application, seq, pending| AppDemand {
            application,
            seq,
            queue: "default",
            used: Resource::new(seq * 100, 1),
            pending,
        };
        let apps = [app("b", 2, true), app("c", 3, false), app("a", 1, true)];
        assert_eq!(FifoScheduler.order(&apps), vec![2, 0]);
    }
}

use std::collections::HashMap;

use super::{AppDemand, Scheduler};
use crate::options::ResourceManagerOptions;

/// Fair sharing by memory: queues ordered by memory held divided by weight, then the
/// applications of a queue by memory held, ties by submission order.
pub struct FairScheduler {
    /// Queue weights; fixed at start.
    options: ResourceManagerOptions,
}

impl FairScheduler {
    pub fn new(options: ResourceManagerOptions) -> Self {
        FairScheduler { options }
    }
}

impl Scheduler for FairScheduler {
    fn name(&self) -> &'static str {
        "fair"
    }

    fn order(&self, apps: &[AppDemand<'_>]) -> Vec<usize> {
        let mut queue_used: HashMap<&str, u64> = HashMap::new();
        for a in apps {
            *queue_used.entry(a.queue).or_default() += a.used.memory_mb;
        }
        let share =
            |a: &AppDemand<'_>| queue_used[a.queue] as f64 / self.options.queue_weight(a.queue);
        let mut order: Vec<usize> = (0..apps.len()).filter(|&i| apps[i].pending).collect();
        order.sort_by(|&x, &y| {
            let (a, b) = (&apps[x], &apps[y]);
            share(a)
                .total_cmp(&share(b))
                .then(a.used.memory_mb.cmp(&b.used.memory_mb))
                .then(a.seq.cmp(&b.seq))
        });
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::QueueOptions;
    use crate::resource::Resource;

    fn app<'a>(application: &'a str, seq: u64, queue: &'a str, mb: u64) -> AppDemand<'a> {
        AppDemand {
            application,
            seq,
            queue,
            used: Resource::new(mb, 1),
            pending: true,
        }
    }

    #[test]
    fn least_served_application_first() {
        let fair = FairScheduler::new(ResourceManagerOptions::default());
        let apps = [app("a", 1, "default", 512), app("b", 2, "default", 128)];
        assert_eq!(fair.order(&apps), vec![1, 0]);
    }

    #[test]
    fn queues_by_weighted_share() {
        let options = ResourceManagerOptions {
            queues: vec![
                QueueOptions {
                    name: "big".into(),
                    weight: 3.0,
                },
                QueueOptions {
                    name: "small".into(),
                    weight: 1.0,
                },
            ],
            ..Default::default()
        };
        let fair = FairScheduler::new(options);
        // big holds 600/3 = 200 per weight, small 300/1: big goes first.
        let apps = [app("s", 1, "small", 300), app("b", 2, "big", 600)];
        assert_eq!(fair.order(&apps), vec![1, 0]);
    }
}

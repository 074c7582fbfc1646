//! Memory and vcores as one value, with the arithmetic the scheduler needs.

use serde::{Deserialize, Serialize};
use tusk_proto::tusk::yarn as y;

/// An amount of memory and virtual cores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    pub memory_mb: u64,
    pub vcores: u32,
}

impl Resource {
    pub const fn new(memory_mb: u64, vcores: u32) -> Self {
        Resource { memory_mb, vcores }
    }

    /// True when `self` fits into `free`.
    pub fn fits_in(&self, free: &Resource) -> bool {
        self.memory_mb <= free.memory_mb && self.vcores <= free.vcores
    }

    pub fn plus(&self, other: &Resource) -> Resource {
        Resource::new(self.memory_mb + other.memory_mb, self.vcores + other.vcores)
    }

    pub fn minus(&self, other: &Resource) -> Resource {
        Resource::new(
            self.memory_mb.saturating_sub(other.memory_mb),
            self.vcores.saturating_sub(other.vcores),
        )
    }

    /// Rounds an ask up to a multiple of `minimum` (at least `minimum`), as YARN's
    /// schedulers normalise requests; `None` when it exceeds `maximum`.
    pub fn normalize(&self, minimum: &Resource, maximum: &Resource) -> Option<Resource> {
        let round = |v: u64, step: u64| {
            if step == 0 {
                v
            } else {
                v.max(step).div_ceil(step) * step
            }
        };
        let r = Resource::new(
            round(self.memory_mb, minimum.memory_mb),
            round(u64::from(self.vcores), u64::from(minimum.vcores)) as u32,
        );
        r.fits_in(maximum).then_some(r)
    }
}

impl From<&y::Resource> for Resource {
    fn from(r: &y::Resource) -> Self {
        Resource::new(r.memory_mb, r.vcores)
    }
}

impl From<Option<&y::Resource>> for Resource {
    fn from(r: Option<&y::Resource>) -> Self {
        r.map(Resource::from).unwrap_or_default()
    }
}

impl From<Resource> for y::Resource {
    fn from(r: Resource) -> Self {
        y::Resource {
            memory_mb: r.memory_mb,
            vcores: r.vcores,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_to_multiples_of_the_minimum() {
        let min = Resource::new(128, 1);
        let max = Resource::new(1024, 4);
        assert_eq!(
            Resource::new(1, 0).normalize(&min, &max),
            Some(Resource::new(128, 1))
        );
        assert_eq!(
            Resource::new(129, 2).normalize(&min, &max),
            Some(Resource::new(256, 2))
        );
        assert_eq!(Resource::new(2000, 1).normalize(&min, &max), None);
        assert!(Resource::new(256, 2).fits_in(&Resource::new(256, 2)));
        assert!(!Resource::new(256, 3).fits_in(&Resource::new(512, 2)));
    }
}

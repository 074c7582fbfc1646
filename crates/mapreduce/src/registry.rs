//! Built-in names → component implementations. A job names its mapper, reducer,
//! combiner and partitioner; each task builds them here. Programs using the Rust API
//! register their own components under new names.

use std::collections::HashMap;
use std::sync::Arc;

use crate::api::{Mapper, Partitioner, Reducer};
use crate::error::{MapReduceError, Result};
use crate::job::ComponentSpec;

type Factory<T> = Arc<dyn Fn(&[String]) -> Result<Box<T>> + Send + Sync>;

#[derive(Clone)]
pub struct Registry {
    mappers: HashMap<String, Factory<dyn Mapper>>,
    reducers: HashMap<String, Factory<dyn Reducer>>,
    partitioners: HashMap<String, Factory<dyn Partitioner>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

fn build<T: ?Sized>(
    map: &HashMap<String, Factory<T>>,
    kind: &'static str,
    spec: &ComponentSpec,
) -> Result<Box<T>> {
    let factory = map
        .get(&spec.name)
        .ok_or_else(|| MapReduceError::UnknownComponent {
            kind,
            name: spec.name.clone(),
        })?;
    factory(&spec.args)
}

impl Registry {
    pub fn empty() -> Self {
        Registry {
            mappers: HashMap::new(),
            reducers: HashMap::new(),
            partitioners: HashMap::new(),
        }
    }

    pub fn register_mapper(
        &mut self,
        name: &str,
        f: impl Fn(&[String]) -> Result<Box<dyn Mapper>> + Send + Sync + 'static,
    ) -> &mut Self {
        self.mappers.insert(name.to_string(), Arc::new(f));
        self
    }

    pub fn register_reducer(
        &mut self,
        name: &str,
        f: impl Fn(&[String]) -> Result<Box<dyn Reducer>> + Send + Sync + 'static,
    ) -> &mut Self {
        self.reducers.insert(name.to_string(), Arc::new(f));
        self
    }

    pub fn register_partitioner(
        &mut self,
        name: &str,
        f: impl Fn(&[String]) -> Result<Box<dyn Partitioner>> + Send + Sync + 'static,
    ) -> &mut Self {
        self.partitioners.insert(name.to_string(), Arc::new(f));
        self
    }

    pub fn mapper(&self, spec: &ComponentSpec) -> Result<Box<dyn Mapper>> {
        build(&self.mappers, "mapper", spec)
    }

    /// A reducer or combiner.
    pub fn reducer(&self, spec: &ComponentSpec) -> Result<Box<dyn Reducer>> {
        build(&self.reducers, "reducer", spec)
    }

    pub fn partitioner(&self, spec: &ComponentSpec) -> Result<Box<dyn Partitioner>> {
        build(&self.partitioners, "partitioner", spec)
    }

    /// Checks that every component the job names exists and accepts its arguments.
    pub fn validate(&self, job: &crate::JobSpec) -> Result<()> {
        self.mapper(&job.mapper)?;
        for r in job.reducer.iter().chain(&job.combiner) {
            self.reducer(r)?;
        }
        if let Some(p) = &job.partitioner {
            self.partitioner(p)?;
        }
        Ok(())
    }
}

/// A component's argument `i` parsed, or an error naming the component.
pub(crate) fn arg<T: std::str::FromStr>(
    component: &str,
    args: &[String],
    i: usize,
    what: &str,
) -> Result<T> {
    let raw = args.get(i).ok_or_else(|| {
        MapReduceError::bad_args(component, format!("missing argument {i} ({what})"))
    })?;
    raw.parse().map_err(|_| {
        MapReduceError::bad_args(
            component,
            format!("argument {i} ({what}): cannot parse {raw:?}"),
        )
    })
}

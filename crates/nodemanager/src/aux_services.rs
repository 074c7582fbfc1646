//! Auxiliary services (Hadoop's `AuxServices`): node-wide services that applications'
//! containers talk to, such as Hadoop's `mapreduce_shuffle`. A start request's launch
//! context names them in `service_data` (service name → bytes for that service, e.g. a
//! job token); each named service is initialized for the container's application before
//! the container starts, and stopped for it when the application ends on this node.
//! Every startContainers reply carries each service's meta data (`services_meta_data`,
//! e.g. the shuffle port), from which AMs tell their tasks where the service is.
//!
//! A start request naming a service the node does not run fails with Hadoop's
//! `InvalidAuxServiceException`; a service that cannot use its data is logged and the
//! container starts anyway, as Hadoop's NodeManager does.

use std::sync::Arc;

use bytes::Bytes;

use crate::error::NodeManagerError;
use crate::hadoop_shuffle::{HadoopShuffle, MAPREDUCE_SHUFFLE};

/// One auxiliary service.
pub trait AuxService: Send + Sync + 'static {
    /// The name applications give it (`service_data` and `services_meta_data` keys).
    fn name(&self) -> &str;

    /// `application` (run by `user`) starts a container that sent `data` for this service.
    fn initialize_application(
        &self,
        application: &str,
        user: &str,
        data: &[u8],
    ) -> Result<(), NodeManagerError>;

    /// `application` has ended on this node.
    fn stop_application(&self, application: &str);

    /// What AMs learn about the service from every startContainers reply.
    fn meta_data(&self) -> Bytes;
}

/// Hadoop's `mapreduce_shuffle`: the job token in, the shuffle port out.
impl AuxService for HadoopShuffle {
    fn name(&self) -> &str {
        MAPREDUCE_SHUFFLE
    }

    fn initialize_application(
        &self,
        application: &str,
        user: &str,
        data: &[u8],
    ) -> Result<(), NodeManagerError> {
        HadoopShuffle::initialize_application(self, application, user, data)
    }

    fn stop_application(&self, application: &str) {
        HadoopShuffle::stop_application(self, application)
    }

    fn meta_data(&self) -> Bytes {
        HadoopShuffle::meta_data(self)
    }
}

/// The node's auxiliary services, fixed at start.
#[derive(Default)]
pub(crate) struct AuxServices {
    services: Vec<Arc<dyn AuxService>>,
}

impl AuxServices {
    pub fn new(services: Vec<Arc<dyn AuxService>>) -> Self {
        AuxServices { services }
    }

    fn get(&self, name: &str) -> Option<&Arc<dyn AuxService>> {
        self.services.iter().find(|s| s.name() == name)
    }

    /// Refuses service data for a service this node does not run.
    pub fn check(&self, service_data: &[(String, Bytes)]) -> Result<(), NodeManagerError> {
        match service_data
            .iter()
            .find(|(name, _)| self.get(name).is_none())
        {
            Some((name, _)) => Err(NodeManagerError::UnknownAuxService {
                service: name.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Hands each named service its data for `application`; a service that refuses it
    /// is logged (its clients will be refused later).
    pub fn initialize_application(
        &self,
        application: &str,
        user: &str,
        service_data: &[(String, Bytes)],
    ) {
        for (name, data) in service_data {
            let Some(service) = self.get(name) else {
                continue;
            };
            if let Err(e) = service.initialize_application(application, user, data) {
                tracing::warn!(%application, service = %name, error = %e, "auxiliary service refused the application");
            }
        }
    }

    pub fn stop_application(&self, application: &str) {
        for service in &self.services {
            service.stop_application(application);
        }
    }

    /// Every service's meta data, by name.
    pub fn meta_data(&self) -> Vec<(String, Bytes)> {
        self.services
            .iter()
            .map(|s| (s.name().to_string(), s.meta_data()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what it is told.
    #[derive(Default)]
    struct Recorder {
        calls: Mutex<Vec<String>>,
    }

    impl AuxService for Recorder {
        fn name(&self) -> &str {
            "recorder"
        }

        fn initialize_application(
            &self,
            application: &str,
            user: &str,
            data: &[u8],
        ) -> Result<(), NodeManagerError> {
            self.calls.lock().unwrap().push(format!(
                "init {application} {user} {}",
                String::from_utf8_lossy(data)
            ));
            Ok(())
        }

        fn stop_application(&self, application: &str) {
            self.calls
                .lock()
                .unwrap()
                .push(format!("stop {application}"));
        }

        fn meta_data(&self) -> Bytes {
            Bytes::from_static(b"\x00\x00\x35\x0a")
        }
    }

    #[test]
    fn named_services_get_their_data_and_unknown_names_are_refused() {
        let recorder = Arc::new(Recorder::default());
        let services = AuxServices::new(vec![recorder.clone()]);
        let data = vec![("recorder".to_string(), Bytes::from_static(b"token"))];
        services.check(&data).unwrap();
        services.initialize_application("application_1_0001", "alice", &data);
        services.stop_application("application_1_0001");
        assert_eq!(
            *recorder.calls.lock().unwrap(),
            [
                "init application_1_0001 alice token",
                "stop application_1_0001"
            ]
        );
        assert_eq!(
            services.meta_data(),
            [(
                "recorder".to_string(),
                Bytes::from_static(b"\x00\x00\x35\x0a")
            )]
        );
        let unknown = vec![("mapreduce_shuffle".to_string(), Bytes::new())];
        let e = services.check(&unknown).unwrap_err();
        assert_eq!(
            e.to_string(),
            "The auxService:mapreduce_shuffle does not exist"
        );
        assert_eq!(
            e.java_class(),
            "org.apache.hadoop.yarn.exceptions.InvalidAuxServiceException"
        );
    }
}

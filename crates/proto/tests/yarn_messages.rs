//! Hadoop's YARN messages decode with Hadoop's proto2 defaults, so a field a Java client
//! leaves unset reads as Hadoop would read it.

use prost::Message;
use tusk_proto::hadoop::yarn::{
    ApplicationSubmissionContextProto, ContainerLaunchContextProto, LocalResourceProto,
    PriorityProto, ResourceProto, ResourceRequestProto, StringLocalResourceMapProto, UrlProto,
};

#[test]
fn resource_request_without_relax_locality_decodes_as_relaxed() {
    let ask = ResourceRequestProto {
        priority: Some(PriorityProto { priority: Some(20) }),
        resource_name: Some("*".to_string()),
        capability: Some(ResourceProto {
            memory: Some(1024),
            virtual_cores: Some(1),
            resource_value_map: vec![],
        }),
        num_containers: Some(3),
        ..Default::default()
    };
    let bytes = ask.encode_to_vec();
    let decoded = ResourceRequestProto::decode(bytes.as_slice()).unwrap();
    assert_eq!(decoded.relax_locality, None, "not on the wire");
    assert!(decoded.relax_locality(), "Hadoop's default is true");
    assert_eq!(decoded.allocation_request_id(), -1);
    assert_eq!(decoded.num_containers(), 3);
    assert_eq!(decoded.capability.unwrap().memory(), 1024);

    let strict = ResourceRequestProto {
        relax_locality: Some(false),
        ..Default::default()
    };
    let decoded = ResourceRequestProto::decode(strict.encode_to_vec().as_slice()).unwrap();
    assert!(!decoded.relax_locality());
}

#[test]
fn submission_context_defaults_and_launch_context_round_trip() {
    let launch = ContainerLaunchContextProto {
        local_resources: vec![StringLocalResourceMapProto {
            key: Some("job.jar".to_string()),
            value: Some(LocalResourceProto {
                resource: Some(UrlProto {
                    scheme: Some("hdfs".to_string()),
                    host: Some("nn".to_string()),
                    port: Some(8020),
                    file: Some("/staging/job.jar".to_string()),
                    user_info: None,
                }),
                size: Some(42),
                timestamp: Some(7),
                ..Default::default()
            }),
        }],
        command: vec!["$JAVA_HOME/bin/java".to_string()],
        ..Default::default()
    };
    let ctx = ApplicationSubmissionContextProto {
        am_container_spec: Some(launch.clone()),
        ..Default::default()
    };
    let decoded =
        ApplicationSubmissionContextProto::decode(ctx.encode_to_vec().as_slice()).unwrap();
    assert_eq!(decoded.queue(), "default");
    assert_eq!(decoded.application_type(), "YARN");
    assert_eq!(decoded.application_name(), "N/A");
    assert!(decoded.cancel_tokens_when_complete());
    assert_eq!(decoded.attempt_failures_validity_interval(), -1);
    assert_eq!(decoded.am_container_spec, Some(launch));
}

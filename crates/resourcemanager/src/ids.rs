//! YARN's id formats: `application_<clusterTimestamp>_<seq>`,
//! `appattempt_<clusterTimestamp>_<seq>_<attempt>`,
//! `container_<clusterTimestamp>_<seq>_<attempt>_<n>`. A MapReduce job of application
//! `application_T_S` is `job_T_S`.

pub fn application_id(cluster_ts: u64, seq: u32) -> String {
    format!("application_{cluster_ts}_{seq:04}")
}

pub fn attempt_id(application: &str, attempt: u32) -> String {
    let rest = application
        .strip_prefix("application_")
        .unwrap_or(application);
    format!("appattempt_{rest}_{attempt:06}")
}

pub fn container_id(application: &str, attempt: u32, n: u64) -> String {
    let rest = application
        .strip_prefix("application_")
        .unwrap_or(application);
    format!("container_{rest}_{attempt:02}_{n:06}")
}

/// `application_T_S` → S.
pub fn application_seq(application: &str) -> Option<u32> {
    application.rsplit_once('_')?.1.parse().ok()
}

/// `appattempt_T_S_A` → (`application_T_S`, A).
pub fn parse_attempt_id(attempt: &str) -> Option<(String, u32)> {
    let rest = attempt.strip_prefix("appattempt_")?;
    let (app, n) = rest.rsplit_once('_')?;
    Some((format!("application_{app}"), n.parse().ok()?))
}

/// `container_T_S_A_N` → (`application_T_S`, A).
pub fn parse_container_id(container: &str) -> Option<(String, u32)> {
    let rest = container.strip_prefix("container_")?;
    let (attempt, _) = rest.rsplit_once('_')?;
    let (app, n) = attempt.rsplit_once('_')?;
    Some((format!("application_{app}"), n.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_yarn() {
        let app = application_id(1700000000000, 7);
        assert_eq!(app, "application_1700000000000_0007");
        let att = attempt_id(&app, 1);
        assert_eq!(att, "appattempt_1700000000000_0007_000001");
        assert_eq!(parse_attempt_id(&att), Some((app.clone(), 1)));
        assert_eq!(
            container_id(&app, 1, 2),
            "container_1700000000000_0007_01_000002"
        );
        assert_eq!(parse_attempt_id("container_1_2"), None);
        assert_eq!(
            parse_container_id(&container_id(&app, 3, 1_000_001)),
            Some((app.clone(), 3))
        );
        assert_eq!(parse_container_id("appattempt_1_2_3"), None);
    }
}

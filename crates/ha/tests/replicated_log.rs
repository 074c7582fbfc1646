//! A replicated log of three (or more) members in one process: elections, replication,
//! failover on a stopped or partitioned leader, recovery from disk, snapshots, learners.

use std::time::{Duration, Instant};

use tusk_common::wait::wait_for;
use tusk_ha::group::LocalGroup;
use tusk_ha::{HaError, ReplicatedLogOptions, Role};

const WAIT: Duration = Duration::from_secs(20);

fn options() -> ReplicatedLogOptions {
    ReplicatedLogOptions {
        heartbeat_interval_ms: 100,
        election_timeout_min_ms: 500,
        election_timeout_max_ms: 1000,
        append_timeout_ms: 3000,
        ..Default::default()
    }
}

/// A group of `voters` and `learners` in a fresh directory, once it has a leader.
async fn started(
    voters: u64,
    learners: u64,
    options: ReplicatedLogOptions,
) -> (tempfile::TempDir, LocalGroup, u64) {
    let dir = tempfile::tempdir().unwrap();
    let group = LocalGroup::start(voters, learners, dir.path(), options)
        .await
        .unwrap();
    let leader = group.wait_leader(WAIT, |_| true).await.unwrap();
    (dir, group, leader)
}

fn record(tag: &str, i: u64) -> Vec<u8> {
    format!("{tag}-{i}").into_bytes()
}

/// Appends `n` records tagged `tag` at `leader` concurrently; returns their indexes.
async fn append_all(group: &LocalGroup, leader: u64, tag: &str, n: u64) -> Vec<u64> {
    let pending: Vec<_> = (0..n)
        .map(|i| group.node(leader).append(record(tag, i)))
        .collect();
    let mut indexes = Vec::new();
    for p in pending {
        match p.await {
            Ok(i) => indexes.push(i),
            Err(e) => {
                for id in group.running() {
                    let status = group.node(id).status().borrow().clone();
                    eprintln!("member {id}: {status:?}, {:?}", group.node(id).progress());
                }
                panic!("append at the leader {leader}: {e:?}");
            }
        }
    }
    indexes
}

/// Waits until every member in `ids` has applied `n` records, all the same.
async fn wait_applied_everywhere(group: &LocalGroup, ids: &[u64], n: u64) {
    wait_for("every member to apply the records", WAIT, || async {
        ids.iter().all(|id| group.machine(*id).len() == n)
    })
    .await
    .unwrap();
    let first = group.machine(ids[0]).records();
    for id in ids {
        assert_eq!(
            group.machine(*id).records(),
            first,
            "member {id} applied another history"
        );
        assert_eq!(
            group.machine(*id).out_of_order(),
            None,
            "member {id} applied out of order"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_members_elect_a_leader_and_apply_appends_in_order_everywhere() {
    let (_dir, group, leader) = started(3, 0, options()).await;

    let indexes = append_all(&group, leader, "a", 300).await;
    assert_eq!(
        indexes,
        (1..=300).collect::<Vec<_>>(),
        "indexes in append order"
    );
    wait_applied_everywhere(&group, &group.ids(), 300).await;
    assert_eq!(group.machine(leader).records()[41], record("a", 41));

    // Concurrent appenders shared log entries (and so fsyncs).
    let entries = group.node(leader).progress().last_entry.unwrap();
    assert!(
        entries < 150,
        "{entries} log entries for 300 records: no group commit"
    );

    for id in group.ids().into_iter().filter(|id| *id != leader) {
        let status = group.node(id).status().borrow().clone();
        assert_eq!(status.role, Role::Follower);
        assert_eq!(status.term, group.node(leader).status().borrow().term);
        match group.node(id).append(b"x".to_vec()).await {
            Err(HaError::NotLeader {
                leader: Some(hint), ..
            }) => {
                assert_eq!(hint.id, leader);
                assert_eq!(hint.address, group.node(leader).address().to_string());
            }
            other => panic!("append at follower {id}: {other:?}"),
        }
    }
    group.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stopped_leader_is_replaced_within_seconds_and_no_acknowledged_record_is_lost() {
    let (_dir, mut group, old) = started(3, 0, options()).await;
    append_all(&group, old, "before", 100).await;

    group.stop(old).await.unwrap();
    let stopped = Instant::now();
    let new = group.wait_leader(WAIT, |id| id != old).await.unwrap();
    let took = stopped.elapsed();
    eprintln!("leader {old} stopped: member {new} leads after {took:?}");
    assert!(took < Duration::from_secs(5), "a new leader after {took:?}");

    // Every acknowledged record is on the new majority, and writes resume.
    let survivors: Vec<u64> = group.running();
    append_all(&group, new, "after", 50).await;
    wait_applied_everywhere(&group, &survivors, 150).await;
    let records = group.machine(new).records();
    assert!((0..100).all(|i| records[i as usize] == record("before", i)));

    // The old leader comes back as a follower and catches up.
    group.restart(old).await.unwrap();
    wait_applied_everywhere(&group, &group.ids(), 150).await;
    assert_ne!(group.node(old).status().borrow().role, Role::Leader);
    group.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partitioned_leader_cannot_commit_and_the_majority_keeps_every_acknowledged_record() {
    let (_dir, group, old) = started(3, 0, options()).await;
    append_all(&group, old, "before", 40).await;

    let others: Vec<u64> = group.ids().into_iter().filter(|id| *id != old).collect();
    group.links.isolate(old, others.clone());
    let cut = Instant::now();
    let new = group.wait_leader(WAIT, |id| id != old).await.unwrap();
    let took = cut.elapsed();
    eprintln!("leader {old} cut off: member {new} leads after {took:?}");
    assert!(took < Duration::from_secs(5), "a new leader after {took:?}");

    // The old leader may still believe it leads, but nothing it takes commits.
    let minority = group.node(old).append(b"minority".to_vec()).await;
    assert!(
        minority.is_err(),
        "the minority acknowledged a record: {minority:?}"
    );
    assert!(
        !group.node(old).holds_lease(),
        "a cut-off leader holds no lease"
    );

    append_all(&group, new, "after", 30).await;
    assert!(group.node(new).status().borrow().term > 1);

    group.links.heal();
    wait_applied_everywhere(&group, &group.ids(), 70).await;
    for id in group.ids() {
        assert!(
            !group.machine(id).records().contains(&b"minority".to_vec()),
            "member {id} applied the minority's record"
        );
    }
    wait_for("the old leader to follow", WAIT, || async {
        group.node(old).status().borrow().role == Role::Follower
    })
    .await
    .unwrap();
    group.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restarted_member_recovers_its_log_from_disk_and_catches_up() {
    let (_dir, mut group, leader) = started(3, 0, options()).await;
    append_all(&group, leader, "a", 60).await;
    let member = group.ids().into_iter().find(|id| *id != leader).unwrap();
    wait_applied_everywhere(&group, &group.ids(), 60).await;
    let held = group.node(member).progress().last_entry;

    group.stop(member).await.unwrap();
    append_all(&group, leader, "b", 20).await;
    // Restarted cut off: what it holds can only come from its own disk.
    let others: Vec<u64> = group.ids().into_iter().filter(|id| *id != member).collect();
    group.links.isolate(member, others);
    group.restart(member).await.unwrap();
    wait_for("the log to be recovered from disk", WAIT, || async {
        group.node(member).progress().last_entry == held
    })
    .await
    .unwrap();

    group.links.heal();
    wait_applied_everywhere(&group, &group.ids(), 80).await;
    group.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_behind_the_compacted_log_gets_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let small_snapshots = ReplicatedLogOptions {
        snapshot_after_entries: 10,
        entries_kept_after_snapshot: 0,
        ..options()
    };
    let mut group = LocalGroup::start(3, 0, dir.path(), small_snapshots)
        .await
        .unwrap();
    let leader = group.wait_leader(WAIT, |_| true).await.unwrap();
    let lagging = group.ids().into_iter().find(|id| *id != leader).unwrap();
    group.stop(lagging).await.unwrap();

    // One append at a time: one log entry each, so the log passes several snapshots.
    for i in 0..40 {
        group.node(leader).append(record("s", i)).await.unwrap();
    }
    wait_for("the leader to compact its log", WAIT, || async {
        group
            .node(leader)
            .progress()
            .purged_entry
            .is_some_and(|p| p >= 20)
    })
    .await
    .unwrap();

    group.restart(lagging).await.unwrap();
    wait_applied_everywhere(&group, &group.ids(), 40).await;
    assert!(
        group.machine(lagging).installs() >= 1,
        "caught up by a snapshot"
    );

    // A restart loads the member's own snapshot, then replays the log after it.
    group.stop(leader).await.unwrap();
    group.restart(leader).await.unwrap();
    wait_applied_everywhere(&group, &group.ids(), 40).await;
    group.shutdown().await.unwrap();
}

/// The last segment file of member `id`.
fn last_segment(root: &std::path::Path, id: u64) -> std::path::PathBuf {
    let mut segments: Vec<_> = std::fs::read_dir(root.join(format!("node-{id}/log")))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    segments.sort();
    segments.pop().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_torn_tail_is_cut_at_start_and_a_corrupt_middle_entry_is_refused() {
    let (dir, mut group, leader) = started(3, 0, options()).await;
    append_all(&group, leader, "a", 30).await;
    wait_applied_everywhere(&group, &group.ids(), 30).await;
    let member = group.ids().into_iter().find(|id| *id != leader).unwrap();
    group.stop(member).await.unwrap();

    // A write that never finished: junk after the last entry, past the zero fill.
    let segment = last_segment(dir.path(), member);
    let mut torn = std::fs::read(&segment).unwrap();
    let junk = [0, 0, 1, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0];
    torn.extend_from_slice(&junk);
    std::fs::write(&segment, &torn).unwrap();
    group.restart(member).await.unwrap();
    let cut = std::fs::read(&segment).unwrap();
    assert!(
        cut.len() < torn.len() && !cut.ends_with(&junk),
        "torn tail cut"
    );
    append_all(&group, leader, "b", 10).await;
    wait_applied_everywhere(&group, &group.ids(), 40).await;

    // Damage with entries after it is refused, not skipped.
    group.stop(member).await.unwrap();
    let segment = last_segment(dir.path(), member);
    let mut data = std::fs::read(&segment).unwrap();
    data[20] ^= 0xff;
    std::fs::write(&segment, &data).unwrap();
    match group.restart(member).await {
        Err(HaError::CorruptLog { .. }) => {}
        Err(other) => panic!("wrong error for a corrupt entry: {other}"),
        Ok(()) => panic!("a member started over a corrupt entry"),
    }
    group.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_steps_down_to_another_member() {
    let (_dir, group, old) = started(3, 0, options()).await;
    append_all(&group, old, "a", 10).await;
    let term = group.node(old).status().borrow().term;

    let new = group.node(old).step_down().await.unwrap();
    assert_ne!(new.id, old);
    let status = group.node(old).status().borrow().clone();
    assert_ne!(status.role, Role::Leader);
    assert!(
        status.term > term,
        "the new leader's term fences the old one"
    );
    let leader = group.wait_leader(WAIT, |_| true).await.unwrap();
    append_all(&group, leader, "b", 10).await;
    wait_applied_everywhere(&group, &group.ids(), 20).await;
    group.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_learner_follows_the_log_without_voting_and_reads_its_writes_after_read_index() {
    let (_dir, group, leader) = started(3, 1, options()).await;
    let learner = 4;
    wait_for("the learner to hear from the leader", WAIT, || async {
        let status = group.node(learner).status().borrow().clone();
        status.role == Role::Learner && status.leader.is_some_and(|l| l.id == leader)
    })
    .await
    .unwrap();

    append_all(&group, leader, "a", 25).await;
    // msync: the leader's read index, then wait until the learner has applied it.
    let index = group.node(leader).read_index().await.unwrap();
    assert!(index >= 25);
    group.node(learner).wait_applied(index, WAIT).await.unwrap();
    assert_eq!(group.machine(learner).records()[24], record("a", 24));
    assert!(matches!(
        group.node(learner).append(b"x".to_vec()).await,
        Err(HaError::NotLeader { .. })
    ));
    assert!(matches!(
        group.node(learner).read_index().await,
        Err(HaError::NotLeader { .. })
    ));
    group.shutdown().await.unwrap();
}

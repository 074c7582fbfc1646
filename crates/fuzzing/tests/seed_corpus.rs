//! The seeds behind `fuzz/corpus/`: each target's seeds run cleanly, and the committed
//! corpus holds a file for each. `TUSK_WRITE_CORPUS=1` (re)writes the seed files.

use std::path::PathBuf;

use tusk_fuzzing::TARGETS;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

#[test]
fn every_target_has_seeds_that_run_and_are_in_the_corpus() {
    let write = std::env::var_os("TUSK_WRITE_CORPUS").is_some();
    for target in TARGETS {
        let seeds = (target.seeds)();
        assert!(!seeds.is_empty(), "{} has no seeds", target.name);
        let dir = corpus_dir(target.name);
        for (name, bytes) in &seeds {
            (target.run)(bytes);
            let path = dir.join(format!("seed-{name}"));
            if write {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, bytes).unwrap();
            } else {
                assert!(
                    path.exists(),
                    "{} missing: run TUSK_WRITE_CORPUS=1 cargo test -p tusk-fuzzing --test seed_corpus",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn connection_seeds_are_served_to_the_end() {
    for (name, bytes) in tusk_fuzzing::rpc::seeds() {
        if bytes[0] < 0x80 {
            tusk_fuzzing::rpc::serve_result(&bytes[1..])
                .unwrap_or_else(|e| panic!("seed {name}: {e}"));
        }
    }
}

/// Seeds whose calls the servers refuse would start the fuzzer off in error paths.
#[test]
fn method_seeds_are_calls_the_servers_accept() {
    for (name, bytes) in tusk_fuzzing::namenode::method_seeds() {
        for (i, result) in tusk_fuzzing::namenode::method_results(&bytes)
            .into_iter()
            .enumerate()
        {
            if let Err(e) = result {
                panic!("namenode seed {name}, call {i}: {e}");
            }
        }
    }
    // An application's life only makes sense in order; single calls on an empty
    // cluster are refused by design.
    for (name, bytes) in tusk_fuzzing::resourcemanager::seeds() {
        if !name.starts_with("application-life") {
            continue;
        }
        for (i, result) in tusk_fuzzing::resourcemanager::method_results(&bytes)
            .into_iter()
            .enumerate()
        {
            if let Err(e) = result {
                panic!("resourcemanager seed {name}, call {i}: {e}");
            }
        }
    }
}

/// The edit-log seeds are whole logs: every record replays.
#[test]
fn edit_log_seeds_replay_every_record() {
    for (name, bytes) in tusk_fuzzing::namenode::edit_log_seeds() {
        let applied = tusk_fuzzing::namenode::replay(&bytes);
        assert!(applied >= 15, "seed {name}: {applied} records applied");
    }
}

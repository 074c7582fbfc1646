//! Compiles every `.proto` under `proto/` with a vendored `protoc`, so a fresh machine
//! needs no system protobuf compiler.

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from("proto");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("proto directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    files.sort();
    println!("cargo:rerun-if-changed=proto");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("vendored protoc");
    std::env::set_var("PROTOC", protoc);
    let mut config = prost_build::Config::new();
    config.bytes(["."]);
    config
        .compile_protos(&files, &[dir])
        .expect("compile protos");
}

//! A map's partitioned output served over HTTP the way a NodeManager's shuffle server
//! does (reading the index), fetched with `HttpShuffle`: same bytes as a local read,
//! sorted records after decompression, and a clear error for a missing partition.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;

use tusk_mapreduce::jobs::library::HashPartitioner;
use tusk_mapreduce::map_output::{read_segment, MapOutputCollector};
use tusk_mapreduce::record::{Run, SliceRun};
use tusk_mapreduce::shuffle::RAW_LENGTH_HEADER;
use tusk_mapreduce::{
    Codec, Emitter, HttpShuffle, JobId, LocalShuffle, MapOutputLocation, MapReduceError,
    ShuffleSource, TaskType,
};

const PARTITIONS: u32 = 4;

/// Serves `requests` requests for map outputs in `dir`, then stops.
fn serve(listener: TcpListener, dir: PathBuf, requests: usize) {
    for stream in listener.incoming().take(requests) {
        let mut stream = stream.unwrap();
        let mut line = String::new();
        let mut reader = BufReader::new(&stream);
        reader.read_line(&mut line).unwrap();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).unwrap();
            if h.trim().is_empty() {
                break;
            }
        }
        let path = line.split_whitespace().nth(1).unwrap().to_string();
        assert!(path.starts_with("/mapOutput?job=job_"), "{path}");
        let reduce: u32 = path.rsplit("reduce=").next().unwrap().parse().unwrap();
        match read_segment(&dir, reduce) {
            Ok((index, part)) => {
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n{RAW_LENGTH_HEADER}: {}\r\n\r\n",
                    part.len(),
                    index.raw_length
                )
                .unwrap();
                stream.write_all(&part).unwrap();
            }
            Err(e) => {
                let body = e.to_string();
                write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
        }
    }
}

#[test]
fn http_fetch_equals_local_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut collector = MapOutputCollector::new(
        dir.path(),
        PARTITIONS,
        Box::new(HashPartitioner),
        None,
        8 << 10,
        Codec::Lz4,
        10,
    );
    for i in 0..20_000u32 {
        let key = format!("key-{:05}", (i * 7919) % 20_000);
        collector.emit(key.as_bytes(), &i.to_be_bytes()).unwrap();
    }
    let (output, _) = collector.finish().unwrap();
    assert_eq!(output.index.len(), PARTITIONS as usize);

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let served = dir.path().to_path_buf();
    let server = std::thread::spawn(move || serve(listener, served, PARTITIONS as usize + 1));

    let job = JobId {
        cluster_ts: 1,
        seq: 1,
    };
    let location = MapOutputLocation {
        attempt: job.task(TaskType::Map, 0).attempt(0),
        shuffle_addr: addr,
        local_dir: Some(dir.path().to_path_buf()),
        partition_bytes: Vec::new(),
    };
    let mut records = 0;
    for p in 0..PARTITIONS {
        let http = HttpShuffle::default().fetch(&location, p).unwrap();
        let local = LocalShuffle.fetch(&location, p).unwrap();
        assert_eq!(http.part, local.part, "partition {p}");
        assert_eq!(http.raw_length, local.raw_length);
        assert!(
            http.part.len() < http.raw_length as usize,
            "lz4 compressed partition {p}"
        );
        let raw = Codec::Lz4.decompress(&http.part, http.raw_length).unwrap();
        let mut run = SliceRun::new(raw);
        let mut last = Vec::new();
        while run.advance().unwrap() {
            assert!(run.key() >= last.as_slice(), "sorted within partition {p}");
            last = run.key().to_vec();
            records += 1;
        }
    }
    assert_eq!(records, 20_000);
    match HttpShuffle::default().fetch(&location, PARTITIONS) {
        Err(MapReduceError::Shuffle { message, .. }) => {
            assert!(message.contains("404"), "{message}")
        }
        other => panic!("want a shuffle error, got {other:?}"),
    }
    server.join().unwrap();
}

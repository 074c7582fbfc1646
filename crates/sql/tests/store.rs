//! The DFS object store against an in-process cluster with 1 MiB blocks: ranged and
//! concurrent reads across block boundaries, conditional puts, uploads that appear only
//! when completed, listings, copy, rename, delete, and Hadoop's errors as object store
//! errors; then DataFusion reading a Parquet file it wrote through the store.

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use tusk_cluster::MiniCluster;
use tusk_sql::{DfsStore, SqlSession};

const MIB: usize = 1 << 20;

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

/// One DataNode, replication 1 and 1 MiB blocks: a few MiB span several blocks.
async fn one_datanode_cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(1)
        .block_size(MIB as u64)
        .conf("dfs.replication", "1")
        .start()
        .await
}

/// Runs `sql` and renders its rows as DataFusion's pretty table.
async fn table_of(session: &SqlSession, sql: &str) -> String {
    let rows = session.run(sql).await.unwrap();
    tusk_sql::datafusion::arrow::util::pretty::pretty_format_batches(&rows)
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_reads_writes_and_lists_the_dfs() {
    let cluster = one_datanode_cluster().await;
    let store = DfsStore::new(cluster.client());
    let data = pattern(3 * MIB + 123);
    let file = Path::from("t/data.bin");
    store
        .put(&file, PutPayload::from(data.clone()))
        .await
        .unwrap();

    // Ranges inside one block, across a block boundary, and to the end.
    let across = (MIB as u64 - 10)..(MIB as u64 + 10);
    assert_eq!(
        store.get_range(&file, across.clone()).await.unwrap(),
        data[across.start as usize..across.end as usize]
    );
    let ranges = vec![
        0..5,
        (2 * MIB as u64 - 1)..(2 * MIB as u64 + 1),
        (3 * MIB as u64)..(3 * MIB as u64 + 123),
    ];
    let got = store.get_ranges(&file, &ranges).await.unwrap();
    for (r, bytes) in ranges.iter().zip(&got) {
        assert_eq!(bytes, &data[r.start as usize..r.end as usize]);
    }
    assert_eq!(store.head(&file).await.unwrap().size, data.len() as u64);
    let whole = store.get(&file).await.unwrap().bytes().await.unwrap();
    assert_eq!(whole, Bytes::from(data.clone()));

    // Create-only puts refuse an existing object; missing objects are NotFound.
    let again = store
        .put_opts(
            &file,
            PutPayload::from_static(b"x"),
            PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            },
        )
        .await;
    assert!(
        matches!(again, Err(object_store::Error::AlreadyExists { .. })),
        "{again:?}"
    );
    let missing = store.get(&Path::from("t/none")).await;
    assert!(
        matches!(missing, Err(object_store::Error::NotFound { .. })),
        "{missing:?}"
    );

    // An upload is invisible until completed; an aborted one leaves nothing.
    let mut upload = store.put_multipart(&Path::from("t/up.bin")).await.unwrap();
    upload
        .put_part(PutPayload::from(pattern(MIB)))
        .await
        .unwrap();
    upload
        .put_part(PutPayload::from_static(b"tail"))
        .await
        .unwrap();
    assert!(store.head(&Path::from("t/up.bin")).await.is_err());
    upload.complete().await.unwrap();
    assert_eq!(
        store.head(&Path::from("t/up.bin")).await.unwrap().size,
        MIB as u64 + 4
    );
    let mut aborted = store
        .put_multipart(&Path::from("t/gone.bin"))
        .await
        .unwrap();
    aborted
        .put_part(PutPayload::from_static(b"never"))
        .await
        .unwrap();
    aborted.abort().await.unwrap();

    // Copy, rename, listings, delete.
    store
        .copy(&file, &Path::from("t/sub/copy.bin"))
        .await
        .unwrap();
    store
        .rename(&Path::from("t/up.bin"), &Path::from("t/sub/moved.bin"))
        .await
        .unwrap();
    let mut all: Vec<String> = store
        .list(Some(&Path::from("t")))
        .map_ok(|m| m.location.to_string())
        .try_collect()
        .await
        .unwrap();
    all.sort();
    assert_eq!(all, ["t/data.bin", "t/sub/copy.bin", "t/sub/moved.bin"]);
    let top = store
        .list_with_delimiter(Some(&Path::from("t")))
        .await
        .unwrap();
    assert_eq!(top.common_prefixes, [Path::from("t/sub")]);
    assert_eq!(top.objects.len(), 1);
    let taken = store
        .rename_if_not_exists(&Path::from("t/data.bin"), &Path::from("t/sub/moved.bin"))
        .await;
    assert!(
        matches!(&taken, Err(object_store::Error::AlreadyExists { path, .. }) if path == "/t/sub/moved.bin"),
        "{taken:?}"
    );
    assert!(
        store.head(&file).await.is_ok(),
        "a refused rename leaves the source"
    );
    store.delete(&Path::from("t/sub/copy.bin")).await.unwrap();
    assert!(store.head(&Path::from("t/sub/copy.bin")).await.is_err());

    // DataFusion through the store: Parquet written to the DFS and read back.
    let session = SqlSession::new(&cluster.client_conf()).unwrap();
    let uri = cluster.fs_uri();
    session
        .run(&format!(
            "COPY (SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c')) AS v(n, s)) \
             TO '{uri}/pq/v.parquet' STORED AS PARQUET"
        ))
        .await
        .unwrap();
    let text = table_of(
        &session,
        &format!("SELECT sum(n) AS total FROM '{uri}/pq/v.parquet'"),
    )
    .await;
    assert!(text.contains("| 6 "), "{text}");
}

/// A file deleted after a query is planned (its files listed) and before it reads them
/// fails that query with an error naming the file; the session goes on answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_deleted_mid_query_fails_that_query_cleanly() {
    let cluster = one_datanode_cluster().await;
    let session = SqlSession::new(&cluster.client_conf()).unwrap();
    let uri = cluster.fs_uri();
    for part in 0..3 {
        session
            .run(&format!(
                "COPY (SELECT value AS n FROM generate_series({}, {})) \
                 TO '{uri}/del/part-{part}.parquet' STORED AS PARQUET",
                part * 1000 + 1,
                part * 1000 + 1000
            ))
            .await
            .unwrap();
    }
    session
        .run(&format!(
            "CREATE EXTERNAL TABLE del STORED AS PARQUET LOCATION '{uri}/del/'"
        ))
        .await
        .unwrap();
    let query = session
        .sql("SELECT sum(n) AS total FROM del")
        .await
        .unwrap();
    let plan = query.create_physical_plan().await.unwrap();
    DfsStore::new(cluster.client())
        .delete(&Path::from("del/part-1.parquet"))
        .await
        .unwrap();
    let ctx = session.context().task_ctx();
    let failed = tusk_sql::datafusion::physical_plan::collect(plan, ctx).await;
    let message = failed
        .expect_err("a deleted file fails the query")
        .to_string();
    assert!(message.contains("part-1.parquet"), "{message}");

    // The next query lists the files again and answers from the two left.
    let text = table_of(&session, "SELECT sum(n) AS total FROM del").await;
    let want: u64 = (1..=1000).chain(2001..=3000).sum();
    assert!(text.contains(&format!("| {want} ")), "{text}");
}

//! `tusk sql` through the real binary against a local cluster: `-e`, `-f`, `--format
//! csv`, `CREATE TABLE ... AS` persisting Parquet in the warehouse and read back, and
//! a syntax error reported with its position.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use local_cluster::{stderr, stdout, tusk, Cluster};

#[test]
fn sql_statements_results_and_warehouse_tables() {
    let c = Cluster::up(1);
    let sql = |args: &[&str]| {
        let mut all = vec!["-D", "tusk.sql.warehouse.dir=/wh", "sql"];
        all.extend_from_slice(args);
        tusk(c.home(), &all)
    };

    let one = sql(&["-e", "SELECT 1 + 2 AS three", "--format", "csv"]);
    assert!(one.status.success(), "{}", stderr(&one));
    assert_eq!(stdout(&one), "three\n3\n");

    let ctas = sql(&[
        "-e",
        "CREATE TABLE squares AS SELECT v, v * v AS sq FROM (VALUES (1), (2), (3)) AS t(v)",
    ]);
    assert!(ctas.status.success(), "{}", stderr(&ctas));
    let ls = stdout(&c.fs(&["-ls", "-R", "/wh"]));
    assert!(ls.contains("/wh/squares/"), "{ls}");
    assert!(ls.contains(".parquet"), "{ls}");

    // A new process reads the table back from the warehouse location.
    let file = c.dir.path().join("q.sql");
    std::fs::write(
        &file,
        "CREATE EXTERNAL TABLE s STORED AS PARQUET LOCATION 'hdfs:///wh/squares/';\n\
         SELECT sum(sq) AS total FROM s;\n",
    )
    .unwrap();
    let read = sql(&["-f", file.to_str().unwrap(), "--format", "csv"]);
    assert!(read.status.success(), "{}", stderr(&read));
    assert_eq!(stdout(&read), "total\n14\n");

    let table = sql(&["-e", "SELECT 'a' AS x"]);
    assert!(stdout(&table).contains("| x |"), "{}", stdout(&table));

    let bad = sql(&["-e", "SELEC 1"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("Line: 1, Column: 1"),
        "{}",
        stderr(&bad)
    );

    let missing = sql(&["-e", "SELECT * FROM nowhere"]);
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("nowhere"), "{}", stderr(&missing));
    assert_eq!(
        stderr(&missing).matches("nowhere").count(),
        1,
        "the message once, not a chain repeating it: {}",
        stderr(&missing)
    );

    // A location without a scheme is on the cluster's file system, as a Hadoop path is;
    // COPY writes there and a quoted hdfs:/// URL reads a file directly.
    let copied = sql(&[
        "-e",
        "CREATE EXTERNAL TABLE s STORED AS PARQUET LOCATION '/wh/squares/';\n\
         COPY (SELECT v FROM s WHERE sq > 1) TO '/out/big.parquet' STORED AS PARQUET",
    ]);
    assert!(copied.status.success(), "{}", stderr(&copied));
    assert!(stdout(&c.fs(&["-ls", "/out/big.parquet"])).contains("/out/big.parquet"));
    let direct = sql(&[
        "-e",
        "SELECT count(*) AS n FROM 'hdfs:///out/big.parquet'",
        "--format",
        "csv",
    ]);
    assert!(direct.status.success(), "{}", stderr(&direct));
    assert_eq!(stdout(&direct), "n\n2\n");
    let nowhere = sql(&[
        "-e",
        "CREATE EXTERNAL TABLE n STORED AS PARQUET LOCATION '/no/such/'",
    ]);
    assert!(
        stderr(&nowhere).contains("/no/such/"),
        "the missing location is named: {}",
        stderr(&nowhere)
    );
}

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.launcher.JavaModuleOptions;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

import scala.Tuple2;

/**
 * The Spark application scripts/compat-spark.sh submits to Tusk's YARN with Spark's own
 * SparkSubmit. Everything it computes goes to Tusk's DFS, so the script checks the same
 * output whether the driver ran on the client (client mode) or in the ApplicationMaster's
 * container (cluster mode).
 *
 * <p>{@code SparkOnTusk WORDS OUT ROWS} runs, in one application:
 *
 * <ul>
 *   <li>a word count of the text file(s) WORDS: OUT/counts holds "word\tcount" lines,
 *       OUT/containers the YARN containers (their CONTAINER_ID) that ran its tasks;
 *   <li>a DataFrame aggregation over Parquet: ROWS rows (id, key = id % 7) written as
 *       Parquet to OUT/parquet, read back, and "key\tcount\tsum(id)" lines of a
 *       groupBy(key) written to OUT/by-key.
 * </ul>
 *
 * <p>{@code SparkOnTusk module-options} prints the JVM options Spark needs on Java 17 (what
 * Spark's own launcher scripts add to the driver's command line).
 */
public class SparkOnTusk {
  public static void main(String[] args) {
    if (args.length == 1 && args[0].equals("module-options")) {
      System.out.println(JavaModuleOptions.defaultModuleOptions());
      return;
    }
    SparkSession spark = SparkSession.builder().appName("tusk-spark-compat").getOrCreate();
    try {
      wordCount(spark, args[0], args[1]);
      parquet(spark, Long.parseLong(args[2]), args[1]);
    } finally {
      spark.stop();
    }
  }

  static void wordCount(SparkSession spark, String in, String out) {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaRDD<String> lines = sc.textFile(in, 4);
    lines.flatMap(line -> Arrays.asList(line.split(" ")).iterator())
        .filter(word -> !word.isEmpty())
        .mapToPair(word -> new Tuple2<>(word, 1L))
        .reduceByKey(Long::sum, 2)
        .map(pair -> pair._1() + "\t" + pair._2())
        .saveAsTextFile(out + "/counts");
    lines.mapPartitions(
            partition -> {
              List<String> container = new ArrayList<>();
              container.add(String.valueOf(System.getenv("CONTAINER_ID")));
              return container.iterator();
            })
        .distinct(1)
        .saveAsTextFile(out + "/containers");
  }

  static void parquet(SparkSession spark, long rows, String out) {
    String dir = out + "/parquet";
    spark.range(0, rows, 1, 4)
        .withColumn("key", functions.col("id").mod(7))
        .write()
        .parquet(dir);
    Dataset<Row> counts =
        spark.read().parquet(dir).groupBy("key").agg(functions.count("*"), functions.sum("id"));
    counts
        .coalesce(1)
        .map(
            (MapFunction<Row, String>)
                row -> row.get(0) + "\t" + row.get(1) + "\t" + row.get(2),
            Encoders.STRING())
        .write()
        .text(out + "/by-key");
  }
}

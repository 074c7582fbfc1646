import java.io.IOException;
import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Binds Hadoop's FileSystem contract tests to a running cluster, named by
 * {@code fs.contract.test.fs.hdfs} (hdfs://HOST:PORT, set in the core-site.xml that
 * scripts/hadoop-contract.sh puts on the classpath), with HDFS's own contract options.
 * It plays the part of HDFS's HDFSContract, whose cluster is a MiniDFSCluster.
 */
public class TuskContract extends AbstractFSContract {
  public static final String FS_URI_KEY = "fs.contract.test.fs.hdfs";

  private FileSystem fs;

  public TuskContract(Configuration conf) {
    super(conf);
    addConfResource("contract/hdfs.xml");
  }

  @Override
  public void init() throws IOException {
    super.init();
    if (!isSupported(IS_CASE_SENSITIVE, false)) {
      throw new IOException("contract options not loaded (contract/hdfs.xml)");
    }
    String uri = getConf().getTrimmed(FS_URI_KEY, "");
    if (uri.isEmpty()) {
      throw new IOException(FS_URI_KEY + " is not set: no cluster to test");
    }
    fs = FileSystem.get(URI.create(uri), getConf());
  }

  @Override
  public FileSystem getTestFileSystem() {
    return fs;
  }

  @Override
  public String getScheme() {
    return "hdfs";
  }

  @Override
  public Path getTestPath() {
    return new Path("/test");
  }

  private static final String IS_CASE_SENSITIVE = "is-case-sensitive";
}

// Real Hadoop HDFS (1 NameNode + N DataNodes in one JVM) for side-by-side runs against
// Tusk, with the edit log fsync'd on every sync (MiniDFSCluster skips it by default) and
// one name directory, so both systems pay for the same durability.
// Usage: java -cp <hadoop classpath>:. HdfsWithFsync PORT DATANODES BASEDIR
import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

public class HdfsWithFsync {
  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    int datanodes = Integer.parseInt(args[1]);
    File base = new File(args[2]);
    Configuration conf = new HdfsConfiguration();
    conf.setBoolean("dfs.permissions.enabled", false);
    conf.setInt("dfs.namenode.handler.count", 300);
    conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    conf.set("dfs.namenode.name.dir", new File(base, "name").toURI().toString());
    conf.set("dfs.namenode.checkpoint.dir", new File(base, "secondary").toURI().toString());
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, base)
        .nameNodePort(port)
        .numDataNodes(datanodes)
        .skipFsyncForTesting(false)
        .manageNameDfsDirs(false)
        .build();
    cluster.waitActive();
    System.out.println("READY hdfs://127.0.0.1:" + port);
    System.out.flush();
    Thread.currentThread().join();
  }
}

// Hadoop's Java client as one writer of `tusk bench ha-failover`: small files under DIR,
// one after another, through org.apache.hadoop.fs.FileSystem on the default file system
// (hdfs://ns1 with ConfiguredFailoverProxyProvider, from the *-site.xml files ahead on
// the classpath). Prints `begin <path> <epoch_ms>` before a file's create,
// `ok <path> <epoch_ms>` once its close returned, and `err <epoch_ms> <message>` for a
// file that failed, then goes on with the next file after a short pause, so an
// exception that outlasts the client's own retries does not end the run. Runs until
// killed.
//
// File N is DIR/fNNNNNN: its path and a newline, then byte i = (31 i + 17 N + 7 (i >> 8))
// mod 256 up to LEN bytes (the bench checks every acknowledged file against this).
//
// Usage: java -cp CONF:JARS HaWriter.java DIR LEN INTERVAL_MS
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

public class HaWriter {
  static byte[] contents(String path, long n, int len) {
    byte[] b = new byte[len];
    byte[] header = (path + "\n").getBytes(StandardCharsets.UTF_8);
    System.arraycopy(header, 0, b, 0, Math.min(header.length, len));
    for (int i = header.length; i < len; i++) {
      b[i] = (byte) ((31L * i + 17L * n + 7L * (i >> 8)) & 0xff);
    }
    return b;
  }

  static String oneLine(Throwable e) {
    String m = e.getClass().getName() + ": " + e.getMessage();
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  public static void main(String[] args) throws Exception {
    String dir = args[0];
    int len = Integer.parseInt(args[1]);
    long interval = Long.parseLong(args[2]);
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    FileSystem fs = FileSystem.get(new Configuration());
    while (true) {
      try {
        fs.mkdirs(new Path(dir));
        break;
      } catch (Exception e) {
        out.println("err " + System.currentTimeMillis() + " mkdirs " + oneLine(e));
        Thread.sleep(500);
      }
    }
    for (long n = 0; ; n++) {
      String path = String.format("%s/f%06d", dir, n);
      byte[] data = contents(path, n, len);
      out.println("begin " + path + " " + System.currentTimeMillis());
      try {
        try (FSDataOutputStream s = fs.create(new Path(path), false)) {
          s.write(data);
        }
        out.println("ok " + path + " " + System.currentTimeMillis());
      } catch (Exception e) {
        out.println("err " + System.currentTimeMillis() + " " + path + " " + oneLine(e));
        Thread.sleep(200);
      }
      Thread.sleep(interval);
    }
  }
}

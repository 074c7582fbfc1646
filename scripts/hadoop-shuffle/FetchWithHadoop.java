import java.io.DataInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;

import javax.crypto.SecretKey;

import org.apache.hadoop.mapreduce.security.SecureShuffleUtils;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleHeader;

/**
 * Fetches map outputs from a shuffle server with Hadoop 3.4.2's own pieces, the way its
 * reducers' Fetcher does: the URL as ShuffleSchedulerImpl builds it, UrlHash from
 * SecureShuffleUtils, the name/version headers, the reply's headers and ReplyHash
 * checked with SecureShuffleUtils.verifyReply, each map read with ShuffleHeader.readFields.
 *
 * Usage: FetchWithHadoop HOST:PORT JOB REDUCE PASSWORD MAP[,MAP...]
 * Prints "status CODE" and, for a 200, one line per map:
 * "map MAPID reduce R compressed C uncompressed U data TEXT".
 */
public class FetchWithHadoop {
  public static void main(String[] args) throws Exception {
    String hostPort = args[0];
    String job = args[1];
    int reduce = Integer.parseInt(args[2]);
    SecretKey key = JobTokenSecretManager.createSecretKey(
        args[3].getBytes(StandardCharsets.UTF_8));
    String[] maps = args[4].split(",");

    URL url = new URL("http://" + hostPort + "/mapOutput?job=" + job + "&reduce=" + reduce
        + "&map=" + String.join(",", maps));
    String encHash = SecureShuffleUtils.hashFromString(SecureShuffleUtils.buildMsgFrom(url), key);
    HttpURLConnection connection = (HttpURLConnection) url.openConnection();
    connection.addRequestProperty(SecureShuffleUtils.HTTP_HEADER_URL_HASH, encHash);
    connection.addRequestProperty(ShuffleHeader.HTTP_HEADER_NAME,
        ShuffleHeader.DEFAULT_HTTP_HEADER_NAME);
    connection.addRequestProperty(ShuffleHeader.HTTP_HEADER_VERSION,
        ShuffleHeader.DEFAULT_HTTP_HEADER_VERSION);
    connection.connect();
    int code = connection.getResponseCode();
    System.out.println("status " + code);
    if (code != HttpURLConnection.HTTP_OK) {
      return;
    }
    if (!ShuffleHeader.DEFAULT_HTTP_HEADER_NAME.equals(
            connection.getHeaderField(ShuffleHeader.HTTP_HEADER_NAME))
        || !ShuffleHeader.DEFAULT_HTTP_HEADER_VERSION.equals(
            connection.getHeaderField(ShuffleHeader.HTTP_HEADER_VERSION))) {
      throw new IOException("Incompatible shuffle response version");
    }
    String replyHash = connection.getHeaderField(SecureShuffleUtils.HTTP_HEADER_REPLY_URL_HASH);
    if (replyHash == null) {
      throw new IOException("security validation of TT Map output failed");
    }
    SecureShuffleUtils.verifyReply(replyHash, encHash, key);

    try (DataInputStream in = new DataInputStream(connection.getInputStream())) {
      for (int i = 0; i < maps.length; i++) {
        ShuffleHeader header = new ShuffleHeader();
        header.readFields(in);
        long compressed = (Long) field(header, "compressedLength");
        byte[] data = new byte[(int) compressed];
        in.readFully(data);
        System.out.println("map " + field(header, "mapId") + " reduce " + field(header, "forReduce")
            + " compressed " + compressed
            + " uncompressed " + field(header, "uncompressedLength")
            + " data " + new String(data, StandardCharsets.UTF_8));
      }
      if (in.read() != -1) {
        throw new IOException("bytes after the last map output");
      }
    }
  }

  /** ShuffleHeader's fields are package-private (its readers are the Fetcher's package). */
  private static Object field(ShuffleHeader header, String name) throws ReflectiveOperationException {
    Field f = ShuffleHeader.class.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(header);
  }
}

// Known answers for tusk_security::digest_md5 from Java's own DIGEST-MD5
// (javax.security.sasl, the implementation Hadoop's client and DataNode use): a client
// and a server in one process over user dXNlcg== / password c2VjcmV0, protocol hdfs,
// server 0; prints the challenge, response, rspauth and each side's first two wrapped
// messages, in hex. The nonces are random, so each run gives a new, self-consistent set;
// crates/security/src/digest_md5.rs (`java_known_answers`) holds one.
//
// Usage: javac -d /tmp DigestMd5Kat.java && java -cp /tmp DigestMd5Kat QOP [CIPHER]
//   e.g. `auth-conf rc4`, `auth-int`.
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslServer;

public class DigestMd5Kat {
  private static String hex(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) {
      out.append(String.format("%02x", b));
    }
    return out.toString();
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put(Sasl.QOP, args[0]);
    props.put(Sasl.SERVER_AUTH, "true");
    CallbackHandler handler = callbacks -> {
      for (Callback c : callbacks) {
        if (c instanceof NameCallback) {
          ((NameCallback) c).setName("dXNlcg==");
        } else if (c instanceof PasswordCallback) {
          ((PasswordCallback) c).setPassword("c2VjcmV0".toCharArray());
        } else if (c instanceof RealmCallback) {
          ((RealmCallback) c).setText(((RealmCallback) c).getDefaultText());
        } else if (c instanceof AuthorizeCallback) {
          ((AuthorizeCallback) c).setAuthorized(true);
        }
      }
    };
    SaslServer server = Sasl.createSaslServer("DIGEST-MD5", "hdfs", "0", props, handler);
    Map<String, String> clientProps = new HashMap<>(props);
    if (args.length > 1) {
      clientProps.put("com.sun.security.sasl.digest.cipher", args[1]);
    }
    SaslClient client = Sasl.createSaslClient(
        new String[] {"DIGEST-MD5"}, null, "hdfs", "0", clientProps, handler);
    byte[] challenge = server.evaluateResponse(new byte[0]);
    System.out.println("challenge: " + new String(challenge, StandardCharsets.UTF_8));
    byte[] response = client.evaluateChallenge(challenge);
    System.out.println("response: " + new String(response, StandardCharsets.UTF_8));
    byte[] rspauth = server.evaluateResponse(response);
    System.out.println("server final: " + new String(rspauth, StandardCharsets.UTF_8));
    client.evaluateChallenge(rspauth);
    System.out.println("qop: " + client.getNegotiatedProperty(Sasl.QOP));
    for (int i = 0; i < 2; i++) {
      byte[] up = ("client message " + i).getBytes(StandardCharsets.UTF_8);
      System.out.println("client wraps: " + hex(client.wrap(up, 0, up.length)));
      byte[] down = ("server message " + i).getBytes(StandardCharsets.UTF_8);
      System.out.println("server wraps: " + hex(server.wrap(down, 0, down.length)));
    }
  }
}

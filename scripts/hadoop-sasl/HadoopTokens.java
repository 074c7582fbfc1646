import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.net.InetSocketAddress;
import java.security.PrivilegedExceptionAction;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.apache.hadoop.yarn.api.ApplicationMasterProtocol;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.ipc.YarnRPC;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterRequest;
import org.apache.hadoop.yarn.api.protocolrecords.FinishApplicationMasterResponse;
import org.apache.hadoop.yarn.api.protocolrecords.RegisterApplicationMasterResponse;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.security.NMTokenIdentifier;

/**
 * Hadoop 3.4.2's own token code, run against what Tusk writes and serves:
 *
 * write-credentials FILE      Hadoop writes a token storage file (an AMRMToken, an
 *                             NMToken and a secret key) in its default layout.
 * read-credentials FILE       Hadoop reads a token storage file and prints each token
 *                             (alias, kind, service, the identifier as Hadoop decodes it).
 * register HOST:PORT FILE     Hadoop's ApplicationMasterProtocol client calls
 *                             registerApplicationMaster: first as a user holding the
 *                             file's tokens (SASL DIGEST-MD5 with the AMRMToken), then
 *                             as a user holding none (SIMPLE), then with the tokens'
 *                             passwords altered; prints each outcome.
 * serve FILE                  A Hadoop RPC server of ApplicationMasterProtocol taking only
 *                             TOKEN auth (as the ResourceManager's), whose
 *                             registerApplicationMaster answers with the caller's user
 *                             as the queue; writes an AMRMToken for it to FILE, prints
 *                             "port N" and serves until its standard input closes.
 */
public class HadoopTokens {
  public static void main(String[] args) throws Exception {
    Configuration conf = new Configuration();
    switch (args[0]) {
      case "write-credentials":
        writeCredentials(new File(args[1]));
        break;
      case "read-credentials":
        readCredentials(Credentials.readTokenStorageFile(new File(args[1]), conf));
        break;
      case "serve":
        serve(conf, new File(args[1]));
        break;
      case "register":
        register(conf, args[1], Credentials.readTokenStorageFile(new File(args[2]), conf));
        break;
      default:
        throw new IllegalArgumentException("unknown command " + args[0]);
    }
  }

  static ApplicationAttemptId attempt() {
    return ApplicationAttemptId.newInstance(ApplicationId.newInstance(1700000000000L, 4), 1);
  }

  static void writeCredentials(File file) throws Exception {
    Credentials creds = new Credentials();
    AMRMTokenIdentifier amrm = new AMRMTokenIdentifier(attempt(), 17);
    creds.addToken(new Text("amrm"), new Token<AMRMTokenIdentifier>(amrm.getBytes(),
        "amrm-password".getBytes("UTF-8"), amrm.getKind(), new Text("127.0.0.1:8030")));
    NMTokenIdentifier nm = new NMTokenIdentifier(attempt(), NodeId.newInstance("nm1", 8041),
        "alice", 23);
    creds.addToken(new Text("nm1:8041"), new Token<NMTokenIdentifier>(nm.getBytes(),
        "nm-password".getBytes("UTF-8"), nm.getKind(), new Text("nm1:8041")));
    creds.addSecretKey(new Text("shuffle"), "job-secret".getBytes("UTF-8"));
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(file))) {
      creds.writeTokenStorageToStream(out);
    }
  }

  static void readCredentials(Credentials creds) throws Exception {
    for (java.util.Map.Entry<Text, Token<? extends TokenIdentifier>> e
        : new java.util.TreeMap<>(creds.getTokenMap()).entrySet()) {
      Token<? extends TokenIdentifier> t = e.getValue();
      System.out.println("token alias=" + e.getKey() + " kind=" + t.getKind() + " service="
          + t.getService() + " id=" + t.decodeIdentifier() + " password="
          + new String(t.getPassword(), "UTF-8"));
    }
    for (java.util.Map.Entry<Text, byte[]> e
        : new java.util.TreeMap<>(creds.getSecretKeyMap()).entrySet()) {
      System.out.println("secret alias=" + e.getKey() + " value="
          + new String(e.getValue(), "UTF-8"));
    }
  }

  /** Hadoop's password algorithm over one key, for AMRMTokens. */
  static class AmrmSecrets extends SecretManager<AMRMTokenIdentifier> {
    final javax.crypto.SecretKey key = generateSecret();

    protected byte[] createPassword(AMRMTokenIdentifier id) {
      return createPassword(id.getBytes(), key);
    }

    public byte[] retrievePassword(AMRMTokenIdentifier id) {
      return createPassword(id.getBytes(), key);
    }

    public AMRMTokenIdentifier createIdentifier() {
      return new AMRMTokenIdentifier();
    }
  }

  static void serve(Configuration conf, File file) throws Exception {
    AmrmSecrets secrets = new AmrmSecrets();
    ApplicationMasterProtocol ams = new ApplicationMasterProtocol() {
      public RegisterApplicationMasterResponse registerApplicationMaster(
          RegisterApplicationMasterRequest request) {
        RegisterApplicationMasterResponse response = RegisterApplicationMasterResponse
            .newInstance(null, null, null, null, null, null, null);
        response.setQueue(Server.getRemoteUser().getShortUserName());
        return response;
      }

      public FinishApplicationMasterResponse finishApplicationMaster(
          FinishApplicationMasterRequest request) {
        throw new UnsupportedOperationException();
      }

      public AllocateResponse allocate(AllocateRequest request) {
        throw new UnsupportedOperationException();
      }
    };
    // As the ResourceManager's ApplicationMasterService: TOKEN is the only method.
    Configuration serverConf = new Configuration(conf);
    serverConf.set("hadoop.security.authentication", "TOKEN");
    Server server = YarnRPC.create(serverConf).getServer(ApplicationMasterProtocol.class, ams,
        new InetSocketAddress("127.0.0.1", 0), serverConf, secrets, 1);
    server.start();
    int port = server.getListenerAddress().getPort();
    AMRMTokenIdentifier id = new AMRMTokenIdentifier(attempt(), 17);
    Credentials creds = new Credentials();
    creds.addToken(new Text("amrm"), new Token<AMRMTokenIdentifier>(id, secrets));
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(file))) {
      creds.writeTokenStorageToStream(out);
    }
    System.out.println("port " + port);
    System.out.flush();
    while (System.in.read() != -1) {
    }
    server.stop();
  }

  static void register(Configuration conf, String hostPort, Credentials creds) throws Exception {
    String[] parts = hostPort.split(":");
    InetSocketAddress addr = new InetSocketAddress(parts[0], Integer.parseInt(parts[1]));
    UserGroupInformation withToken = UserGroupInformation.createRemoteUser("am");
    withToken.addCredentials(creds);
    System.out.println("TOKEN: " + registerAs(withToken, conf, addr));
    UserGroupInformation simple = UserGroupInformation.createRemoteUser("am");
    System.out.println("SIMPLE: " + registerAs(simple, conf, addr));
    UserGroupInformation forged = UserGroupInformation.createRemoteUser("am");
    for (Token<? extends TokenIdentifier> t : creds.getAllTokens()) {
      byte[] password = t.getPassword().clone();
      password[0] ^= 1;
      forged.addToken(new Token<TokenIdentifier>(t.getIdentifier(), password, t.getKind(),
          t.getService()));
    }
    System.out.println("FORGED: " + registerAs(forged, conf, addr));
  }

  static String registerAs(UserGroupInformation ugi, Configuration conf, InetSocketAddress addr)
      throws Exception {
    return ugi.doAs(new PrivilegedExceptionAction<String>() {
      public String run() {
        ApplicationMasterProtocol am = (ApplicationMasterProtocol)
            YarnRPC.create(conf).getProxy(ApplicationMasterProtocol.class, addr, conf);
        try {
          am.registerApplicationMaster(RegisterApplicationMasterRequest.newInstance("h", 1, ""));
          return "registered";
        } catch (Exception e) {
          Throwable t = e;
          while (t.getCause() != null && t.getMessage() != null
              && t.getMessage().equals(t.getCause().toString())) {
            t = t.getCause();
          }
          return t.getClass().getName() + ": " + t.getMessage();
        } finally {
          YarnRPC.create(conf).stopProxy(am, conf);
        }
      }
    });
  }
}

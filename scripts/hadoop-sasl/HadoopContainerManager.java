import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.apache.hadoop.yarn.api.ContainerManagementProtocol;
import org.apache.hadoop.yarn.api.protocolrecords.GetContainerStatusesRequest;
import org.apache.hadoop.yarn.api.protocolrecords.GetContainerStatusesResponse;
import org.apache.hadoop.yarn.api.protocolrecords.StartContainerRequest;
import org.apache.hadoop.yarn.api.protocolrecords.StartContainersRequest;
import org.apache.hadoop.yarn.api.protocolrecords.StartContainersResponse;
import org.apache.hadoop.yarn.api.protocolrecords.StopContainersRequest;
import org.apache.hadoop.yarn.api.protocolrecords.StopContainersResponse;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.LocalResource;
import org.apache.hadoop.yarn.api.records.SerializedException;
import org.apache.hadoop.yarn.ipc.YarnRPC;
import org.apache.hadoop.yarn.security.ContainerTokenIdentifier;
import org.apache.hadoop.yarn.security.NMTokenIdentifier;

/**
 * Hadoop 3.4.2's own ContainerManagementProtocol client (the one NMClient and
 * MRAppMaster's container launcher use) against a NodeManager:
 *
 * run HOST:PORT FILE   FILE is a token storage file with the NMToken ("nm") and two
 *                      container tokens ("run", "forged"). As the NMToken's user (SASL
 *                      DIGEST-MD5), starts "run" (sleep 600) and "forged" (true) in one
 *                      call, queries "run", stops it and waits for it to complete; then
 *                      calls without tokens (SIMPLE). Prints one line per outcome:
 *                      "started ID", "failed ID CLASS: MESSAGE" (the deserialized
 *                      exception), "meta NAME INT", "status ID STATE EXIT",
 *                      "stopped ID", "simple refused CLASS".
 */
public class HadoopContainerManager {
  public static void main(String[] args) throws Exception {
    if (!args[0].equals("run")) {
      throw new IllegalArgumentException("unknown command " + args[0]);
    }
    Configuration conf = new Configuration();
    InetSocketAddress addr = NetUtils.createSocketAddr(args[1]);
    Credentials creds = Credentials.readTokenStorageFile(new File(args[2]), conf);
    Token<? extends TokenIdentifier> nm = creds.getToken(new Text("nm"));
    NMTokenIdentifier nmId = new NMTokenIdentifier();
    nmId.readFields(new DataInputStream(new ByteArrayInputStream(nm.getIdentifier())));
    UserGroupInformation ugi =
        UserGroupInformation.createRemoteUser(nmId.getApplicationAttemptId().toString());
    ugi.addToken(nm);
    ContainerManagementProtocol cm = proxy(ugi, conf, addr);

    org.apache.hadoop.yarn.api.records.Token run = containerToken(creds, "run");
    org.apache.hadoop.yarn.api.records.Token forged = containerToken(creds, "forged");
    ContainerId runId = containerId(run);
    List<StartContainerRequest> requests = new ArrayList<>();
    requests.add(StartContainerRequest.newInstance(launch("sleep 600"), run));
    requests.add(StartContainerRequest.newInstance(launch("true"), forged));
    StartContainersResponse started =
        cm.startContainers(StartContainersRequest.newInstance(requests));
    for (ContainerId id : started.getSuccessfullyStartedContainers()) {
      System.out.println("started " + id);
    }
    printFailures(started.getFailedRequests());
    for (Map.Entry<String, ByteBuffer> e : started.getAllServicesMetaData().entrySet()) {
      System.out.println("meta " + e.getKey() + " " + e.getValue().getInt(0));
    }

    List<ContainerId> ids = Collections.singletonList(runId);
    printStatuses(cm.getContainerStatuses(GetContainerStatusesRequest.newInstance(ids)));
    StopContainersResponse stopped = cm.stopContainers(StopContainersRequest.newInstance(ids));
    for (ContainerId id : stopped.getSuccessfullyStoppedContainers()) {
      System.out.println("stopped " + id);
    }
    long deadline = System.currentTimeMillis() + 30_000;
    while (true) {
      GetContainerStatusesResponse statuses =
          cm.getContainerStatuses(GetContainerStatusesRequest.newInstance(ids));
      ContainerStatus status = statuses.getContainerStatuses().get(0);
      if (status.getState() == ContainerState.COMPLETE) {
        printStatuses(statuses);
        break;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("still " + status.getState());
      }
      Thread.sleep(50);
    }

    ContainerManagementProtocol simple =
        proxy(UserGroupInformation.createRemoteUser("alice"), conf, addr);
    try {
      simple.getContainerStatuses(GetContainerStatusesRequest.newInstance(ids));
      System.out.println("simple served");
    } catch (Exception e) {
      Throwable t = e;
      while (t.getCause() != null && !(t instanceof RemoteException)) {
        t = t.getCause();
      }
      String cls = t instanceof RemoteException
          ? ((RemoteException) t).getClassName() : t.getClass().getName();
      System.out.println("simple refused " + cls);
    }
  }

  static ContainerManagementProtocol proxy(UserGroupInformation ugi, Configuration conf,
      InetSocketAddress addr) throws Exception {
    return ugi.doAs((PrivilegedExceptionAction<ContainerManagementProtocol>) () ->
        (ContainerManagementProtocol) YarnRPC.create(conf)
            .getProxy(ContainerManagementProtocol.class, addr, conf));
  }

  static org.apache.hadoop.yarn.api.records.Token containerToken(Credentials creds,
      String alias) {
    Token<? extends TokenIdentifier> t = creds.getToken(new Text(alias));
    return org.apache.hadoop.yarn.api.records.Token.newInstance(t.getIdentifier(),
        t.getKind().toString(), t.getPassword(), t.getService().toString());
  }

  static ContainerId containerId(org.apache.hadoop.yarn.api.records.Token token)
      throws Exception {
    ContainerTokenIdentifier id = new ContainerTokenIdentifier();
    id.readFields(new DataInputStream(
        new ByteArrayInputStream(token.getIdentifier().array())));
    return id.getContainerID();
  }

  static ContainerLaunchContext launch(String command) {
    return ContainerLaunchContext.newInstance(Collections.<String, LocalResource>emptyMap(),
        Collections.<String, String>emptyMap(), Collections.singletonList(command), null, null,
        null);
  }

  static void printFailures(Map<ContainerId, SerializedException> failed) {
    for (Map.Entry<ContainerId, SerializedException> e : failed.entrySet()) {
      Throwable t = e.getValue().deSerialize();
      System.out.println("failed " + e.getKey() + " " + t.getClass().getName() + ": "
          + t.getMessage());
    }
  }

  static void printStatuses(GetContainerStatusesResponse statuses) {
    for (ContainerStatus s : statuses.getContainerStatuses()) {
      System.out.println("status " + s.getContainerId() + " " + s.getState() + " "
          + s.getExitStatus());
    }
    printFailures(statuses.getFailedRequests());
  }
}

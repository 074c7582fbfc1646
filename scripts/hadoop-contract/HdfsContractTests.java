import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.contract.AbstractContractAppendTest;
import org.apache.hadoop.fs.contract.AbstractContractBulkDeleteTest;
import org.apache.hadoop.fs.contract.AbstractContractConcatTest;
import org.apache.hadoop.fs.contract.AbstractContractCreateTest;
import org.apache.hadoop.fs.contract.AbstractContractDeleteTest;
import org.apache.hadoop.fs.contract.AbstractContractGetFileStatusTest;
import org.apache.hadoop.fs.contract.AbstractContractLeaseRecoveryTest;
import org.apache.hadoop.fs.contract.AbstractContractMkdirTest;
import org.apache.hadoop.fs.contract.AbstractContractMultipartUploaderTest;
import org.apache.hadoop.fs.contract.AbstractContractOpenTest;
import org.apache.hadoop.fs.contract.AbstractContractPathHandleTest;
import org.apache.hadoop.fs.contract.AbstractContractRenameTest;
import org.apache.hadoop.fs.contract.AbstractContractRootDirectoryTest;
import org.apache.hadoop.fs.contract.AbstractContractSafeModeTest;
import org.apache.hadoop.fs.contract.AbstractContractSeekTest;
import org.apache.hadoop.fs.contract.AbstractContractSetTimesTest;
import org.apache.hadoop.fs.contract.AbstractContractUnbufferTest;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.io.wrappedio.impl.TestWrappedIO;

/**
 * Hadoop 3.4.2's FileSystem contract tests as HDFS runs them on itself
 * (hadoop-hdfs/src/test/java/org/apache/hadoop/fs/contract/hdfs/TestHDFSContract*.java and
 * TestDFSWrappedIO), each bound to a running cluster through {@link TuskContract} instead of
 * a MiniDFSCluster. Where HDFS's subclass overrides a hook, the same override is here.
 * {@link #ALL} is the order scripts/hadoop-contract.sh runs them in: the root directory
 * tests, which empty the whole namespace, last.
 */
public final class HdfsContractTests {
  private HdfsContractTests() {}

  public static final Class<?>[] ALL = {
    Append.class, BulkDelete.class, Concat.class, Create.class, Delete.class,
    GetFileStatus.class, LeaseRecovery.class, Mkdir.class, MultipartUploader.class,
    Open.class, PathHandle.class, Rename.class, SafeMode.class, Seek.class, SetTimes.class,
    Unbuffer.class, VectoredRead.class, WrappedIO.class, RootDirectory.class,
  };

  public static class Append extends AbstractContractAppendTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class BulkDelete extends AbstractContractBulkDeleteTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class Concat extends AbstractContractConcatTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class Create extends AbstractContractCreateTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class Delete extends AbstractContractDeleteTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class GetFileStatus extends AbstractContractGetFileStatusTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class LeaseRecovery extends AbstractContractLeaseRecoveryTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class Mkdir extends AbstractContractMkdirTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  /** HDFS's overrides: 1 KiB parts, and a finished upload id is gone at once. */
  public static class MultipartUploader extends AbstractContractMultipartUploaderTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }

    @Override
    protected int partSizeInBytes() {
      return 1024;
    }

    @Override
    protected boolean finalizeConsumesUploadIdImmediately() {
      return true;
    }

    @Override
    protected boolean supportsConcurrentUploadsToSamePath() {
      return true;
    }
  }

  public static class Open extends AbstractContractOpenTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  /** Parameterized by the base class's params(): every HandleOpt combination. */
  public static class PathHandle extends AbstractContractPathHandleTest {
    public PathHandle(String name, Options.HandleOpt[] opts, boolean serialized) {
      super(name, opts, serialized);
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class Rename extends AbstractContractRenameTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class RootDirectory extends AbstractContractRootDirectoryTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class SafeMode extends AbstractContractSafeModeTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class Seek extends AbstractContractSeekTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class SetTimes extends AbstractContractSetTimesTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  public static class Unbuffer extends AbstractContractUnbufferTest {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  /** Parameterized by the base class's params(): the direct and heap buffer kinds. */
  public static class VectoredRead extends AbstractContractVectoredReadTest {
    public VectoredRead(String bufferType) {
      super(bufferType);
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }

  /** HDFS's TestDFSWrappedIO: the reflection-friendly WrappedIO API over hdfs://. */
  public static class WrappedIO extends TestWrappedIO {
    @Override
    protected AbstractFSContract createContract(Configuration conf) {
      return new TuskContract(conf);
    }
  }
}

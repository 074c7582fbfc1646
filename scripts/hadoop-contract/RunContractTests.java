import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

/**
 * Runs {@link HdfsContractTests#ALL} with JUnit 4: one line per failed test (its exception
 * and message) and per skipped one (why), then "N passed / M failed / K skipped"; exits 1
 * when any test failed.
 * The label (first argument) names the pass in every line.
 */
public final class RunContractTests {
  private RunContractTests() {}

  public static void main(String[] args) {
    String label = args.length > 0 ? args[0] : "contract";
    JUnitCore junit = new JUnitCore();
    junit.addListener(new RunListener() {
      @Override
      public void testFailure(Failure failure) {
        System.out.println(label + ": FAIL " + name(failure.getDescription()) + ": "
            + firstLine(failure.getException()));
      }

      @Override
      public void testAssumptionFailure(Failure failure) {
        System.out.println(label + ": skip " + name(failure.getDescription()) + ": "
            + failure.getMessage());
      }

      @Override
      public void testIgnored(Description description) {
        System.out.println(label + ": skip " + name(description) + ": @Ignore");
      }
    });
    Result result = junit.run(HdfsContractTests.ALL);
    int failed = result.getFailureCount();
    int skipped = result.getIgnoreCount() + result.getAssumptionFailureCount();
    int passed = result.getRunCount() - failed - result.getAssumptionFailureCount();
    System.out.printf("%s: %d passed / %d failed / %d skipped (%.1f s)%n",
        label, passed, failed, skipped, result.getRunTime() / 1000.0);
    System.exit(failed == 0 ? 0 : 1);
  }

  /** Class#method, the class without its HdfsContractTests$ prefix. */
  private static String name(Description d) {
    String cls = d.getClassName().replaceFirst("^HdfsContractTests\\$", "");
    return d.getMethodName() == null ? cls : cls + "#" + d.getMethodName();
  }

  private static String firstLine(Throwable t) {
    String text = t.toString();
    int nl = text.indexOf('\n');
    return nl < 0 ? text : text.substring(0, nl) + " ...";
  }
}

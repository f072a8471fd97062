package tracebox;

import io.sentry.ILogger;
import io.sentry.Sentry;
import io.sentry.SentryLevel;
import io.sentry.protocol.SentryId;
import io.sentry.protocol.User;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * Tracebox SDK compatibility program for io.sentry:sentry (version: see pom.xml).
 *
 * <p>Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default "sdk-test@1.0.0"), TRACEBOX_ENV
 * (default "test"), TRACEBOX_REPEAT (default 1), TRACEBOX_SDK_DEBUG (print all SDK logs).
 *
 * <p>Sends, with user id "user-42": TRACEBOX_REPEAT exception events (IllegalArgumentException
 * "invalid quantity: 7" thrown in validateQuantity &lt;- processOrder &lt;- handleRequest, same
 * code path), one message event "tracebox sdk test message" at level warning, and a release-health
 * session (Sentry.startSession()/endSession(); the JVM SDK does not start one by itself).
 *
 * <p>Prints "kind=&lt;kind&gt;" then "event_id=&lt;32hex&gt;" per event. Exits 0 only if the SDK's
 * own diagnostic logger (installed with options.setLogger, debug on) reported no ERROR-level
 * message (the HTTP transport logs "Request failed, API returned N", "An exception occurred while
 * submitting the envelope..." and "Envelope submission failed" at ERROR) and it reported "Envelope
 * sent successfully." at least once per event plus once for the session.
 */
public final class SdkTest {

  /** The SDK's diagnostic logger hook: counts successes, records errors. */
  static final class RecordingLogger implements ILogger {
    final boolean verbose = System.getenv("TRACEBOX_SDK_DEBUG") != null;
    final List<String> errors = new ArrayList<>();
    int sent;

    private synchronized void record(SentryLevel level, String message, Throwable t) {
      if ("Envelope sent successfully.".equals(message)) {
        sent++;
      }
      if (level == SentryLevel.ERROR || level == SentryLevel.FATAL) {
        errors.add(message + (t != null ? " (" + t + ")" : ""));
      }
      if (verbose || level.ordinal() >= SentryLevel.WARNING.ordinal()) {
        System.err.println("sentry " + level + ": " + message + (t != null ? " (" + t + ")" : ""));
        if (t != null && verbose) {
          StringWriter sw = new StringWriter();
          t.printStackTrace(new PrintWriter(sw));
          System.err.print(sw);
        }
      }
    }

    private static String format(String message, Object... args) {
      try {
        return args == null || args.length == 0 ? message : String.format(message, args);
      } catch (RuntimeException e) {
        return message;
      }
    }

    @Override
    public void log(SentryLevel level, String message, Object... args) {
      record(level, format(message, args), null);
    }

    @Override
    public void log(SentryLevel level, String message, Throwable throwable) {
      record(level, message, throwable);
    }

    @Override
    public void log(SentryLevel level, Throwable throwable, String message, Object... args) {
      record(level, format(message, args), throwable);
    }

    @Override
    public boolean isEnabled(SentryLevel level) {
      return true;
    }
  }

  static void validateQuantity(int quantity) {
    if (quantity > 5) {
      throw new IllegalArgumentException("invalid quantity: " + quantity);
    }
  }

  static void processOrder(int quantity) {
    validateQuantity(quantity);
  }

  static void handleRequest(int quantity) {
    processOrder(quantity);
  }

  private static String env(String name, String def) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? def : v;
  }

  public static void main(String[] args) {
    String dsn = env("SENTRY_DSN", "");
    if (dsn.isEmpty()) {
      System.err.println("SENTRY_DSN is not set");
      System.exit(2);
    }
    int repeat;
    try {
      repeat = Math.max(1, Integer.parseInt(env("TRACEBOX_REPEAT", "1")));
    } catch (NumberFormatException e) {
      repeat = 1;
    }
    RecordingLogger logger = new RecordingLogger();
    Sentry.init(
        options -> {
          options.setDsn(dsn);
          options.setRelease(env("TRACEBOX_RELEASE", "sdk-test@1.0.0"));
          options.setEnvironment(env("TRACEBOX_ENV", "test"));
          options.addInAppInclude("tracebox");
          options.setDebug(true);
          options.setDiagnosticLevel(SentryLevel.DEBUG);
          options.setLogger(logger);
        });
    User user = new User();
    user.setId("user-42");
    user.setEmail("user42@example.com");
    Sentry.setUser(user);
    Sentry.startSession();

    int events = 0;
    for (int i = 0; i < repeat; i++) {
      try {
        handleRequest(7);
      } catch (IllegalArgumentException e) {
        SentryId id = Sentry.captureException(e);
        System.out.println("kind=exception");
        System.out.println("event_id=" + id);
        events++;
      }
    }
    SentryId msgId = Sentry.captureMessage("tracebox sdk test message", SentryLevel.WARNING);
    System.out.println("kind=message");
    System.out.println("event_id=" + msgId);
    events++;

    Sentry.endSession();
    System.out.println("kind=session");
    Sentry.flush(10000);
    Sentry.close();

    int code = 0;
    synchronized (logger) {
      for (String e : logger.errors) {
        System.err.println("transport error: " + e);
        code = 1;
      }
      if (logger.sent < events + 1) {
        System.err.println(
            "only " + logger.sent + " envelopes sent successfully, expected >= " + (events + 1));
        code = 1;
      }
    }
    System.exit(code);
  }
}

// Tracebox program for issue 12: release health as @sentry/browser sends it (version:
// tests/sourcemaps/app/package.json, bundled by esbuild from .cache/sdk/sourcemaps-app).
//
// The session starts at init, before the app knows its user (its first update has no
// `did`). "Pay" sets the user (the SDK sends an update with the `did`), then an error no
// handler catches ends the session as `unhandled` (the status of @sentry/browser 8+).
// body[data-sessions] counts the session envelopes the SDK's transport delivered (2xx);
// body[data-sent] lists every envelope's item types and answer ("session:200 ...").
import * as Sentry from "@sentry/browser";

const config = window.TRACEBOX || {};
let delivered = 0;
const sent = [];

function countingTransport(options) {
  const inner = Sentry.makeFetchTransport(options);
  return {
    send(envelope) {
      const types = envelope[1].map((item) => item[0].type);
      return inner.send(envelope).then((response) => {
        const code = response && response.statusCode;
        sent.push(`${types.join(",")}:${code}`);
        document.body.dataset.sent = sent.join(" ");
        if (types.includes("session") && code >= 200 && code < 300) {
          delivered += 1;
          document.body.dataset.sessions = String(delivered);
        }
        return response;
      });
    },
    flush(timeout) {
      return inner.flush(timeout);
    },
  };
}

Sentry.init({
  dsn: config.dsn,
  release: config.release,
  environment: "test",
  transport: countingTransport,
});

document.getElementById("pay").addEventListener("click", () => {
  Sentry.setUser({ id: "user-7", username: "ann" });
  // Thrown from a timer: nothing in the app catches it, the SDK's global handler does.
  setTimeout(() => {
    throw new Error("payment failed for user-7");
  }, 0);
});
document.body.dataset.ready = "true";

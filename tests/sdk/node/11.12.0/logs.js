'use strict';
// Tracebox program for issue 12: structured logs with @sentry/node's Sentry.logger
// (version: see package.json), sent as a `log` envelope item.
//
// Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default "sdk-test@1.0.0").
// Logs "order 42 received" (info, with order_id) and "payment failed" (error, with an
// `error` attribute: Tracebox files it in the error list too). Prints "kind=log" per
// record. Exits 0 only if every envelope handed to the SDK's own node transport
// resolved with a 2xx status, a log envelope was among them, and flush/close succeeded.
// The module is resolved through NODE_PATH (.cache/sdk/node-<version>/node_modules).

const Sentry = require('@sentry/node');

const outcomes = { logs: 0, failures: [] };

function recordingTransport(options) {
  const inner = Sentry.makeNodeTransport(options);
  return {
    send(envelope) {
      const types = envelope[1].map((item) => item[0].type).join(',');
      return inner.send(envelope).then(
        (response) => {
          const code = response && response.statusCode;
          if (code !== undefined && code >= 200 && code < 300) {
            if (/\blog\b/.test(types)) outcomes.logs += 1;
          } else {
            outcomes.failures.push(`envelope [${types}]: ${code === undefined ? 'not sent' : 'HTTP ' + code}`);
          }
          return response;
        },
        (error) => {
          outcomes.failures.push(`envelope [${types}]: ${error && error.message}`);
          throw error;
        },
      );
    },
    flush(timeout) {
      return inner.flush(timeout);
    },
  };
}

async function main() {
  if (!process.env.SENTRY_DSN) {
    console.error('SENTRY_DSN is not set');
    return 2;
  }
  Sentry.init({
    dsn: process.env.SENTRY_DSN,
    release: process.env.TRACEBOX_RELEASE || 'sdk-test@1.0.0',
    environment: 'test',
    enableLogs: true,
    transport: recordingTransport,
    debug: Boolean(process.env.TRACEBOX_SDK_DEBUG),
  });
  Sentry.logger.info(Sentry.logger.fmt`order ${42} received`, { order_id: 42 });
  Sentry.logger.error('payment failed', { error: 'card declined: insufficient funds' });
  console.log('kind=log');
  console.log('kind=log');
  const settle = (promise, what) =>
    Promise.resolve(promise).catch((error) => {
      outcomes.failures.push(`${what}: ${error && error.message}`);
      return false;
    });
  const flushed = await settle(Sentry.flush(10000), 'flush');
  const closed = await settle(Sentry.close(10000), 'close');
  let code = flushed && closed ? 0 : 1;
  for (const f of outcomes.failures) {
    console.error(`transport error: ${f}`);
    code = 1;
  }
  if (outcomes.logs < 1) {
    console.error('no log envelope was delivered');
    code = 1;
  }
  return code;
}

main().then((code) => process.exit(code));

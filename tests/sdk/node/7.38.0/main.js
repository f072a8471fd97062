'use strict';
// Tracebox SDK compatibility program for @sentry/node (version: see package.json).
//
// Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default
// "sdk-test@1.0.0"), TRACEBOX_ENV (default "test"), TRACEBOX_REPEAT (default 1).
//
// Sends, with user id "user-42":
//   * TRACEBOX_REPEAT exception events: RangeError("invalid quantity: 7") thrown
//     in validateQuantity <- processOrder <- handleRequest (same code path);
//   * one message event "tracebox sdk test message" at level warning;
//   * the release-health session that the SDK starts by itself at init
//     (autoSessionTracking / ProcessSession integration): its update when the
//     first error is captured, then the final "exited" update, which the SDK
//     would send on 'beforeExit' and which we end explicitly (hub.endSession()
//     in 7.x, Sentry.endSession() later) so it is flushed before we check the
//     outcome.
// The Dedupe integration (default since 8.x) is removed so that TRACEBOX_REPEAT=2
// really sends two identical exceptions.
//
// Prints "kind=<kind>" then "event_id=<32hex>" per event. Exits 0 only if
// every envelope handed to the SDK's own node transport (makeNodeTransport,
// wrapped here) resolved with a 2xx status code, every printed event id was in
// a delivered envelope, a session was delivered, and flush/close succeeded.
// The module is resolved through NODE_PATH (scripts/install-sdks.sh installs
// node_modules under .cache/sdk/node-<version>/).

const Sentry = require('@sentry/node');

const outcomes = { delivered: new Set(), sessions: 0, failures: [] };

function recordingTransport(options) {
  const inner = Sentry.makeNodeTransport(options);
  return {
    send(envelope) {
      const types = envelope[1].map((item) => item[0].type).join(',');
      return inner.send(envelope).then(
        (response) => {
          const code = response && response.statusCode;
          if (code !== undefined && code >= 200 && code < 300) {
            if (envelope[0].event_id) outcomes.delivered.add(envelope[0].event_id);
            if (/\bsessions?\b/.test(types)) outcomes.sessions += 1;
          } else {
            outcomes.failures.push(`envelope [${types}]: ${code === undefined ? 'not sent (no response)' : 'HTTP ' + code}`);
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

function validateQuantity(quantity) {
  if (quantity > 5) {
    throw new RangeError(`invalid quantity: ${quantity}`);
  }
}

function processOrder(quantity) {
  validateQuantity(quantity);
}

function handleRequest(quantity) {
  processOrder(quantity);
}

async function main() {
  if (!process.env.SENTRY_DSN) {
    console.error('SENTRY_DSN is not set');
    return 2;
  }
  const repeat = Math.max(1, parseInt(process.env.TRACEBOX_REPEAT || '1', 10) || 1);
  Sentry.init({
    dsn: process.env.SENTRY_DSN,
    release: process.env.TRACEBOX_RELEASE || 'sdk-test@1.0.0',
    environment: process.env.TRACEBOX_ENV || 'test',
    transport: recordingTransport,
    integrations: (defaults) => defaults.filter((integration) => integration.name !== 'Dedupe'),
    debug: Boolean(process.env.TRACEBOX_SDK_DEBUG),
  });
  Sentry.setUser({ id: 'user-42', email: 'user42@example.com' });

  const eventIds = [];
  for (let i = 0; i < repeat; i++) {
    try {
      handleRequest(7);
    } catch (err) {
      const id = Sentry.captureException(err);
      console.log('kind=exception');
      console.log(`event_id=${id}`);
      eventIds.push(id);
    }
  }
  const msgId = Sentry.captureMessage('tracebox sdk test message', 'warning');
  console.log('kind=message');
  console.log(`event_id=${msgId}`);
  eventIds.push(msgId);

  // flush/close must not reject; if they do, that is a transport failure too
  const settle = (promise, what) =>
    Promise.resolve(promise).catch((error) => {
      outcomes.failures.push(`${what}: ${error && error.message}`);
      return false;
    });

  // let event processing (async in 8.x+) update the session's error count first
  let flushed = await settle(Sentry.flush(10000), 'flush');
  if (typeof Sentry.endSession === 'function') {
    Sentry.endSession();
  } else {
    Sentry.getCurrentHub().endSession();
  }
  console.log('kind=session');

  flushed = (await settle(Sentry.flush(10000), 'flush')) && flushed;
  const closed = await settle(Sentry.close(10000), 'close');
  let code = 0;
  if (!flushed || !closed) {
    console.error(`flush=${flushed} close=${closed}`);
    code = 1;
  }
  for (const f of outcomes.failures) {
    console.error(`transport error: ${f}`);
    code = 1;
  }
  for (const id of eventIds) {
    if (!outcomes.delivered.has(id)) {
      console.error(`event ${id} was not delivered`);
      code = 1;
    }
  }
  if (outcomes.sessions < 1) {
    console.error('no session was delivered');
    code = 1;
  }
  return code;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err);
    process.exitCode = 1;
  },
);

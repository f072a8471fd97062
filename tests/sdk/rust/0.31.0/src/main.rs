//! Tracebox SDK compatibility program for the `sentry` crate (version: see Cargo.toml).
//!
//! Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default
//! "sdk-test@1.0.0"), TRACEBOX_ENV (default "test"), TRACEBOX_REPEAT (default 1).
//!
//! Sends, with user id "user-42":
//!   * TRACEBOX_REPEAT exception events: `InvalidQuantityError` ("invalid
//!     quantity: 7") created in validate_quantity <- process_order <-
//!     handle_request, with the backtrace taken where the error was created
//!     (what sentry-anyhow does), all from the same code path;
//!   * one message event "tracebox sdk test message" at level warning;
//!   * a release-health session (auto_session_tracking, application mode),
//!     ended explicitly so the final "exited" update is flushed.
//!
//! Prints "kind=<kind>" then "event_id=<32hex>" per event. Exits 0 only if
//! every HTTP request the SDK's own ureq transport made got a 2xx answer (seen
//! through a ureq middleware on the agent handed to UreqHttpTransport) and at
//! least one request per event plus one for the session succeeded.
//! Client::close() is still called (it waits for the queue), but its result is
//! not used: in sentry 0.31.0 TransportThread::flush returns
//! `recv_timeout(..).is_err()`, i.e. false when the queue WAS drained (fixed
//! in later releases).

use std::error::Error;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sentry::integrations::backtrace::backtrace_to_stacktrace;
use sentry::protocol::{Event, Level, User};
use sentry::transports::UreqHttpTransport;
use sentry::{ClientOptions, SessionMode, Transport};

#[derive(Debug)]
struct InvalidQuantityError {
    quantity: u32,
    backtrace: backtrace::Backtrace,
}

impl fmt::Display for InvalidQuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid quantity: {}", self.quantity)
    }
}

impl Error for InvalidQuantityError {}

#[inline(never)]
fn validate_quantity(quantity: u32) -> Result<(), InvalidQuantityError> {
    if quantity > 5 {
        return Err(InvalidQuantityError {
            quantity,
            backtrace: backtrace::Backtrace::new(),
        });
    }
    Ok(())
}

#[inline(never)]
fn process_order(quantity: u32) -> Result<(), InvalidQuantityError> {
    validate_quantity(quantity)?;
    Ok(())
}

#[inline(never)]
fn handle_request(quantity: u32) -> Result<(), InvalidQuantityError> {
    process_order(quantity)
}

#[derive(Default)]
struct Outcomes {
    ok: usize,
    failures: Vec<String>,
}

/// ureq middleware recording the result of every request the SDK sends.
struct Recorder(Arc<Mutex<Outcomes>>);

impl ureq::Middleware for Recorder {
    fn handle(
        &self,
        request: ureq::Request,
        next: ureq::MiddlewareNext,
    ) -> Result<ureq::Response, ureq::Error> {
        let what = format!("{} {}", request.method(), request.url());
        let result = next.handle(request);
        let mut o = self.0.lock().unwrap();
        match &result {
            Ok(resp) if (200..300).contains(&resp.status()) => o.ok += 1,
            Ok(resp) => o.failures.push(format!("{what}: HTTP {}", resp.status())),
            Err(err) => o.failures.push(format!("{what}: {err}")),
        }
        result
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_string())
}

fn main() {
    let dsn = env_or("SENTRY_DSN", "");
    if dsn.is_empty() {
        eprintln!("SENTRY_DSN is not set");
        std::process::exit(2);
    }
    let repeat: usize = env_or("TRACEBOX_REPEAT", "1").parse().unwrap_or(1).max(1);
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    let agent = ureq::AgentBuilder::new()
        .middleware(Recorder(outcomes.clone()))
        .build();

    let options = ClientOptions {
        dsn: Some(dsn.parse().expect("invalid SENTRY_DSN")),
        release: Some(env_or("TRACEBOX_RELEASE", "sdk-test@1.0.0").into()),
        environment: Some(env_or("TRACEBOX_ENV", "test").into()),
        debug: std::env::var_os("TRACEBOX_SDK_DEBUG").is_some(),
        auto_session_tracking: true,
        session_mode: SessionMode::Application,
        transport: Some(Arc::new(move |opts: &ClientOptions| {
            Arc::new(UreqHttpTransport::with_agent(opts, agent.clone())) as Arc<dyn Transport>
        })),
        ..Default::default()
    };
    let _guard = sentry::init(options);
    sentry::configure_scope(|scope| {
        scope.set_user(Some(User {
            id: Some("user-42".into()),
            email: Some("user42@example.com".into()),
            ..Default::default()
        }))
    });

    let mut events = 0;
    for _ in 0..repeat {
        if let Err(err) = handle_request(7) {
            let mut event: Event<'static> = sentry::event_from_error(&err);
            if let Some(exc) = event.exception.last_mut() {
                exc.stacktrace = backtrace_to_stacktrace(&err.backtrace);
            }
            let id = sentry::capture_event(event);
            println!("kind=exception");
            println!("event_id={}", id.simple());
            events += 1;
        }
    }
    let id = sentry::capture_message("tracebox sdk test message", Level::Warning);
    println!("kind=message");
    println!("event_id={}", id.simple());
    events += 1;

    sentry::end_session();
    println!("kind=session");

    // Waits up to 10 s for the transport queue; the bool is inverted in 0.31.0
    // (see the module comment), so delivery is judged by the middleware alone.
    let _inverted = sentry::Hub::current()
        .client()
        .map(|c| c.close(Some(Duration::from_secs(10))));

    let o = outcomes.lock().unwrap();
    let mut code = 0;
    for f in &o.failures {
        eprintln!("transport error: {f}");
        code = 1;
    }
    if o.ok < events + 1 {
        eprintln!("only {} requests delivered, expected >= {}", o.ok, events + 1);
        code = 1;
    }
    std::process::exit(code);
}

//! Tracebox program for issue 12: a real panic in `validate_quantity` <-
//! `process_order` <- `handle_request`, reported by the `sentry` crate's panic
//! integration (sentry-panic) with the version pinned in Cargo.toml.
//!
//! Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default
//! "sdk-test@1.0.0"), TRACEBOX_ENV (default "test").
//!
//! Prints "kind=panic" then "event_id=<32hex>". Exits 0 only if the panic was
//! caught (catch_unwind), the SDK reported an event id for it, every HTTP request
//! its ureq transport made got a 2xx answer (a ureq middleware records them), and
//! Client::close() drained the queue.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sentry::protocol::User;
use sentry::transports::UreqHttpTransportOptions;
use sentry::{ClientOptions, Transport, TransportOptions};

#[inline(never)]
fn validate_quantity(quantity: u32) {
    if quantity > 5 {
        panic!("invalid quantity: {quantity}");
    }
}

#[inline(never)]
fn process_order(quantity: u32) {
    validate_quantity(quantity);
}

#[inline(never)]
fn handle_request(quantity: u32) {
    process_order(quantity);
}

#[derive(Default)]
struct Outcomes {
    ok: usize,
    failures: Vec<String>,
}

/// ureq middleware recording the result of every request the SDK sends.
struct Recorder(Arc<Mutex<Outcomes>>);

impl ureq::middleware::Middleware for Recorder {
    fn handle(
        &self,
        request: ureq::http::Request<ureq::SendBody>,
        next: ureq::middleware::MiddlewareNext,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let what = format!("{} {}", request.method(), request.uri());
        let result = next.handle(request);
        let mut o = self.0.lock().unwrap();
        match &result {
            Ok(resp) if resp.status().is_success() => o.ok += 1,
            Ok(resp) => o.failures.push(format!("{what}: HTTP {}", resp.status().as_u16())),
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
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    let agent = ureq::Agent::config_builder()
        .middleware(Recorder(outcomes.clone()))
        .build()
        .new_agent();

    let mut options = ClientOptions::default();
    options.dsn = Some(dsn.parse().expect("invalid SENTRY_DSN"));
    options.release = Some(env_or("TRACEBOX_RELEASE", "sdk-test@1.0.0").into());
    options.environment = Some(env_or("TRACEBOX_ENV", "test").into());
    options.debug = std::env::var_os("TRACEBOX_SDK_DEBUG").is_some();
    options.transport = Some(Arc::new(move |opts: &ClientOptions| {
        let general = TransportOptions::try_from_client_options(opts).expect("DSN is set");
        Arc::new(
            UreqHttpTransportOptions::from(general)
                .with_agent(agent.clone())
                .build(),
        ) as Arc<dyn Transport>
    }));
    let _guard = sentry::init(options);
    sentry::configure_scope(|scope| {
        scope.set_user(Some(User {
            id: Some("user-42".into()),
            ..Default::default()
        }))
    });

    let caught = std::panic::catch_unwind(|| handle_request(7)).is_err();
    let id = sentry::last_event_id();
    let closed = sentry::Hub::current()
        .client()
        .map(|c| c.close(Some(Duration::from_secs(10))))
        .unwrap_or(false);

    let mut code = 0;
    match (caught, id) {
        (true, Some(id)) => {
            println!("kind=panic");
            println!("event_id={}", id.simple());
        }
        _ => {
            eprintln!("the panic was not caught or not reported (caught: {caught})");
            code = 1;
        }
    }
    let o = outcomes.lock().unwrap();
    if !closed {
        eprintln!("client.close() did not drain the transport queue");
        code = 1;
    }
    for f in &o.failures {
        eprintln!("transport error: {f}");
        code = 1;
    }
    if o.ok < 1 {
        eprintln!("no request was delivered");
        code = 1;
    }
    std::process::exit(code);
}

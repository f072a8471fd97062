// Tracebox program for issue 12: sentry-go v0.50.0's slog handler
// (github.com/getsentry/sentry-go/slog), which sends structured logs and nothing
// else: before issue 12 its users saw nothing at all in Tracebox.
//
// Reads SENTRY_DSN, TRACEBOX_RELEASE (default "sdk-test@1.0.0") and TRACEBOX_ENV
// (default "test"). Logs, through log/slog with the Sentry handler:
//   - "order received" at info with order_id=42;
//   - "stock low" at warn with sku="sku-1";
//   - "charge failed" at error with the error "card declined: insufficient funds".
//
// Prints "kind=log" per record. Exits 0 only when every HTTP request the SDK's
// transport made got a 2xx answer, at least one was made, and Flush drained the
// queue (the SDK's own HTTP round tripper hook, as tests/sdk/go/v0.50.0).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/getsentry/sentry-go"
	sentryslog "github.com/getsentry/sentry-go/slog"
)

type recordingTransport struct {
	inner    http.RoundTripper
	mu       sync.Mutex
	ok       int
	failures []string
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(req)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		t.failures = append(t.failures, fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		t.failures = append(t.failures, fmt.Sprintf("%s %s: HTTP %d", req.Method, req.URL.Path, resp.StatusCode))
	default:
		t.ok++
	}
	return resp, err
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	dsn := os.Getenv("SENTRY_DSN")
	if dsn == "" {
		fmt.Fprintln(os.Stderr, "SENTRY_DSN is not set")
		os.Exit(2)
	}
	rt := &recordingTransport{inner: http.DefaultTransport}
	if err := sentry.Init(sentry.ClientOptions{
		// Logs need no option since 0.46: the slog handler turns them on.
		Dsn:           dsn,
		Release:       env("TRACEBOX_RELEASE", "sdk-test@1.0.0"),
		Environment:   env("TRACEBOX_ENV", "test"),
		HTTPTransport: rt,
		Debug:         os.Getenv("TRACEBOX_SDK_DEBUG") != "",
	}); err != nil {
		fmt.Fprintf(os.Stderr, "sentry.Init: %v\n", err)
		os.Exit(1)
	}
	ctx := context.Background()
	logger := slog.New(sentryslog.Option{}.NewSentryHandler(ctx))
	logger.Info("order received", "order_id", 42)
	logger.Warn("stock low", "sku", "sku-1")
	logger.Error("charge failed", "error", errors.New("card declined: insufficient funds"), "order_id", 42)
	for i := 0; i < 3; i++ {
		fmt.Println("kind=log")
	}

	flushed := sentry.Flush(10 * time.Second)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	code := 0
	if !flushed {
		fmt.Fprintln(os.Stderr, "sentry.Flush timed out")
		code = 1
	}
	for _, f := range rt.failures {
		fmt.Fprintf(os.Stderr, "transport error: %s\n", f)
		code = 1
	}
	if rt.ok < 1 {
		fmt.Fprintln(os.Stderr, "no request was delivered")
		code = 1
	}
	os.Exit(code)
}

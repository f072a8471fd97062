// Tracebox SDK compatibility program for github.com/getsentry/sentry-go v0.50.0 (latest on the Go module proxy when written).
//
// Reads SENTRY_DSN, TRACEBOX_RELEASE (default "sdk-test@1.0.0"), TRACEBOX_ENV
// (default "test") and TRACEBOX_REPEAT (default 1). Sends:
//   - TRACEBOX_REPEAT exception events (InvalidQuantityError raised in
//     validateQuantity <- processOrder <- handleRequest), same code path;
//   - one message event ("tracebox sdk test message", level warning).
// sentry-go v0.50.0 has no release-health (session) support either.
//
// Prints "kind=<kind>" followed by "event_id=<32hex>" for each event. Exits 0
// only when every HTTP request made by the SDK's transport got a 2xx answer,
// the SDK's Flush drained its queue, and every event was actually delivered.
// The evidence comes from the SDK's own HTTP round tripper hook
// (ClientOptions.HTTPTransport), wrapped around http.DefaultTransport.
package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/getsentry/sentry-go"
)

// InvalidQuantityError is the exception type the server must show.
type InvalidQuantityError struct {
	Quantity int
	pcs      []uintptr
}

func (e *InvalidQuantityError) Error() string {
	return fmt.Sprintf("invalid quantity: %d", e.Quantity)
}

// StackTrace lets sentry-go extract the stack where the error was created
// (same reflection hook it uses for github.com/pkg/errors).
func (e *InvalidQuantityError) StackTrace() []uintptr { return e.pcs }

func newInvalidQuantityError(q int) error {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	return &InvalidQuantityError{Quantity: q, pcs: pcs[:n]}
}

func validateQuantity(q int) error {
	if q > 5 {
		return newInvalidQuantityError(q)
	}
	return nil
}

func processOrder(q int) error {
	if err := validateQuantity(q); err != nil {
		return err
	}
	return nil
}

func handleRequest(q int) error {
	return processOrder(q)
}

// recordingTransport wraps the real HTTP transport and records the outcome
// of every request the SDK makes.
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
	repeat, err := strconv.Atoi(env("TRACEBOX_REPEAT", "1"))
	if err != nil || repeat < 1 {
		repeat = 1
	}
	rt := &recordingTransport{inner: http.DefaultTransport}
	if err := sentry.Init(sentry.ClientOptions{
		Dsn:           dsn,
		Release:       env("TRACEBOX_RELEASE", "sdk-test@1.0.0"),
		Environment:   env("TRACEBOX_ENV", "test"),
		HTTPTransport: rt,
		Debug:         os.Getenv("TRACEBOX_SDK_DEBUG") != "",
	}); err != nil {
		fmt.Fprintf(os.Stderr, "sentry.Init: %v\n", err)
		os.Exit(1)
	}
	sentry.ConfigureScope(func(scope *sentry.Scope) {
		scope.SetUser(sentry.User{ID: "user-42", Email: "user42@example.com"})
	})

	sent := 0
	for i := 0; i < repeat; i++ {
		if err := handleRequest(7); err != nil {
			id := sentry.CaptureException(err)
			if id == nil {
				fmt.Fprintln(os.Stderr, "CaptureException returned no event id")
				os.Exit(1)
			}
			fmt.Println("kind=exception")
			fmt.Printf("event_id=%s\n", string(*id))
			sent++
		}
	}
	var msgID *sentry.EventID
	sentry.WithScope(func(scope *sentry.Scope) {
		scope.SetLevel(sentry.LevelWarning)
		msgID = sentry.CaptureMessage("tracebox sdk test message")
	})
	if msgID == nil {
		fmt.Fprintln(os.Stderr, "CaptureMessage returned no event id")
		os.Exit(1)
	}
	fmt.Println("kind=message")
	fmt.Printf("event_id=%s\n", string(*msgID))
	sent++

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
	if rt.ok < sent {
		fmt.Fprintf(os.Stderr, "only %d of %d events were delivered\n", rt.ok, sent)
		code = 1
	}
	os.Exit(code)
}

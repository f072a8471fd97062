module tracebox.test/sdk/goslog

go 1.25.0

require (
	github.com/getsentry/sentry-go v0.50.0
	github.com/getsentry/sentry-go/slog v0.50.0
)

require (
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

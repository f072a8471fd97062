"""Tracebox: self-hosted error tracking for the Sentry SDKs."""

__version__ = "0.1.0"

"""Setup snippets for the first-run guidance: the smallest working configuration of each
official SDK the spec lists (section 2.4), with the project's DSN filled in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Snippet:
    key: str
    language: str
    install: str
    code: str


def snippets(dsn: str) -> list[Snippet]:
    return [
        Snippet(
            "python",
            "Python",
            "pip install sentry-sdk",
            f'import sentry_sdk\n\nsentry_sdk.init(dsn="{dsn}")\n\n1 / 0  # reported',
        ),
        Snippet(
            "node",
            "Node.js",
            "npm install @sentry/node",
            f'const Sentry = require("@sentry/node");\n\nSentry.init({{ dsn: "{dsn}" }});\n\n'
            'Sentry.captureException(new Error("It works"));',
        ),
        Snippet(
            "go",
            "Go",
            "go get github.com/getsentry/sentry-go",
            'sentry.Init(sentry.ClientOptions{Dsn: "' + dsn + '"})\n'
            "defer sentry.Flush(2 * time.Second)\n\n"
            'sentry.CaptureException(errors.New("it works"))',
        ),
        Snippet(
            "java",
            "Java",
            "implementation 'io.sentry:sentry:6.18.1'",
            f'Sentry.init(options -> options.setDsn("{dsn}"));\n\n'
            'Sentry.captureException(new RuntimeException("It works"));',
        ),
        Snippet(
            "ruby",
            "Ruby",
            "gem install sentry-ruby",
            f'require "sentry-ruby"\n\nSentry.init {{ |config| config.dsn = "{dsn}" }}\n\n'
            'Sentry.capture_exception(RuntimeError.new("It works"))',
        ),
        Snippet(
            "php",
            "PHP",
            "composer require sentry/sdk",
            f"\\Sentry\\init(['dsn' => '{dsn}']);\n\n"
            "\\Sentry\\captureException(new \\Exception('It works'));",
        ),
        Snippet(
            "rust",
            "Rust",
            "cargo add sentry@0.31",
            f'let _guard = sentry::init("{dsn}");\n\n'
            'sentry::capture_message("It works", sentry::Level::Error);',
        ),
    ]

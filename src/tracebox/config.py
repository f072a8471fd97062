"""Settings, read from ``TRACEBOX_*`` environment variables.

Every network-facing bound is a named setting with its unit in the name and a comment
giving its source (STYLE.md rule 7). Nothing here is created at import time: call
``Settings()`` (or ``Settings(**overrides)``) where the app or the CLI starts.

Read here rather than by a settings library (pydantic-settings): the digest's process
then loads no pydantic, which held ~10 MB of its memory (issue 10: 250 MB for the whole
server; docs/design.md).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

KIB = 1024
MIB = 1024 * KIB
ENV_PREFIX: Final = "TRACEBOX_"

T = TypeVar("T")


class SettingsError(ValueError):
    """A setting is unknown, not of its type, or out of its bounds; the message names it
    as it was given (its environment variable, when it came from there)."""


def bound(
    default: T,
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    pattern: str | None = None,
) -> T:
    """A setting whose value must lie within these bounds (or match ``pattern``)."""
    limits = {"ge": ge, "gt": gt, "le": le, "pattern": pattern}
    return dataclasses.field(
        default=default, metadata={k: v for k, v in limits.items() if v is not None}
    )


def secret(default: str = "") -> str:
    """A setting left out of the settings' repr and of error messages (a password, a
    signing key, a URL that may hold a password)."""
    return dataclasses.field(default=default, repr=False)


@dataclasses.dataclass(init=False)
class Settings:
    """Each setting from the keyword arguments, else its ``TRACEBOX_*`` environment
    variable, else its default; a value of the wrong type or out of bounds raises
    ``SettingsError``. The class attributes are the defaults."""

    # --- serving -------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = bound(1, ge=1)  # web worker processes
    data_dir: Path = Path("data")
    # SQLAlchemy URL (it may hold a password); empty: SQLite at <data_dir>/tracebox.sqlite3
    database_url: str = secret()
    # The address SDKs use to reach this server; DSNs are built from it.
    external_url: str = "http://localhost:8000"
    log_level: str = "info"
    # SIGTERM or SIGINT: serve exits (0) within this many seconds. In-flight requests get
    # up to 2 s less to finish; background units finish their step (the digest its
    # batch) and are killed at the deadline if stuck (safe: each batch is a transaction).
    shutdown_timeout_seconds: float = bound(10.0, ge=3)
    # /-/health answers 503 when the digest is this far behind (seconds since the oldest
    # undigested record was written): stalled, or the database is down for this long.
    health_max_lag_seconds: float = bound(300.0, gt=0)
    # A background unit whose last heartbeat is older than this is reported dead (it
    # beats every second while it works; a dead process is seen at once by its pid).
    heartbeat_timeout_seconds: float = bound(30.0, gt=0)
    # Longest a database query of a web request (a UI page, an API call) may run before
    # it is cancelled and the request answered 503; 0 disables the limit. As GitLab's
    # default PostgreSQL statement_timeout (15 s). Applies to SQLite too.
    query_timeout_ms: int = bound(15_000, ge=0)
    # A lasting condition (database down, disk or spool full) is logged when it starts and
    # ends, and reminded at most this often while it lasts (issue 9: no log floods).
    log_reminder_seconds: float = bound(60.0, gt=0)
    # Password of the admin ``root`` created on first start; empty: a random one is
    # printed once and written to <data_dir>/initial_root_password (mode 0600).
    root_password: str = secret()

    # --- ingestion limits (sizes as Sentry Relay's defaults, Limits::default) ------------
    max_envelope_bytes: int = 20 * MIB  # compressed request body, as Relay max_api_payload_size
    max_envelope_decompressed_bytes: int = 100 * MIB  # as Relay max_envelope_size
    max_event_bytes: int = 1 * MIB  # one event item, as Relay max_event_size
    max_store_bytes: int = 1 * MIB  # store body after decompression, as Relay max_event_size
    max_store_compressed_bytes: int = 20 * MIB  # store request body before decompression
    max_items_per_envelope: int = 1000  # Relay bounds sessions at 100; we bound all items
    max_sessions_per_envelope: int = 100  # as Relay max_session_count
    # One session or sessions item. Relay bounds only their count; we bound their size
    # too, as they are spooled as received (a real update is under 1 KiB, 100 aggregate
    # buckets under 20 KiB). A larger one is dropped silently, as an invalid session.
    max_session_bytes: int = 100 * KIB
    rate_limit_events_per_minute: int = bound(0, ge=0)  # per client key, per node; 0: none
    key_cache_seconds: float = 2.0  # how long ingest trusts a cached client key lookup
    # While the database is down, a key it confirmed up to this long ago keeps working
    # from its last known state (the spool buffers the outage); older or never-seen keys
    # get 503. Hours, not seconds: an outage should not stop known SDKs (issue 9).
    key_stale_seconds: float = bound(24 * 3600.0, ge=0)

    # --- spool and digest ----------------------------------------------------------------
    # Undigested spool bytes past which ingestion answers 503 with Retry-After: the outage
    # buffer. Digested bytes do not count, so any cap works; at least one maximal event
    # (TRACEBOX_MAX_EVENT_BYTES) lets every event through when the digest keeps up.
    spool_max_bytes: int = bound(512 * MIB, ge=1)
    spool_segment_bytes: int = 16 * MIB  # a writer starts a new segment file past this size
    # ... or once its segment is this old (seconds), so digested records are deleted soon
    # even at a low event rate (issue 9: a live segment is never deleted).
    spool_segment_max_age_seconds: float = bound(60.0, gt=0)
    # Ingestion answers 503 rather than leave less free disk than this (bytes) on the
    # spool's filesystem: room for the SQLite database and its WAL to keep digesting,
    # which is what frees the spool again.
    spool_min_free_bytes: int = bound(128 * MIB, ge=0)
    # Group commit: the longest an append waits for as many others as the last fsync had,
    # so that they share the next one (one request at a time never waits). Each fsync costs the
    # web worker ~0.15 ms of kernel CPU here: 8 ms instead of 2 cut its CPU per event by
    # ~20-25% under load, for ~4 ms more median latency (docs/performance.md, issue 10).
    spool_commit_interval_ms: float = 8.0
    digest_batch_size: int = 500  # spool records per digest transaction at most
    # ... read in parts of at most about this many bytes (at the last part's mean record
    # size, decoded): a part's records are read and prepared together (each decoded only
    # as it is prepared), so this bounds the digest's memory (issue 10: 250 MB for the
    # whole server). A digest that is behind joins full parts into one transaction
    # (digest.worker, ``_commit``), and while it writes one hands its prepare process at
    # least two parts' records, as many as that process prepares in the write's time
    # (``_Balance.covering``, at most a transaction), still prepared a part at a time.
    digest_batch_bytes: int = bound(2 * MIB, ge=1)
    digest_poll_interval_ms: float = 20.0  # digest sleeps this long when the spool is empty
    # While the digest keeps up, it starts a batch at most this often: an event may wait
    # this long to be digested, and batches gather more events. At 1,000 events/s, 200 ms
    # makes batches of ~200 events instead of ~20, and the digest and its prepare process
    # spend a third less CPU per event on SQLite, a quarter less on PostgreSQL (each
    # transaction's commit and the pages it rewrites; docs/performance.md).
    digest_batch_interval_ms: float = bound(200.0, ge=0)
    # Prepare digest batches (parse, normalize, scrub, group, encode) in a child process
    # while the last one is written: the digest uses two cores (issue 10). Off: all in
    # the background process (one process less, ~38 MB). On with PostgreSQL too since
    # 2026-11-28: with PostgreSQL on the same 2-core machine, +48% events/s digested and a
    # p99 at 1,000 events/s no worse than off (docs/performance.md).
    digest_prepare_process: bool = True
    # Niceness added to serve's background process (digest, alert sender, cleanup), so
    # the web workers get the CPU first when it is contended: SDKs get their answer in
    # time, and the spool absorbs what the digest falls behind (issues 10 and 13). 0: the
    # same priority as the web workers. Unix nice values go up to 19.
    background_nice: int = bound(10, ge=0, le=19)
    # SQLite page cache of each connection of the background process (the digest's pool
    # and the one the alert sender and cleanup share; the web workers keep 32 MiB each).
    # Measured (issue 10): on a fresh database the digest writes as fast with 4 MiB as
    # with 32, which cost ~30 MB more resident memory once filled; 4 MiB instead of 8 kept
    # the server under 250 MB once the digest had its prepare process (244 vs 249 MB, the
    # digest's CPU per event unchanged). (On a 1M-event database 32 MiB seemed to keep up
    # better: it held more of an index the digest then scanned per batch, a scan
    # store/bulk.py no longer makes.)
    background_sqlite_cache_mib: int = bound(4, ge=1)
    retry_after_seconds: int = 30  # Retry-After sent with 503 (spool full, database down)

    # --- storage: retention, disk budget, cleanup (docs/storage.md) -----------------------
    # Instance defaults; each project may set its own (Settings > Storage).
    retention_days: int = bound(90, ge=1)  # events older are removed (as Sentry's 90 days)
    # An error keeps its first event and its latest N events.
    retention_events_per_error: int = bound(1000, ge=1)
    # Instance-wide disk budget: above it the oldest events go first, across projects.
    # 0: no budget. SQLite counts the database's used pages; PostgreSQL the stored bytes.
    max_data_bytes: int = bound(0, ge=0)
    cleanup_interval_seconds: float = 300.0  # pause between cleanup passes when idle
    # Longest a cleanup write transaction should hold the (SQLite) write lock; the batch
    # size adapts to it. Issue 13: "no write transaction holds the lock more than ~50 ms".
    cleanup_lock_target_ms: float = 25.0
    # Cleanup waits (up to 5 s per transaction) while this node's digest is more than this
    # many seconds behind its spool: under load it slows down rather than make the spool
    # fill and ingestion answer 503 (issue 13). 0: never waits.
    cleanup_yield_lag_seconds: float = bound(2.0, ge=0)
    # Cleanup's own disk writes per second, at most (each event removed writes 30-80 KiB of
    # pages): ingestion's spool fsyncs share the disk. Unpaced (~62 MiB/s) an fsync's p99
    # went from 0.4 to 6-8 ms, at 16 MiB/s 1.5 ms, at 8 0.4-0.65 ms. 0: no limit.
    cleanup_write_mib_per_s: float = bound(8.0, ge=0)
    usage_retention_days: int = 90  # hourly usage counters kept this long (the view shows 30)
    # zstd dictionaries per project (Sentry Relay has none; zstd's own default size)
    dictionary_bytes: int = 110 * KIB  # as zstd's --maxdict default (112,640 bytes)
    dictionary_min_events: int = 1000  # a project is trained once it stores this many events

    # --- quotas and spike protection (set per project; these are the instance's bounds) --
    # Quotas are counted per node (shared by its web workers); with several nodes behind
    # one load balancer, each enforces 1/N of every limit.
    quota_nodes: int = bound(1, ge=1)  # nodes sharing the ingest load
    spike_protection_min_per_minute: int = 120  # never limits a project below this rate
    spike_protection_seconds: int = 3600  # a detected spike's limit holds this long

    # --- web UI ------------------------------------------------------------------------
    # Signs session cookies and CSRF tokens. Empty: a random key is created once in
    # <data_dir>/secret_key (mode 0600). Several nodes on one PostgreSQL must share it.
    secret_key: str = secret()
    session_lifetime_hours: float = 168.0  # as GitLab's default session_expire_delay (1 week)
    signin_max_failures: int = 10  # per username, as GitLab's (Devise) maximum_attempts
    signin_max_failures_per_ip: int = 30  # per client address; both counted per web worker
    signin_lockout_seconds: float = 600.0  # as GitLab's unlock_in (10 minutes)
    max_form_bytes: int = 64 * KIB  # a UI form body; the largest real one is a few KiB

    # --- search and triage (issue 15) ----------------------------------------------------
    # A search query's length and its number of terms: each term is one SQL condition, so
    # both bound the work one list request can ask of the database.
    search_max_query_chars: int = 1024
    search_max_terms: int = 32
    # Bulk actions: errors changed per write transaction (short locks; the digest's batch
    # writes interleave), and at most this many per request ("all matching").
    bulk_batch_errors: int = 100
    bulk_max_errors: int = 10_000
    comment_max_chars: int = 10_000  # a comment's Markdown (GitLab's notes allow far more)

    # --- external Sentry backend (a project linked to a Sentry server) --------------------
    # Bounds on every request to the Sentry server, so a slow one cannot hold pages.
    external_connect_timeout_seconds: float = 5.0
    external_read_timeout_seconds: float = 10.0
    external_max_response_bytes: int = 1 * MIB  # as GitLab's Sentry client (1 MB)
    external_cache_seconds: float = 15.0  # list and details answers reused this long, per node
    # Allow requests to loopback, private and link-local addresses (a self-hosted Sentry
    # in the same network), as GitLab's "Allow requests to the local network from
    # webhooks and integrations". Off by default: the settings form takes any URL.
    external_allow_local_network: bool = False

    # --- alerts: email ------------------------------------------------------------------
    smtp_host: str = ""  # empty: email actions fail with "SMTP is not configured"
    smtp_port: int = bound(587, ge=1, le=65535)  # the submission port (RFC 6409)
    smtp_security: str = bound("starttls", pattern="^(starttls|tls|none)$")
    smtp_username: str = ""
    smtp_password: str = secret()
    smtp_from: str = "Tracebox <tracebox@localhost>"
    smtp_timeout_seconds: float = 10.0  # connect and each command, as GitLab's SMTP timeouts
    smtp_ca_file: str = ""  # PEM bundle trusted for the SMTP server; empty: the system's

    # --- alerts: outbound requests and delivery -------------------------------------------
    # Webhooks may reach loopback/private/link-local addresses only if allowed (GitLab's
    # "Allow requests to the local network from webhooks and integrations"; off).
    alert_allow_local_network: bool = False
    alert_connect_timeout_seconds: float = 5.0  # as the external backend
    alert_read_timeout_seconds: float = 10.0  # as GitLab's webhook read timeout (10 s)
    alert_max_response_bytes: int = 64 * KIB  # a receiver's answer is read up to this size
    alert_retry_period_hours: float = 24.0  # retries stop this long after the trigger
    alert_retry_initial_seconds: float = 30.0  # first backoff; doubles up to the maximum
    alert_retry_max_seconds: float = 3600.0  # longest pause between two attempts
    alert_lease_seconds: float = 120.0  # a claimed delivery is re-sent if not done by then
    alert_sender_poll_interval_ms: float = 500.0  # the sender's pause when nothing is due
    alert_sender_batch_size: int = bound(20, ge=1)  # deliveries claimed at once
    alert_sender_threads: int = bound(4, ge=1)  # deliveries sent concurrently
    # --- alerts: noise ---------------------------------------------------------------------
    # More than this many notifications of one rule within the window are folded into
    # one digest message (a bad deploy creating 500 errors sends 10 + 1 messages).
    alert_storm_threshold: int = bound(10, ge=1)
    alert_storm_window_seconds: float = 300.0  # "in the last 5 minutes"
    alert_storm_quiet_seconds: float = 60.0  # a digest goes out after this long without more
    alert_release_health_interval_seconds: float = 60.0  # per release, per digest process
    alert_delivery_log_days: float = 30.0  # finished deliveries are kept this long
    alert_max_rules_per_project: int = 100
    alert_max_actions_per_rule: int = 10
    alert_max_email_recipients: int = 20  # addresses of one email action
    # --- source maps and sentry-cli (docs/sourcemaps.md) --------------------------------
    # One uploaded bundle or release file, uncompressed; sentry-cli reads it as the
    # chunk-upload option maxFileSize and refuses larger uploads before sending them.
    artifact_max_upload_bytes: int = 100 * MIB
    # Artifact bytes one project may keep (uncompressed, each file counted once per
    # project); an upload past it is refused with 413 until releases are deleted.
    artifact_max_project_bytes: int = 1024 * MIB
    artifact_chunk_bytes: int = 8 * MIB  # as Sentry's chunk-upload chunkSize
    artifact_max_chunks_per_request: int = 64  # as Sentry's chunksPerRequest
    artifact_max_request_bytes: int = 32 * MIB  # as Sentry's maxRequestSize
    artifact_upload_concurrency: int = 4  # parallel chunk requests sentry-cli makes (Sentry: 8)
    artifact_chunk_ttl_hours: float = 24.0  # uploaded chunks not assembled by then are removed
    # Parsed source maps kept by the digest, measured as the bytes of the minified file
    # plus its map (a parsed map takes about 2.5 times that in memory, docs/performance.md).
    symbolication_cache_bytes: int = 256 * MIB

    # --- what SDKs send besides events (issue 12; docs/sdk-data.md) ----------------------
    # One attachment item (a file, screenshot, log file or minidump), uncompressed. Relay's
    # max_attachment_size (100 MiB) is the upper bound; the default is much smaller. A
    # larger one is dropped alone (its event is kept) and counted.
    attachment_max_bytes: int = bound(10 * MIB, ge=0, le=100 * MIB)
    # All attachments of one event (one envelope), as Relay's max_attachments_size (at
    # most 100 MiB); the attachments past it are dropped and counted.
    attachments_max_event_bytes: int = bound(20 * MIB, ge=0, le=100 * MIB)
    # Attachment bytes one project keeps (as received); new ones past it are dropped and
    # counted (`attachment_over_quota`) until retention or deletions make room.
    attachments_max_project_bytes: int = bound(1024 * MIB, ge=0)
    # One `log` item (a container of records), decompressed: the SDKs flush at 100
    # records, well under this. A larger one is dropped and its records counted.
    max_log_item_bytes: int = bound(1 * MIB, ge=0)
    # Logs are kept this many days (as Sentry's logs retention: 30 days) ...
    log_retention_days: float = bound(30.0, gt=0)
    # ... and a project keeps at most this many bytes of them: past it, the oldest go.
    logs_max_project_bytes: int = bound(256 * MIB, ge=0)
    max_client_report_bytes: int = bound(4 * KIB, ge=0)  # as Relay's max_client_reports_size

    def __init__(self, **overrides: Any) -> None:
        unknown = sorted(overrides.keys() - _FIELDS.keys())
        if unknown:
            raise SettingsError(f"unknown setting(s): {', '.join(unknown)}")
        for name, spec in _FIELDS.items():
            variable = ENV_PREFIX + name.upper()
            if name in overrides:
                value = _checked(spec, overrides[name], name)
            elif (text := os.environ.get(variable)) is not None:
                value = _checked(spec, text, variable)
            else:
                value = spec.default
            setattr(self, name, value)

    # --- derived ------------------------------------------------------------------------
    def resolved_database_url(self) -> str:
        """The database URL to use: the configured one, else SQLite in the data directory."""
        if self.database_url:
            url = self.database_url
            if url.startswith("postgresql://") or url.startswith("postgres://"):
                url = "postgresql+psycopg://" + url.split("://", 1)[1]
            return url
        return f"sqlite:///{(self.data_dir / 'tracebox.sqlite3').resolve()}"

    @property
    def spool_dir(self) -> Path:
        return self.data_dir / "spool"


# --- reading a value ---------------------------------------------------------------------
_TRUE: Final = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE: Final = frozenset({"0", "false", "f", "no", "n", "off"})


def _to_int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            value = float(value)  # "2.0" is 2, as pydantic-settings read it
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError


def _to_float(value: object) -> float:
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        return float(value)
    raise ValueError


def _to_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    word = value.strip().lower() if isinstance(value, str) else None
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ValueError


def _to_str(value: object) -> str:
    if isinstance(value, str):
        return value
    raise ValueError


def _to_path(value: object) -> Path:
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise ValueError


# A setting's annotation (a string: ``from __future__ import annotations``) -> its reader.
_READERS: Final[Mapping[str, tuple[str, Callable[[object], object]]]] = {
    "int": ("an integer", _to_int),
    "float": ("a number", _to_float),
    "bool": ("true or false", _to_bool),
    "str": ("a string", _to_str),
    "Path": ("a path", _to_path),
}


@dataclasses.dataclass(frozen=True)
class _Field:
    default: object
    kind: str  # what _READERS names it
    read: Callable[[object], object]
    limits: Mapping[str, Any]
    shown: bool  # False for a secret: its value is never quoted in an error


_FIELDS: Final[Mapping[str, _Field]] = {
    f.name: _Field(f.default, *_READERS[str(f.type)], f.metadata, f.repr)
    for f in dataclasses.fields(Settings)
}


def _checked(spec: _Field, value: object, given_as: str) -> object:
    """``value`` read as ``spec``'s type and checked against its bounds."""
    said = f"{given_as}={value!r}" if spec.shown else f"{given_as} (value not shown)"
    try:
        read = spec.read(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{said}: not {spec.kind}") from None
    limits = spec.limits
    if "pattern" in limits and not re.fullmatch(limits["pattern"], str(read)):
        raise SettingsError(f"{said}: must match {limits['pattern']}")
    if (wanted := _outside(read, limits)) is not None:
        raise SettingsError(f"{said}: must be {wanted}")
    return read


def _outside(value: Any, limits: Mapping[str, Any]) -> str | None:
    """What ``value`` must be that it is not, by ``limits`` (``bound``'s), else None."""
    if "ge" in limits and value < limits["ge"]:
        return f">= {limits['ge']}"
    if "gt" in limits and value <= limits["gt"]:
        return f"> {limits['gt']}"
    if "le" in limits and value > limits["le"]:
        return f"<= {limits['le']}"
    return None

"""The schema, as SQLAlchemy Core tables. Migrations in ``store/migrations`` create it.

Timestamps are stored as float unix seconds (UTC): the same type on SQLite and
PostgreSQL, cheap to compare and to bucket by hour. Every index names the query it
serves.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

# BigInteger ids that are still INTEGER PRIMARY KEY (rowid aliases) on SQLite.
Id = BigInteger().with_variant(Integer(), "sqlite")

users = Table(
    "users",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("username", String(255), nullable=False, unique=True),
    Column("email", String(255), nullable=False, unique=True),
    Column("name", String(255), nullable=False, default=""),
    Column("password_hash", String(255), nullable=False),
    Column("is_admin", Boolean, nullable=False, default=False),
    Column("is_blocked", Boolean, nullable=False, default=False),
    Column("created_at", Float, nullable=False),
)

personal_access_tokens = Table(
    "personal_access_tokens",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("user_id", Id, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(255), nullable=False),
    Column("token_digest", String(64), nullable=False, unique=True),  # sha256 hex
    Column("scopes", String(255), nullable=False),  # space-separated: "api read_api"
    Column("expires_at", Float, nullable=False),
    Column("revoked", Boolean, nullable=False, default=False),
    Column("created_at", Float, nullable=False),
    Column("last_used_at", Float),
    # "the tokens of a user", listed on the access tokens page and API
    Index("ix_personal_access_tokens_user", "user_id", "id"),
)

projects = Table(
    "projects",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("path", String(255), nullable=False, unique=True),  # full path, e.g. acme/web
    Column("name", String(255), nullable=False),
    Column("description", Text, nullable=False, default=""),
    Column("monitor_access_level", String(16), nullable=False, default="enabled"),
    Column("created_at", Float, nullable=False),
    # Bumped (store.projects.bump_config) when a setting the digest or ingest reads
    # changes: the digest reloads a project's configuration when it moves.
    Column("config_version", BigInteger, nullable=False, default=0, server_default="0"),
    # Bumped (store.error_hashes.bump_epoch) when errors are deleted, merged or their
    # hashes re-pointed: the digests' caches of hash -> error id are dropped when it moves.
    Column("grouping_epoch", BigInteger, nullable=False, default=0, server_default="0"),
)

project_members = Table(
    "project_members",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", Id, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("access_level", Integer, nullable=False),  # 10 Guest .. 50 Owner
    Column("created_at", Float, nullable=False),
    # "the projects a user is a member of"
    Index("ix_project_members_user", "user_id", "project_id"),
)

# One row per project once error tracking was configured (GitLab: 404 before that).
error_tracking_settings = Table(
    "error_tracking_settings",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("active", Boolean, nullable=False, default=False),
    Column("integrated", Boolean, nullable=False, default=True),
    Column("api_url", Text),  # external Sentry: https://host/api/0/projects/org/proj/
    Column("encrypted_token", Text),  # external Sentry auth token, encrypted at rest
    Column("project_name", String(255)),
    Column("organization_name", String(255)),
    Column("external_project_id", String(64)),
    Column("external_project_slug", String(255)),
    Column("external_organization_slug", String(255)),
    Column("updated_at", Float, nullable=False),
    # Where GitLab issues of this project live (https://gitlab.example.com/grp/app): an
    # issue GitLab links to an error by number becomes <this>/-/issues/<number>.
    Column("gitlab_project_url", Text),
)

# A project's privacy settings (issue 11); no row: the defaults (scrubbing on, IPs stored).
privacy_settings = Table(
    "privacy_settings",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("scrub_data", Boolean, nullable=False, default=True),
    Column("sensitive_fields", Text, nullable=False, default="[]"),  # JSON list of names
    Column("safe_fields", Text, nullable=False, default="[]"),  # JSON list of names
    Column("ip_mode", String(16), nullable=False, default="store"),
    Column("drop_user_ip", Boolean, nullable=False, default=False),
    Column("updated_at", Float, nullable=False),
)

client_keys = Table(
    "client_keys",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("public_key", String(32), nullable=False, unique=True),  # ingest auth lookup
    Column("secret_key", String(32), nullable=False),
    Column("active", Boolean, nullable=False, default=True),
    Column("created_at", Float, nullable=False),
    # "the client keys of a project", paginated by id
    Index("ix_client_keys_project", "project_id", "id"),
)

errors = Table(
    "errors",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("grouping_hash", String(32), nullable=False),
    Column("grouping_version", String(32), nullable=False),
    Column("fingerprint", Text, nullable=False),  # JSON list of the contributing components
    Column("title", Text, nullable=False),
    Column("type", String(255), nullable=False, default=""),
    Column("value", Text, nullable=False, default=""),
    Column("culprit", Text, nullable=False, default=""),
    Column("platform", String(64), nullable=False, default="other"),
    Column("level", String(16), nullable=False, default="error"),
    Column("status", String(16), nullable=False, default="unresolved"),
    Column("regressed", Boolean, nullable=False, default=False),
    Column("first_seen", Float, nullable=False),
    Column("last_seen", Float, nullable=False),
    Column("first_release", String(255)),
    Column("last_release", String(255)),
    Column("events_count", BigInteger, nullable=False, default=0),
    Column("users_count", BigInteger, nullable=False, default=0),
    Column("last_event_id", String(32)),
    Column("external_issue_url", Text),  # the linked issue (GitLab's "Create issue")
    # --- triage (issue 15): who has it, how it was resolved or ignored, "for review" ---
    # users.id; no FOREIGN KEY: SQLite can add one to a filled table only by rebuilding it,
    # which would cascade into its events. Users are blocked, never deleted.
    Column("assignee_id", Id),
    Column("resolution", String(16)),  # now | in_release | in_next_release
    Column("resolved_release", String(255)),  # fixed in this release (or the latest then)
    Column("resolved_at", Float),
    Column("ignore_until", Float),  # ignored until this moment
    Column("ignore_count", BigInteger),  # ... until this many more events
    Column("ignore_events_base", BigInteger),  # events_count when it was ignored
    Column("ignore_user_count", BigInteger),  # ... until this many more users
    Column("ignore_users_base", BigInteger),  # users_count when it was ignored
    Column("inbox_at", Float),  # new, regressed or unignored at; "is:for_review" for 7 days
    # digest: find the error of a grouping hash
    UniqueConstraint("project_id", "grouping_hash", name="uq_errors_project_hash"),
    # error lists: keyset pagination per sort order, filtered by status
    Index("ix_errors_list_last_seen", "project_id", "status", "last_seen", "id"),
    Index("ix_errors_list_first_seen", "project_id", "status", "first_seen", "id"),
    Index("ix_errors_list_frequency", "project_id", "status", "events_count", "id"),
    # "My errors": a user's assigned errors across projects, newest first
    Index("ix_errors_assignee", "assignee_id", "status", "last_seen", "id"),
    # digest: ignored errors whose "ignore until" moment has passed
    Index("ix_errors_ignore_until", "ignore_until"),
)

events = Table(
    "events",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("error_id", Id, ForeignKey("errors.id", ondelete="CASCADE"), nullable=False),
    Column("event_id", String(32), nullable=False),
    Column("timestamp", Float, nullable=False),
    Column("received_at", Float, nullable=False),
    Column("level", String(16), nullable=False),
    Column("environment", String(255)),
    Column("release", String(255)),
    Column("user_key", String(255)),
    Column("payload", LargeBinary, nullable=False),  # zstd-compressed normalized JSON
    # digest deduplication and "event by id"
    UniqueConstraint("project_id", "event_id", name="uq_events_project_event"),
    # events of an error, newest first (details page, events API, older/newer steps)
    Index("ix_events_error_time", "error_id", "timestamp", "id"),
)

# Grouping hash -> error: every hash an error answers to (the one it was created with,
# hashes of newer grouping versions that found it through a fallback hash, and, with
# merges, the hashes of the errors merged into it). The digest looks hashes up here.
error_hashes = Table(
    "error_hashes",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("hash", String(32), primary_key=True),
    Column("error_id", Id, ForeignKey("errors.id", ondelete="CASCADE"), nullable=False),
    # "the hashes of an error": merge, unmerge, and the cascade when an error is deleted
    Index("ix_error_hashes_error", "error_id"),
)

# Tag values counted per error by the digest: the SDK's tags and the derived keys of
# protocol.tags (level, environment, release, user.*, browser, os, url).
error_tags = Table(
    "error_tags",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    # the primary key serves "the tags of an error" (details page) and the digest's upsert
    Column("error_id", Id, ForeignKey("errors.id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(200), primary_key=True),
    Column("value", String(200), primary_key=True),
    Column("count", BigInteger, nullable=False),
    Column("last_seen", Float, nullable=False),
    # SQLite: rows stored in their primary key's b-tree, not twice (0010_storage)
    sqlite_with_rowid=False,
)

# Distinct users per error: users_count counts only rows really inserted.
error_users = Table(
    "error_users",
    metadata,
    Column("error_id", Id, ForeignKey("errors.id", ondelete="CASCADE"), primary_key=True),
    Column("user_key", String(255), primary_key=True),
    sqlite_with_rowid=False,  # rows stored once, in their key's b-tree (0010_storage)
)

# Hourly event counts per error (24h timeline, 30-day chart by summing days).
error_hourly = Table(
    "error_hourly",
    metadata,
    Column("error_id", Id, ForeignKey("errors.id", ondelete="CASCADE"), primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # unix seconds // 3600
    Column("count", BigInteger, nullable=False),
    sqlite_with_rowid=False,  # rows stored once, in their key's b-tree (0010_storage)
)

# Release health: one row per session (upsert by sid keeping the highest seq).
sessions = Table(
    "sessions",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("sid", String(64), primary_key=True),
    Column("did", String(255)),
    Column("release", String(255), nullable=False),
    Column("environment", String(255), nullable=False),
    Column("started", Float, nullable=False),
    Column("timestamp", Float, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),
    Column("errors", Integer, nullable=False),
    Column("duration", Float),
    # release health per release and environment
    Index("ix_sessions_release", "project_id", "release", "environment"),
)

# Pre-aggregated sessions (server/request mode SDKs), added up per release.
session_aggregates = Table(
    "session_aggregates",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("release", String(255), nullable=False),
    Column("environment", String(255), nullable=False),
    Column("started", Float, nullable=False),
    Column("did", String(255)),
    Column("exited", Integer, nullable=False),
    Column("errored", Integer, nullable=False),
    Column("crashed", Integer, nullable=False),
    Column("abnormal", Integer, nullable=False),
    # release health per release and environment
    Index("ix_session_aggregates_release", "project_id", "release", "environment"),
)

# Items accepted but not stored (transactions, attachments, ...), counted per type.
dropped_items = Table(
    "dropped_items",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("item_type", String(64), primary_key=True),
    Column("count", BigInteger, nullable=False),
)

# Digest progress: byte offset consumed per spool segment, committed with the data. Each
# node's digest reads and writes only its own rows (store.cursors; node ids: datadir).
spool_cursors = Table(
    "spool_cursors",
    metadata,
    Column("node", String(64), nullable=False),
    Column("segment", String(255), nullable=False),
    Column("position", BigInteger, nullable=False),
    PrimaryKeyConstraint("node", "segment", name="pk_spool_cursors_per_node"),
)

# --- alerts (issue 14) ------------------------------------------------------------------
# Alert rules of a project: a trigger, filters, a cooldown; actions say where to send.
alert_rules = Table(
    "alert_rules",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(255), nullable=False),
    Column("enabled", Boolean, nullable=False, default=True),
    # new_error | regression | surge | unignored | release_health
    Column("trigger", String(32), nullable=False),
    Column("threshold", Integer),  # surge: events or users; release health: minimum sessions
    Column("threshold_kind", String(16)),  # surge: events | users
    Column("window_minutes", Integer),  # surge: the window counted
    Column("compare_factor", Float),  # surge: and N times the same window a day earlier
    Column("crash_free_below", Float),  # release health: percent
    Column("environment", String(255)),  # filters: NULL matches everything
    Column("min_level", String(16)),
    Column("tag_key", String(200)),
    Column("tag_value", String(200)),
    Column("release", String(255)),
    Column("cooldown_minutes", Integer, nullable=False, default=30),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    # the digest's per-batch load of a project's rules; the rules page
    Index("ix_alert_rules_project", "project_id", "id"),
)

alert_actions = Table(
    "alert_actions",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("rule_id", Id, ForeignKey("alert_rules.id", ondelete="CASCADE"), nullable=False),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("channel", String(16), nullable=False),  # email | webhook | slack | discord | teams
    # email: addresses, space-separated ("" = the project's members); others: the URL,
    # encrypted (chat webhook URLs are credentials)
    Column("target", Text, nullable=False),
    Column("target_display", String(255), nullable=False),  # shown in lists: the URL's host
    Column("encrypted_secret", Text),  # webhook: the HMAC signing secret, encrypted
    Column("created_at", Float, nullable=False),
    # the actions of a rule
    Index("ix_alert_actions_rule", "rule_id", "id"),
)

# One row per rule firing (or a storm digest folding many): what happened, as a snapshot.
alert_notifications = Table(
    "alert_notifications",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("rule_id", Id, ForeignKey("alert_rules.id", ondelete="SET NULL")),
    Column("kind", String(32), nullable=False),  # a trigger, "storm", "assigned" or "test"
    Column("error_id", Id),  # no foreign key: the log outlives a deleted error
    Column("payload", Text, nullable=False),  # JSON
    Column("folded", Integer, nullable=False, default=0),  # storm: triggers folded in
    Column("created_at", Float, nullable=False),
    # storm detection: a rule's notifications in the last window
    Index("ix_alert_notifications_rule_time", "rule_id", "created_at"),
)

# The outbox: one row per notification and receiver, claimed by the sender with a lease.
alert_deliveries = Table(
    "alert_deliveries",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column(
        "notification_id",
        Id,
        ForeignKey("alert_notifications.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("action_id", Id, ForeignKey("alert_actions.id", ondelete="SET NULL")),
    Column("channel", String(16), nullable=False),
    Column("recipient", String(255), nullable=False),  # an email address or the URL's host
    Column("user_id", Id, ForeignKey("users.id", ondelete="SET NULL")),  # email to a member
    Column("idempotency_key", String(32), nullable=False, unique=True),
    Column("status", String(16), nullable=False),  # pending sending sent retrying failed
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Float, nullable=False),
    Column("deadline_at", Float, nullable=False),  # retries stop here: then failed
    Column("lease_owner", String(32)),
    Column("lease_until", Float),
    Column("last_error", Text),
    Column("response_status", Integer),
    Column("response_excerpt", Text),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("sent_at", Float),
    # the sender's claim: due rows by status and time
    Index("ix_alert_deliveries_due", "status", "next_attempt_at"),
    # the delivery log, newest first (keyset)
    Index("ix_alert_deliveries_project", "project_id", "created_at", "id"),
    # storm folding: the deliveries of one notification
    Index("ix_alert_deliveries_notification", "notification_id"),
)

# Cooldowns: when a rule last fired for a subject ("error:<id>", "release:<version>").
alert_cooldowns = Table(
    "alert_cooldowns",
    metadata,
    Column("rule_id", Id, ForeignKey("alert_rules.id", ondelete="CASCADE"), primary_key=True),
    Column("subject", String(300), primary_key=True),
    Column("fired_at", Float, nullable=False),
)

# A member's email notification choices per project (no row: the role's default).
alert_user_settings = Table(
    "alert_user_settings",
    metadata,
    Column("user_id", Id, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("email", Boolean, nullable=False),
    Column("triggers", String(255), nullable=False),  # space-separated trigger kinds
    Column("updated_at", Float, nullable=False),
)

# Triage history of an error (issue 15): status changes, assignments, regressions, merges,
# and comments (``kind`` "note", Markdown in ``text``), with who and when.
error_activity = Table(
    "error_activity",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("error_id", Id, ForeignKey("errors.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("user_id", Id, ForeignKey("users.id", ondelete="SET NULL")),  # None: Tracebox
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float),  # a comment's last edit
    Column("text", Text),  # a comment's Markdown source
    Column("data", Text, nullable=False, default="{}"),  # JSON: release, assignee, ids...
    # the details page's timeline, oldest first
    Index("ix_error_activity_error", "error_id", "id"),
)

# Where a merged error went: its old id keeps working (pages, both APIs).
error_redirects = Table(
    "error_redirects",
    metadata,
    Column("error_id", Id, primary_key=True),  # the id of the error that was merged away
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("target_id", Id, ForeignKey("errors.id", ondelete="CASCADE"), nullable=False),
)

# Environments the events reported (issue 15: the environment selector lists them).
project_environments = Table(
    "project_environments",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("name", String(255), primary_key=True),
    Column("first_seen", Float, nullable=False),
    Column("last_seen", Float, nullable=False),
)

# What a user chose per project and wants remembered (the environment selector).
user_project_preferences = Table(
    "user_project_preferences",
    metadata,
    Column("user_id", Id, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("environment", String(255)),  # None: all environments
    Column("updated_at", Float, nullable=False),
)

# --- storage lifecycle (issue 13): retention, quotas, usage, audit, dictionaries ----------

# Retention per project; a NULL column means the instance default (config.py).
project_retention = Table(
    "project_retention",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("max_age_days", Integer),
    Column("max_events_per_error", Integer),
    Column("updated_at", Float, nullable=False),
)

# Ingestion limits per project, or per client key when key_id is set: at most max_count
# items of a data category (Sentry's: error, session, attachment, log, ...) per window.
quotas = Table(
    "quotas",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("key_id", Id, ForeignKey("client_keys.id", ondelete="CASCADE")),
    Column("category", String(32), nullable=False),
    Column("window_seconds", Integer, nullable=False),  # 60, 3600 or 86400
    Column("max_count", BigInteger, nullable=False),
    # ingest's quota cache: the limits of a project (and its keys)
    Index("ix_quotas_project", "project_id", "key_id"),
)

# Automatic spike protection per project (off unless enabled).
spike_protection = Table(
    "spike_protection",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("enabled", Boolean, nullable=False),
    Column("multiplier", Float, nullable=False),  # limit at this many times the trailing rate
    Column("updated_at", Float, nullable=False),
)

# What each project stores now, per kind (events, attachments, logs, artifacts): added by
# the writer of each kind in its transaction, subtracted by whatever removes rows.
storage_usage = Table(
    "storage_usage",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("kind", String(32), primary_key=True),
    Column("items", BigInteger, nullable=False),
    Column("bytes", BigInteger, nullable=False),
)

# Hourly counts of what happened to items: accepted, refused (rate_limit, quota, invalid,
# too_large, ...), expired or deleted (age, count, disk_budget, request), reported by SDKs.
usage_hourly = Table(
    "usage_hourly",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # unix seconds // 3600
    Column("category", String(32), primary_key=True),  # Sentry data category: error, session...
    Column("outcome", String(16), primary_key=True),
    Column("reason", String(64), primary_key=True),  # "" where the outcome needs none
    Column("count", BigInteger, nullable=False),
    sqlite_with_rowid=False,  # rows stored once, in their key's b-tree
)

# Who did what, when: deletions and storage settings. Outlives users and projects, so
# names are copied and there is no foreign key.
audit_events = Table(
    "audit_events",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("created_at", Float, nullable=False),
    Column("author_id", Id),
    Column("author_name", String(255), nullable=False),
    Column("project_id", Id),
    Column("project_path", String(255)),
    Column("action", String(64), nullable=False),
    Column("target", Text, nullable=False),
    Column("details", Text, nullable=False),  # JSON object
    # a project's audit events, newest first
    Index("ix_audit_events_project", "project_id", "id"),
)

# Deletions too large for one transaction, done in small batches by the cleanup loop.
deletion_jobs = Table(
    "deletion_jobs",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(16), nullable=False),  # error | user | project
    Column("target", Text, nullable=False),  # error id, "email:..." (cleared when done), ""
    Column("state", String(16), nullable=False),  # pending | done
    Column("position", BigInteger, nullable=False),  # last events.id examined
    Column("events_deleted", BigInteger, nullable=False),
    Column("author_id", Id),
    Column("created_at", Float, nullable=False),
    Column("finished_at", Float),
    # the cleanup loop's queue
    Index("ix_deletion_jobs_state", "state", "id"),
)

# zstd dictionaries trained per project; a payload names its dictionary in the zstd frame
# header (dictionary id = DICTIONARY_ID_BASE + id), so old payloads stay readable.
zstd_dictionaries = Table(
    "zstd_dictionaries",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("samples", Integer, nullable=False),
    Column("sample_bytes", BigInteger, nullable=False),
    Column("plain_bytes", BigInteger, nullable=False),  # held-out samples, zstd alone
    Column("trained_bytes", BigInteger, nullable=False),  # the same, with the dictionary
    Column("created_at", Float, nullable=False),
    # the digest's "current dictionary of a project"
    UniqueConstraint("project_id", "version", name="uq_zstd_dictionaries_version"),
)

# --- releases and source map artifacts (migration 0006_sourcemaps) -----------------------

# Releases created through sentry-cli (or by an artifact upload naming one). Events and
# sessions name releases by version; the releases page joins on (project_id, version).
releases = Table(
    "releases",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("version", String(255), nullable=False),
    Column("url", Text),
    Column("created_at", Float, nullable=False),
    Column("date_started", Float),
    Column("date_released", Float),  # set by `sentry-cli releases finalize`
    # "the release of a version" (sentry-cli by version; the releases page)
    UniqueConstraint("project_id", "version", name="uq_releases_project_version"),
)

deploys = Table(
    "deploys",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("release_id", Id, ForeignKey("releases.id", ondelete="CASCADE"), nullable=False),
    Column("environment", String(255), nullable=False),
    Column("name", String(255)),
    Column("url", Text),
    Column("date_started", Float),
    Column("date_finished", Float, nullable=False),
    # "the deploys of a release", newest first
    Index("ix_deploys_release", "release_id", "date_finished"),
)

# File contents, stored once by SHA-1 whatever number of bundles and projects name them.
artifact_blobs = Table(
    "artifact_blobs",
    metadata,
    Column("checksum", String(40), primary_key=True),  # sha1 hex of the uncompressed bytes
    Column("size", BigInteger, nullable=False),  # uncompressed bytes
    Column("data", LargeBinary, nullable=False),  # zstd-compressed
    Column("created_at", Float, nullable=False),
)

# Chunks sentry-cli uploaded and has not assembled yet (any node may assemble them).
artifact_chunks = Table(
    "artifact_chunks",
    metadata,
    Column("checksum", String(40), primary_key=True),  # sha1 hex of the chunk
    Column("size", BigInteger, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", Float, nullable=False),
    # removal of chunks never assembled
    Index("ix_artifact_chunks_created", "created_at"),
)

# One uploaded artifact bundle (sentry-cli's zip) per project; '' = no release or dist.
artifact_bundles = Table(
    "artifact_bundles",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("checksum", String(40), nullable=False),  # sha1 of the whole bundle
    Column("bundle_id", String(36), nullable=False, default=""),  # the bundle's own debug id
    Column("release", String(255), nullable=False, default=""),
    Column("dist", String(64), nullable=False, default=""),
    Column("file_count", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    # assemble: the same bundle uploaded again is recognised, not stored twice
    UniqueConstraint(
        "project_id", "checksum", "release", "dist", name="uq_artifact_bundles_checksum"
    ),
)

# Every file of a bundle, and every legacy release file (bundle_id NULL).
artifact_files = Table(
    "artifact_files",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("bundle_id", Id, ForeignKey("artifact_bundles.id", ondelete="CASCADE")),
    Column("release", String(255), nullable=False, default=""),
    Column("dist", String(64), nullable=False, default=""),
    Column("url", String(1000), nullable=False),  # e.g. ~/static/app.min.js
    Column("type", String(32), nullable=False, default=""),  # minified_source, source_map, ...
    Column("debug_id", String(36)),  # lowercase UUID with dashes
    Column("sourcemap", String(1000)),  # the minified file's Sourcemap header
    Column("checksum", String(40), ForeignKey("artifact_blobs.checksum"), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("created_at", Float, nullable=False),
    # symbolication by debug ID
    Index("ix_artifact_files_debug_id", "project_id", "debug_id"),
    # symbolication by release and URL; the artifacts page of a release
    Index("ix_artifact_files_release_url", "project_id", "release", "dist", "url"),
    # "is this blob still used" after a deletion
    Index("ix_artifact_files_checksum", "checksum"),
)

# --- what SDKs send besides events (migration 0009_sdkdata; docs/sdk-data.md) ------------

# Files sent with an event (attachment items). Linked to the event by its id, not by a
# foreign key: an attachment may be digested before its event, and outlive it.
attachments = Table(
    "attachments",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("event_id", String(32), nullable=False),
    Column("name", String(255), nullable=False),
    Column("content_type", String(255), nullable=False),  # as the SDK declared it
    Column("attachment_type", String(64), nullable=False),  # event.attachment, event.minidump...
    Column("size", BigInteger, nullable=False),  # bytes as received
    Column("stored_bytes", BigInteger, nullable=False),  # bytes of its compressed chunks
    Column("sha1", String(40), nullable=False),
    Column("created_at", Float, nullable=False),
    # "the attachments of an event"; the same file re-sent with its event is stored once
    UniqueConstraint("project_id", "event_id", "name", "sha1", name="uq_attachments_event_file"),
    # a project's attachments by age (retention) and their bytes (usage, the project cap)
    Index("ix_attachments_project_created", "project_id", "created_at", "size"),
)

# An attachment's bytes in zstd-compressed chunks of at most 1 MiB (uncompressed), so a
# download streams and no row holds a whole 100 MiB file.
attachment_chunks = Table(
    "attachment_chunks",
    metadata,
    Column("attachment_id", Id, ForeignKey("attachments.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

# User feedback (feedback and user_report items). Linked to an error through its event
# (events.project_id, events.event_id) at read time, so it follows merges.
user_reports = Table(
    "user_reports",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("feedback_id", String(32), nullable=False),  # the feedback's own id
    Column("event_id", String(32)),  # the event the user answered, if any
    Column("name", String(128), nullable=False),
    Column("email", String(75), nullable=False),
    Column("comments", Text, nullable=False),
    Column("url", Text),
    Column("source", String(200), nullable=False),
    Column("release", String(200)),
    Column("environment", String(200)),
    Column("created_at", Float, nullable=False),
    # a re-sent feedback is stored once
    UniqueConstraint("project_id", "feedback_id", name="uq_user_reports_feedback"),
    # "the feedback of an event" (and of an error, through its events)
    Index("ix_user_reports_event", "project_id", "event_id"),
    # the project's feedback list, newest first (keyset)
    Index("ix_user_reports_created", "project_id", "created_at", "id"),
)

# What SDKs report they discarded (client_report items), per hour, category and reason.
client_reports = Table(
    "client_reports",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # unix seconds // 3600
    Column("category", String(32), primary_key=True),
    Column("reason", String(32), primary_key=True),
    Column("count", BigInteger, nullable=False),
)

# Structured log records (log items). Kept TRACEBOX_LOG_RETENTION_DAYS and at most
# TRACEBOX_LOGS_MAX_PROJECT_BYTES per project.
logs = Table(
    "logs",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("timestamp", Float, nullable=False),
    Column("level", String(8), nullable=False),  # trace debug info warn error fatal
    Column("severity_number", Integer),
    Column("body", Text, nullable=False),
    Column("trace_id", String(32)),
    Column("span_id", String(16)),
    Column("release", String(200)),
    Column("environment", String(200)),
    Column("logger", String(200)),
    Column("attributes", Text, nullable=False),  # JSON object of plain values
    Column("size", Integer, nullable=False),  # bytes counted against the project's cap
    # the log search, newest first (keyset), and removal of the oldest
    Index("ix_logs_project_time", "project_id", "timestamp", "id"),
    # "the logs of an event's trace" on the details page
    Index("ix_logs_trace", "project_id", "trace_id"),
)

# Records and bytes of logs per project and hour (of the record's time): the volume
# chart, the usage figures and the cap, without scanning the logs.
log_hourly = Table(
    "log_hourly",
    metadata,
    Column("project_id", Id, ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # unix seconds // 3600
    Column("count", BigInteger, nullable=False),
    Column("bytes", BigInteger, nullable=False),
)

# "The latest release" (release:latest, resolve in the next release): releases in the
# order they were created by sentry-cli or first reported by an event (issue 15).
Index("ix_releases_project_created", releases.c.project_id, releases.c.created_at)

# Search (issue 15): errors with a tag, user, release or environment value, per project.
Index(
    "ix_error_tags_search",
    error_tags.c.project_id,
    error_tags.c.key,
    error_tags.c.value,
    error_tags.c.error_id,
)

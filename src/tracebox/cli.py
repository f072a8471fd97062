"""The ``tracebox`` command. Every option also reads its TRACEBOX_* environment variable."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from tracebox import logs
from tracebox.config import Settings, SettingsError
from tracebox.models import ClientKey, Project
from tracebox.protocol.dsn import build_dsn
from tracebox.store import Database, client_keys, projects


class _Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("argument_default", argparse.SUPPRESS)
        super().__init__(**kwargs)


Command = Callable[[argparse.Namespace, Settings], int]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "command"):
        parser.print_help()
        return 2
    names = {f.name for f in dataclasses.fields(Settings)}
    overrides = {k: v for k, v in vars(args).items() if k in names}
    try:
        settings = Settings(**overrides)
    except SettingsError as e:
        print(f"tracebox: bad setting: {e}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level)
    command: Command = args.command
    return command(args, settings)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tracebox",
        description="Self-hosted error tracking.",
        # Absent options stay absent, so TRACEBOX_* variables fill them in.
        argument_default=argparse.SUPPRESS,
    )
    p.add_argument("--data-dir", type=Path, help="data directory (TRACEBOX_DATA_DIR)")
    p.add_argument("--database-url", help="database URL (TRACEBOX_DATABASE_URL)")
    p.add_argument("--external-url", help="address SDKs use (TRACEBOX_EXTERNAL_URL)")
    sub = p.add_subparsers(parser_class=_Parser)

    serve = sub.add_parser("serve", help="start the web workers and the digest worker")
    serve.add_argument("--host", help="TRACEBOX_HOST (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="TRACEBOX_PORT (default 8000)")
    serve.add_argument("--workers", type=int, help="TRACEBOX_WORKERS (default 1)")
    serve.add_argument("--data-dir", type=Path, help="TRACEBOX_DATA_DIR (default ./data)")
    serve.set_defaults(command=_serve)

    sub.add_parser("migrate", help="apply database migrations").set_defaults(command=_migrate)
    digest = sub.add_parser(
        "digest", help="run the digest and the other background units, without web workers"
    )
    digest.add_argument("--once", action="store_true", help="drain the spool, then exit")
    digest.set_defaults(command=_digest)

    project = sub.add_parser("project", help="projects").add_subparsers(parser_class=_Parser)
    create = project.add_parser("create", help="create a project with error tracking active")
    create.add_argument("path", help="full path, e.g. acme/web")
    create.add_argument("--name", default=None, help="display name (default: last segment)")
    create.set_defaults(command=_project_create)
    project.add_parser("list").set_defaults(command=_project_list)

    key = sub.add_parser("key", help="client keys (DSNs)").add_subparsers(parser_class=_Parser)
    for name, fn in (("create", _key_create), ("list", _key_list)):
        k = key.add_parser(name)
        k.add_argument("project", help="project path or id")
        k.set_defaults(command=fn)

    _account_parsers(sub)

    alerts = sub.add_parser("alerts", help="alert rules").add_subparsers(parser_class=_Parser)
    alert_test = alerts.add_parser("test", help="send a test notification to every action")
    alert_test.add_argument("project", help="project path or id")
    alert_test.add_argument("rule", help="rule id or name")
    alert_test.set_defaults(command=_alerts_test)

    test = sub.add_parser("send-test-event", help="send one event with the Python SDK")
    test.add_argument("dsn")
    test.set_defaults(command=_send_test_event)

    stats = sub.add_parser("stats", help="print stored counts, usage and the disk budget as JSON")
    stats.set_defaults(command=_stats)

    cleanup = sub.add_parser(
        "cleanup", help="apply retention and the disk budget once (serve does it periodically)"
    )
    cleanup.add_argument(
        "--dry-run", action="store_true", default=False, help="only show what would be removed"
    )
    cleanup.set_defaults(command=_cleanup)
    return p


def _account_parsers(sub: Any) -> None:
    user = sub.add_parser("user", help="users").add_subparsers(parser_class=_Parser)
    create = user.add_parser("create", help="create a user (prints a password if none given)")
    create.add_argument("username")
    create.add_argument("--email", required=True)
    create.add_argument("--name", default="")
    create.add_argument("--password", default=None, help="default: a random one, printed")
    create.add_argument("--admin", action="store_true", default=False)
    create.set_defaults(command=_user_create)
    password = user.add_parser("set-password", help="set a user's password")
    password.add_argument("username")
    password.add_argument("--password", default=None, help="default: a random one, printed")
    password.set_defaults(command=_user_set_password)

    token = sub.add_parser("token", help="personal access tokens").add_subparsers(
        parser_class=_Parser
    )
    tc = token.add_parser("create", help="create a token and print it once")
    tc.add_argument("--user", required=True, help="username")
    tc.add_argument("--scope", action="append", required=True, choices=["api", "read_api"])
    tc.add_argument("--name", default="cli")
    tc.add_argument("--expires", default=None, help="YYYY-MM-DD (default and max: a year)")
    tc.set_defaults(command=_token_create)


def _print(data: Any) -> None:
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")


NOT_MIGRATED = "the database schema is not up to date: run `tracebox migrate` first"


def _db(settings: Settings) -> Database:
    """The database, refused unless its schema is current. Only ``migrate`` (and ``serve``,
    which starts by migrating) change the schema: a command run against the wrong
    database URL by mistake must not create tables there."""
    db = Database(settings.resolved_database_url())
    if db.needs_migration():
        db.dispose()
        raise SystemExit(f"tracebox: {NOT_MIGRATED}")
    return db


def _holding_data_dir(command: Command) -> Command:
    """Refuse to run when another instance holds the data directory (message, exit 1)."""

    def run(args: argparse.Namespace, settings: Settings) -> int:
        from tracebox.datadir import DataDirInUse

        try:
            return command(args, settings)
        except DataDirInUse as e:
            print(f"tracebox: {e}", file=sys.stderr)
            return 1

    return run


@_holding_data_dir
def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from tracebox.server import serve

    serve(settings)
    return 0


def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    db = Database(settings.resolved_database_url())
    db.migrate()
    db.dispose()
    print("migrations applied")
    return 0


@_holding_data_dir
def _digest(args: argparse.Namespace, settings: Settings) -> int:
    from tracebox import datadir
    from tracebox.digest.sdkstore import SdkLimits
    from tracebox.digest.worker import DigestWorker
    from tracebox.spool import SpoolReader
    from tracebox.supervisor import heartbeat
    from tracebox.supervisor.host import run_background

    datadir.lock(settings.data_dir)  # held until the process exits
    db = _db(settings)
    if getattr(args, "once", False):
        worker = DigestWorker(
            db,
            SpoolReader(settings.spool_dir),
            batch_size=settings.digest_batch_size,
            node=datadir.node_id(settings.data_dir),
            symbolication_cache_bytes=settings.symbolication_cache_bytes,
            sdk_limits=SdkLimits.from_settings(settings),
        )
        print(f"digested {worker.drain()} records")
        return 0
    db.dispose()
    heartbeat.clear(settings.data_dir)
    run_background(settings, spawned=False)
    return 0


def _project_json(project: Project) -> dict[str, Any]:
    return {
        "id": project.id,
        "path": project.path,
        "name": project.name,
        "error_tracking": {"active": True, "integrated": True},
    }


def _project_create(args: argparse.Namespace, settings: Settings) -> int:
    path = args.path.strip("/")
    if not path or any(not part for part in path.split("/")):
        print(f"invalid project path {args.path!r}", file=sys.stderr)
        return 2
    with _db(settings).write() as conn:
        if projects.get_by_path(conn, path):
            print(f"project {path} already exists", file=sys.stderr)
            return 1
        project = projects.create(conn, path, args.name or path.rsplit("/", 1)[-1])
        projects.put_settings(conn, project.id, active=True, integrated=True)
    _print(_project_json(project))
    return 0


def _project_list(args: argparse.Namespace, settings: Settings) -> int:
    with _db(settings).read() as conn:
        _print([_project_json(p) for p in projects.list_all(conn)])
    return 0


def key_json(key: ClientKey, settings: Settings) -> dict[str, Any]:
    return {
        "id": key.id,
        "active": key.active,
        "public_key": key.public_key,
        "sentry_dsn": build_dsn(settings.external_url, key.public_key, key.project_id),
    }


def _find_project(db: Database, ref: str) -> Project | None:
    with db.read() as conn:
        if ref.isdigit():
            return projects.get(conn, int(ref))
        return projects.get_by_path(conn, ref.strip("/"))


def _key_create(args: argparse.Namespace, settings: Settings) -> int:
    db = _db(settings)
    project = _find_project(db, args.project)
    if project is None:
        print(f"no project {args.project}", file=sys.stderr)
        return 1
    with db.write() as conn:
        key = client_keys.create(conn, project.id)
    _print(key_json(key, settings))
    return 0


def _key_list(args: argparse.Namespace, settings: Settings) -> int:
    db = _db(settings)
    project = _find_project(db, args.project)
    if project is None:
        print(f"no project {args.project}", file=sys.stderr)
        return 1
    with db.read() as conn:
        keys = client_keys.list_for_project(conn, project.id, limit=10_000)
    _print([key_json(k, settings) for k in keys])
    return 0


def _send_test_event(args: argparse.Namespace, settings: Settings) -> int:
    from tracebox.testevent import send_test_event

    ok, message = send_test_event(args.dsn)
    print(message)
    return 0 if ok else 1


def _stats(args: argparse.Namespace, settings: Settings) -> int:
    from tracebox.lifecycle import report
    from tracebox.store import stats

    db = _db(settings)
    with db.read() as conn:
        counts = stats.counts(conn)
    _print(counts | {"storage": report.instance_json(report.instance(db, settings))})
    return 0


def _cleanup(args: argparse.Namespace, settings: Settings) -> int:
    import dataclasses
    import signal
    import threading

    from tracebox.lifecycle.cleanup import CleanupLoop
    from tracebox.lifecycle.plan import plan

    db = _db(settings)
    if args.dry_run:
        _print(dataclasses.asdict(plan(db, settings)))
        return 0
    # SIGINT or SIGTERM: the transaction in hand commits, then the pass stops and its
    # report says what it did so far.
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    report = CleanupLoop(db, settings).run_once(stop)
    _print(dataclasses.asdict(report) | {"interrupted": stop.is_set()})
    return 0


def _alerts_test(args: argparse.Namespace, settings: Settings) -> int:
    """Send a test notification through each action of a rule; print the answers.
    Email actions without addresses go to the members who would get the rule's emails."""
    from tracebox.alerts import rules
    from tracebox.alerts.deliver import SendContext
    from tracebox.store import alerts as alert_store

    db = _db(settings)
    project = _find_project(db, args.project)
    if project is None:
        print(f"no project {args.project}", file=sys.stderr)
        return 1
    with db.read() as conn:
        found = [
            r
            for r in alert_store.list_rules(conn, project.id)
            if str(r.id) == args.rule or r.name == args.rule
        ]
        actions = alert_store.actions_of(conn, [r.id for r in found[:1]])
        members = [m.email for m in alert_store.email_recipients(conn, project.id, "new_error")]
    if not found:
        print(f"no alert rule {args.rule} in {project.path}", file=sys.stderr)
        return 1
    rule, ctx, results = found[0], SendContext.from_settings(settings), []
    for action in actions[rule.id]:
        to = action.target.split() or members
        answer = rules.send_test(ctx, project, rule, action, to)
        results.append(
            {
                "action_id": action.id,
                "channel": action.channel.value,
                "target": action.target_display,
                "ok": answer.ok,
                "status": answer.status,
                "body": answer.body,
                "error": answer.error,
            }
        )
    _print({"rule": {"id": rule.id, "name": rule.name}, "results": results})
    return 0 if results and all(r["ok"] for r in results) else 1


def _reporting_errors(command: Command) -> Command:
    """Print a domain error (a taken username, a bad date) instead of a traceback."""

    def run(args: argparse.Namespace, settings: Settings) -> int:
        from tracebox.errors import TraceboxError

        try:
            return command(args, settings)
        except (TraceboxError, ValueError) as e:
            print(getattr(e, "message", str(e)), file=sys.stderr)
            return 1

    return run


@_reporting_errors
def _user_create(args: argparse.Namespace, settings: Settings) -> int:
    from tracebox.accounts import passwords, users

    password = args.password or passwords.random_password()
    with _db(settings).write() as conn:
        user = users.create_user(
            conn,
            username=args.username,
            email=args.email,
            name=args.name,
            password=password,
            is_admin=args.admin,
        )
    shown = {"password": password} if args.password is None else {}
    _print({"id": user.id, "username": user.username, "is_admin": user.is_admin, **shown})
    return 0


@_reporting_errors
def _user_set_password(args: argparse.Namespace, settings: Settings) -> int:
    from tracebox.accounts import passwords, users

    password = args.password or passwords.random_password()
    with _db(settings).write() as conn:
        user = users.set_password(conn, args.username, password)
    shown = {"password": password} if args.password is None else {}
    _print({"id": user.id, "username": user.username, **shown})
    return 0


@_reporting_errors
def _token_create(args: argparse.Namespace, settings: Settings) -> int:
    import datetime as dt

    from tracebox.accounts import personal_tokens
    from tracebox.accounts.tokens import expiry_date
    from tracebox.store import accounts

    expires = dt.date.fromisoformat(args.expires) if args.expires else None
    with _db(settings).write() as conn:
        user = accounts.get_by_username(conn, args.user)
        if user is None:
            print(f"no user {args.user}", file=sys.stderr)
            return 1
        token, secret = personal_tokens.issue(
            conn, user.id, name=args.name, scopes=args.scope, expires_on=expires
        )
    _print(
        {
            "id": token.id,
            "user": user.username,
            "scopes": list(token.scopes),
            "expires_at": expiry_date(token.expires_at).isoformat(),
            "token": secret,
        }
    )
    return 0

"""Realistic demo data for screenshots: a storefront with errors from several platforms
over 30 days, one chained Python exception with everything a details page shows, and
release health. Written straight through the digest's preparation and batch write."""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

from tracebox.digest.prepare import Preparer
from tracebox.protocol.event import normalize_event
from tracebox.store import Database
from tracebox.store import digest as store_digest
from tracebox.store.errors_read import set_status
from tracebox.store.tables import sessions

DAY = 86400


def _frames(*specs: tuple[str, str, int, bool, str]) -> list[dict[str, Any]]:
    frames = []
    for filename, function, lineno, in_app, line in specs:
        frames.append(
            {
                "filename": filename,
                "abs_path": "/srv/storefront/" + filename,
                "function": function,
                "module": filename.removesuffix(".py").replace("/", "."),
                "lineno": lineno,
                "in_app": in_app,
                "context_line": "    " + line,
                "pre_context": ["", f"def {function}(request, *args):", "    # ..."],
                "post_context": ["", "    return result"],
            }
        )
    return frames


def checkout_event(ts: float, user: int) -> dict[str, Any]:
    """A chained Python exception (KeyError while handling, then ValueError)."""
    library = [
        (
            "django/core/handlers/exception.py",
            "inner",
            55,
            False,
            "response = get_response(request)",
        ),
        (
            "django/core/handlers/base.py",
            "_get_response",
            197,
            False,
            "response = wrapped_callback(request, *callback_args, **callback_kwargs)",
        ),
    ]
    app = [
        (
            "shop/views/checkout.py",
            "submit_order",
            88,
            True,
            "order = orders.place(cart, request.user)",
        ),
        ("shop/orders.py", "place", 142, True, "validate_quantity(line.product, line.quantity)"),
        (
            "shop/orders.py",
            "validate_quantity",
            61,
            True,
            'raise ValueError(f"invalid quantity: {quantity}")',
        ),
    ]
    cause = [("shop/inventory.py", "stock_level", 23, True, "return STOCK[sku]")]
    return {
        "event_id": uuid.uuid4().hex,
        "timestamp": ts,
        "platform": "python",
        "level": "error",
        "logger": "shop.checkout",
        "release": "storefront@2.4.0",
        "environment": "production",
        "server_name": "web-3",
        "transaction": "/checkout/submit",
        "exception": {
            "values": [
                {
                    "type": "KeyError",
                    "value": "'SKU-1042'",
                    "module": "builtins",
                    "stacktrace": {"frames": _frames(*cause)},
                },
                {
                    "type": "ValueError",
                    "value": "invalid quantity: 7",
                    "module": "builtins",
                    "stacktrace": {"frames": _frames(*library, *app)},
                },
            ]
        },
        "breadcrumbs": {
            "values": [
                {
                    "timestamp": ts - 4.2,
                    "category": "navigation",
                    "level": "info",
                    "message": "/cart -> /checkout",
                },
                {
                    "timestamp": ts - 2.9,
                    "category": "query",
                    "level": "info",
                    "message": "SELECT * FROM cart_lines WHERE cart_id = %s",
                    "data": {"duration_ms": 3.1},
                },
                {
                    "timestamp": ts - 1.1,
                    "category": "http",
                    "level": "info",
                    "data": {
                        "method": "POST",
                        "url": "https://payments.example.com/v1/holds",
                        "status_code": 201,
                    },
                },
                {
                    "timestamp": ts - 0.2,
                    "category": "inventory",
                    "level": "warning",
                    "message": "stock level missing for SKU-1042",
                },
            ]
        },
        "tags": {
            "browser": "Firefox 132",
            "os": "Windows 11",
            "url": "https://shop.example.com/checkout",
            "customer_tier": "gold",
        },
        "user": {
            "id": f"user-{user}",
            "email": f"customer{user}@example.com",
            "ip_address": "203.0.113.24",
        },
        "request": {
            "method": "POST",
            "url": "https://shop.example.com/checkout/submit",
            "query_string": "step=confirm",
            "headers": {
                "Content-Type": "application/x-www-form-urlencoded",
                "User-Agent": "Mozilla/5.0 (Windows NT 10.0) Firefox/132.0",
                "Accept-Language": "en-GB",
            },
            "data": {"cart_id": "c_81f2", "quantity": "7"},
        },
        "contexts": {
            "runtime": {"name": "CPython", "version": "3.12.7"},
            "os": {"name": "Linux", "version": "6.1"},
            "trace": {"trace_id": "4b2e0e1c9a2f4e7c8d1b5a6f3e2d1c0b", "op": "http.server"},
        },
        "sdk": {"name": "sentry.python.django", "version": "2.19.0"},
    }


SIMPLE = [
    # (platform, type, value, culprit module, function, weight, release, level)
    (
        "node",
        "TypeError",
        "Cannot read properties of undefined (reading 'price')",
        "app/cart",
        "renderTotals",
        60,
        "storefront-web@5.12.1",
        "error",
    ),
    (
        "python",
        "OperationalError",
        "database is locked",
        "shop.db",
        "commit",
        25,
        "storefront@2.4.0",
        "error",
    ),
    (
        "go",
        "*url.Error",
        'Post "https://payments.example.com/v1/charges": context deadline exceeded',
        "payments/client",
        "Charge",
        18,
        "payments@1.8.3",
        "error",
    ),
    (
        "java",
        "java.lang.NullPointerException",
        'Cannot invoke "Address.getZip()" because "customer.address" is null',
        "com.example.shipping.Quote",
        "estimate",
        9,
        "shipping@3.1.0",
        "error",
    ),
    (
        "ruby",
        "ActiveRecord::RecordNotFound",
        "Couldn't find Coupon with 'code'=SPRING24",
        "CouponsController",
        "apply",
        6,
        "admin@7.0.2",
        "warning",
    ),
    (
        "php",
        "ErrorException",
        'Undefined array key "currency"',
        "App\\Http\\Controllers\\InvoiceController",
        "show",
        3,
        "billing@4.2.0",
        "warning",
    ),
    (
        "rust",
        "Panic",
        "called `Option::unwrap()` on a `None` value",
        "search::index",
        "lookup",
        2,
        "search@0.9.4",
        "fatal",
    ),
]


def simple_event(spec: tuple[Any, ...], ts: float, user: int) -> dict[str, Any]:
    platform, type_, value, module, function, _, release, level = spec
    return {
        "event_id": uuid.uuid4().hex,
        "timestamp": ts,
        "platform": platform,
        "level": level,
        "release": release,
        "environment": "production",
        "exception": {
            "values": [
                {
                    "type": type_,
                    "value": value,
                    "stacktrace": {
                        "frames": [
                            {
                                "module": module,
                                "function": function,
                                "lineno": 40 + len(value) % 50,
                                "in_app": True,
                                "filename": module.replace(".", "/").replace("::", "/") + ".src",
                            }
                        ]
                    },
                }
            ]
        },
        "user": {"id": f"user-{user}"},
    }


def message_event(ts: float) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "timestamp": ts,
        "platform": "python",
        "level": "warning",
        "release": "storefront@2.4.0",
        "message": "Payment provider answered 502, retrying",
        "logger": "shop.payments",
    }


def populate(db: Database, project_id: int, *, seed: int = 7) -> None:
    rng = random.Random(seed)
    now = time.time()
    raws: list[dict[str, Any]] = []
    for _i in range(140):  # the featured error: busy today, present all month
        age = rng.random() ** 2.2 * 30 * DAY
        raws.append(checkout_event(now - age, rng.randrange(40)))
    for spec in SIMPLE:
        for _ in range(spec[5]):
            age = rng.random() ** 1.5 * 30 * DAY
            raws.append(simple_event(spec, now - age, rng.randrange(200)))
    raws += [message_event(now - rng.random() * 6 * DAY) for _ in range(12)]
    preparer = Preparer()
    prepared = [
        preparer.prepare_event(
            project_id, normalize_event(r, received_at=now, client_ip="192.0.2.1")
        )
        for r in raws
    ]
    with db.write() as conn:
        store_digest.write_events(conn, prepared)
        _sessions(conn, project_id, rng, now)
    _regress(db, project_id, preparer, now)


def _regress(db: Database, project_id: int, preparer: Preparer, now: float) -> None:
    """Resolve the PHP error, then let a new event reopen it (marked regressed)."""
    from sqlalchemy import select

    from tracebox.store.tables import errors

    with db.write() as conn:
        error_id = conn.execute(
            select(errors.c.id).where(
                errors.c.project_id == project_id, errors.c.type == "ErrorException"
            )
        ).scalar_one()
        set_status(conn, project_id, error_id, "resolved")
        event = simple_event(SIMPLE[5], now - 300, 3)
        store_digest.write_events(
            conn,
            [
                preparer.prepare_event(
                    project_id, normalize_event(event, received_at=now, client_ip="192.0.2.1")
                )
            ],
        )


def _sessions(conn: Any, project_id: int, rng: random.Random, now: float) -> None:
    plan = [
        ("storefront@2.4.0", "production", 1800, 0.004),
        ("storefront@2.4.0", "staging", 240, 0.02),
        ("storefront@2.3.1", "production", 2600, 0.011),
        ("storefront@2.3.0", "production", 900, 0.061),
    ]
    updates = []
    for n, (release, env, count, crash_rate) in enumerate(plan):
        for _i in range(count):
            crashed = rng.random() < crash_rate
            errored = not crashed and rng.random() < 0.05
            started = now - (n + 1) * DAY - rng.random() * DAY
            updates.append(
                {
                    "sid": uuid.uuid4().hex,
                    "did": f"device-{rng.randrange(count // 2 + 1)}",
                    "release": release,
                    "environment": env,
                    "started": started,
                    "timestamp": started + 60,
                    "seq": 2,
                    "status": "crashed" if crashed else "exited",
                    "errors": 1 if (crashed or errored) else 0,
                    "duration": 60.0,
                }
            )
    # Plain inserts: every sid is new, so no upsert is needed.
    conn.execute(sessions.insert(), [{"project_id": project_id, **u} for u in updates])

"""SDK fingerprints override or extend the default grouping."""

from __future__ import annotations

from typing import Any

import pytest

from tests.grouping.samples import GO, JAVA, PYTHON, Event
from tracebox.grouping import calculate


def _python(fingerprint: Any = None, **keys: Any) -> Event:
    event = PYTHON.copy() | keys
    if fingerprint is not None:
        event["fingerprint"] = fingerprint
    return event


def test_static_fingerprint_groups_different_errors_together() -> None:
    python, java = _python(["payment-failed"]), JAVA.copy() | {"fingerprint": ["payment-failed"]}
    assert calculate(python).components == ["fingerprint", "payment-failed"]
    assert calculate(python).hash == calculate(java).hash


@pytest.mark.parametrize("default", ["{{ default }}", "{{default}}", "{{  Default  }}"])
def test_default_alone_is_the_default_grouping(default: str) -> None:
    assert calculate(_python([default])) == calculate(_python())


def _tenant(event: Event, tenant: str) -> Event:
    fingerprint = ["{{ default }}", "{{ tags.tenant }}"]
    return event | {"tags": [["region", "eu"], ["tenant", tenant]], "fingerprint": fingerprint}


def test_default_with_a_tag_is_a_hybrid() -> None:
    acme = calculate(_tenant(PYTHON.copy(), "acme"))
    assert acme.components == ["fingerprint", *PYTHON.components, "acme"]
    other_value = PYTHON.copy()
    other_value["exception"]["values"][0]["value"] = "invalid literal for int(): 'xyz'"
    assert acme.hash == calculate(_tenant(other_value, "acme")).hash
    assert acme.hash != calculate(_tenant(PYTHON.copy(), "globex")).hash
    assert acme.hash != calculate(_tenant(GO.copy(), "acme")).hash
    assert acme.hash != calculate(PYTHON.copy()).hash


# (entry, expected component) on the Python sample with a log entry, logger and tags.
VARIABLES = [
    ("{{ transaction }}", "/checkout/"),
    ("{{ type }}", "ValueError"),
    ("{{ error.type }}", "ValueError"),
    ("{{ value }}", "invalid literal for int(): 'abc'"),
    ("{{ error.value }}", "invalid literal for int(): 'abc'"),
    ("{{ function }}", "load_order"),
    ("{{ stack.function }}", "load_order"),
    ("{{ module }}", "shop.orders"),
    ("{{ stack.module }}", "shop.orders"),
    ("{{ path }}", "/srv/shop/releases/2024.05.1/shop/orders.py"),
    ("{{ stack.abs_path }}", "/srv/shop/releases/2024.05.1/shop/orders.py"),
    ("{{ stack.filename }}", "shop/orders.py"),
    ("{{ package }}", "<no-package>"),
    ("{{ level }}", "error"),
    ("{{ logger }}", "shop.checkout"),
    ("{{ message }}", "Checkout failed for order 17"),
    ("{{ tags.region }}", "eu-west-1"),
    ("{{ tags.missing }}", "<no-value-for-tag-missing>"),
    ("{{ unknown.variable }}", "{{ unknown.variable }}"),  # kept literally, as Sentry
    ("{{ two words }}", "{{ two words }}"),  # not a variable: \S+ only
    ("prefix {{ type }}", "prefix {{ type }}"),  # must match the whole entry
]


@pytest.mark.parametrize("entry, expected", VARIABLES)
def test_variables(entry: str, expected: str) -> None:
    event = _python(
        ["{{ default }}", entry],
        transaction="/checkout/",
        logger="shop.checkout",
        tags=[["region", "eu-west-1"]],
        logentry={
            "message": "Checkout failed for order %s",
            "formatted": "Checkout failed for order 17",
        },
    )
    assert calculate(event).components[-1] == expected


# (entry, placeholder) on an event with nothing but a level.
MISSING = [
    ("{{ transaction }}", "<no-transaction>"),
    ("{{ type }}", "<no-type>"),
    ("{{ value }}", "<no-value>"),
    ("{{ function }}", "<no-function>"),
    ("{{ module }}", "<no-module>"),
    ("{{ package }}", "<no-package>"),
    ("{{ path }}", "<no-path>"),
    ("{{ stack.filename }}", "<no-filename>"),
    ("{{ logger }}", "<no-logger>"),
    ("{{ message }}", "<no-message>"),
]


@pytest.mark.parametrize("entry, placeholder", MISSING)
def test_missing_values_become_placeholders(entry: str, placeholder: str) -> None:
    assert calculate({"level": "info", "fingerprint": [entry]}).components == [
        "fingerprint",
        placeholder,
    ]


def test_crash_frame_variables_are_normalized_and_prefer_in_app() -> None:
    # Java: the newest frame is library code (Optional.orElseThrow); the crash frame is
    # the newest in-app one, whose lambda counter must not split the group.
    event = JAVA.copy() | {"fingerprint": ["{{ module }}", "{{ function }}"]}
    assert calculate(event).components == [
        "fingerprint",
        "com.example.shop.service.OrderService",
        "lambda$placeOrder",
    ]


def test_message_variable_falls_back_to_exception_value() -> None:
    assert calculate(GO.copy() | {"fingerprint": ["{{ message }}"]}).components[1] == (
        "order 42: not found"
    )


@pytest.mark.parametrize("fingerprint", [[], "payment", {"a": 1}, [None, 3], 42])
def test_unusable_fingerprint_is_ignored(fingerprint: Any) -> None:
    assert calculate(_python(fingerprint)) == calculate(_python())

"""Which frames contribute, and what each contributes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.grouping.samples import Event, Frame, error, frame
from tracebox.grouping import calculate


def _components(platform: str, frames: list[Frame], type_: str = "Error") -> list[str]:
    return calculate(error(platform, type_, "boom", frames)).components


def _frame_component(platform: str, **keys: Any) -> str:
    """The component of one in-app frame."""
    components = _components(platform, [{"lineno": 1, "in_app": True, **keys}])
    assert components[-1] == "Error"
    return components[1]


# (platform, function, module, expected component); the generated part of each name
# differs per build or per call site and must not reach the component.
FUNCTIONS = [
    ("python", "<lambda>", "shop.tasks", "shop.tasks:<lambda>"),
    ("python", "Checkout.post", "shop.views", "shop.views:Checkout.post"),
    ("node", "Object.getUser", "src.routes:users", "src.routes:users:getUser"),
    ("node", "Module.load", "src:app", "src:app:load"),
    ("node", "new OrderService", "src:orders", "src:orders:OrderService"),
    ("node", "async fetchOrder", "src:orders", "src:orders:fetchOrder"),
    ("node", "Layer.handle [as handle_request]", "express.lib.router:layer",
     "express.lib.router:layer:Layer.handle"),
    ("java", "lambda$placeOrder$0", "com.example.Orders", "com.example.Orders:lambda$placeOrder"),
    ("java", "lambda$placeOrder$12", "com.example.Orders", "com.example.Orders:lambda$placeOrder"),
    ("java", "access$000", "com.example.Orders", "com.example.Orders:access$"),
    ("java", "apply", "com.example.Orders$$Lambda$123/0x0000000800c4b440",
     "com.example.Orders$$Lambda:apply"),
    ("java", "apply", "com.example.Orders$$Lambda/0x000001f0a1234cd0",
     "com.example.Orders$$Lambda:apply"),
    ("java", "save", "com.example.Repo$$EnhancerBySpringCGLIB$$5e4a3f2b",
     "com.example.Repo$$EnhancerBySpringCGLIB:save"),
    ("java", "save", "com.example.Repo$$SpringCGLIB$$0", "com.example.Repo$$SpringCGLIB:save"),
    ("java", "invoke", "jdk.internal.reflect.GeneratedMethodAccessor97",
     "jdk.internal.reflect.GeneratedMethodAccessor:invoke"),
    ("java", "find", "jdk.proxy2.$Proxy45", "jdk.proxy.$Proxy:find"),
    ("java", "getName", "com.example.User$HibernateProxy$Ab12Cd",
     "com.example.User$HibernateProxy:getName"),
    ("go", "(*OrderHandler).Create.func1", "github.com/acme/shop",
     "github.com/acme/shop:(*OrderHandler).Create.func"),
    ("go", "(*OrderHandler).Create.func2.3", "github.com/acme/shop",
     "github.com/acme/shop:(*OrderHandler).Create.func"),
    ("go", "main.gowrap1", "main", "main:main.gowrap"),
    ("go", "main.(*Server).Handle", "main", "main:main.(*Server).Handle"),
    ("ruby", "block in total", None, "order.rb:block in total"),
    ("ruby", "block (3 levels) in total", None, "order.rb:block in total"),
    ("ruby", "_app_views_orders_show_html_erb__4418376117452584339_70264542391260", None,
     "order.rb:_app_views_orders_show_html_erb"),
    ("ruby", "block in _app_views_orders_show_html_erb___2392340112352_70123", None,
     "order.rb:block in _app_views_orders_show_html_erb"),
    ("php", "App\\Services\\OrderService::{closure}", None,
     "order.rb:App\\Services\\OrderService::{closure}"),
    ("php", "{closure:App\\Services\\OrderService::place():42}", None, "order.rb:{closure}"),
    ("php", "class@anonymous/var/www/app/Jobs/Sync.php:12$0::handle", None,
     "order.rb:class@anonymous::handle"),
    ("native", "shop::db::get::h0123456789abcdef", None, "order.rb:shop::db::get"),
    ("native", "shop::db::Pool<T>::get::hfedcba9876543210", None, "order.rb:shop::db::Pool::get"),
    ("native", "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop", None,
     "order.rb:<alloc::vec::Vec as core::ops::drop::Drop>::drop"),
    ("native", "core::iter::Iterator::collect::<Vec<_>>", None,
     "order.rb:core::iter::Iterator::collect"),
    ("native", "shop::main::{{closure}}", None, "order.rb:shop::main::{{closure}}"),
    ("native", "<unknown>", None, "order.rb:?"),
]  # fmt: skip


@pytest.mark.parametrize("platform, function, module, expected", FUNCTIONS)
def test_generated_parts_of_names_are_removed(
    platform: str, function: str, module: str | None, expected: str
) -> None:
    keys = {"module": module} if module else {"filename": "app/models/Order.rb"}
    assert _frame_component(platform, function=function, **keys) == expected


def test_platform_rules_do_not_touch_other_languages() -> None:
    # `Object.` is a V8 receiver, but a Python class may well be called Object.
    assert _frame_component("python", function="Object.save", module="m") == "m:Object.save"
    assert _frame_component("python", function="runner.func1", module="m") == "m:runner.func1"
    assert _frame_component("python", function="<module>", module="m") == "m:<module>"


# (filename or abs_path, expected location): base name, lowercased, never the directory.
FILENAMES = [
    ("app/models/Order.rb", "order.rb"),
    ("/srv/shop/releases/20240501/app/models/order.rb", "order.rb"),
    ("C:\\inetpub\\shop-1.2\\App\\Order.php", "order.php"),
    ("app:///dist/routes/users.js", "users.js"),
    ("webpack://shop/./src/routes/users.js?3f2a", "users.js"),
    ("https://cdn.example.com/static/js/main.3f2a1b9c.js", "?"),  # hashed bundle: ignored
    ("http://localhost:3000/main.js", "?"),
    ("app://shop", "?"),  # only a host
    ("<anonymous>", "?"),
    ("[native code]", "?"),
]


@pytest.mark.parametrize("filename, expected", FILENAMES)
def test_file_location(filename: str, expected: str) -> None:
    assert _frame_component("javascript", function="f", filename=filename) == f"{expected}:f"


def test_module_takes_precedence_over_file() -> None:
    component = _frame_component("python", function="f", module="shop.views", filename="x.py")
    assert component == "shop.views:f"


def test_abs_path_is_used_only_without_filename() -> None:
    component = _frame_component("php", function="f", abs_path="/var/www/releases/7/src/A.php")
    assert component == "a.php:f"


def test_frame_known_only_by_address_contributes_nothing() -> None:
    frames = [
        frame("main", 3, True, filename="main.c"),
        {"instruction_addr": "0x55d4c3a1b2c0", "in_app": True},
    ]
    assert _components("native", frames) == ["exception", "main.c:main", "Error"]


def test_frame_platform_overrides_event_platform() -> None:
    # A React Native event mixes JavaScript and native frames.
    frames = [frame("Object.render", 1, True, filename="app.js", platform="javascript")]
    assert _components("native", frames)[1] == "app.js:render"


def test_without_any_in_app_frame_all_frames_contribute() -> None:
    frames = [frame("run", 1, False, module="lib.a"), frame("call", 2, None, module="lib.b")]
    assert _components("python", frames) == ["exception", "lib.a:run", "lib.b:call", "Error"]


def test_unknown_in_app_counts_as_library_next_to_in_app_frames() -> None:
    frames = [frame("run", 1, None, module="lib.a"), frame("handle", 2, True, module="app")]
    assert _components("python", frames) == ["exception", "app:handle", "Error"]


def test_link_without_in_app_frames_contributes_all_its_frames() -> None:
    app = {"type": "AppError", "stacktrace": {"frames": [frame("handle", 2, True, module="app")]}}
    lib_frames = [frame("connect", 9, False, module="lib.net")]
    lib = {"type": "OSError", "stacktrace": {"frames": lib_frames}}
    event: Event = {"platform": "python", "exception": {"values": [lib, app]}}
    expected = ["exception", "lib.net:connect", "OSError", "app:handle", "AppError"]
    assert calculate(event).components == expected


def test_recursion_contributes_once() -> None:
    once = [frame("walk", 10, True, module="tree"), frame("leaf", 20, True, module="tree")]
    deep = [frame("walk", 10, True, module="tree")] * 2 + [frame("walk", 12, True, module="tree")]
    deep.append(frame("leaf", 20, True, module="tree"))
    assert _components("python", deep) == _components("python", once)
    assert _components("python", once) == ["exception", "tree:walk", "tree:leaf", "Error"]


def test_synthetic_type_does_not_contribute() -> None:
    event = error("native", "SIGSEGV", "Segfault", [frame("main", 3, True, filename="main.c")])
    event["exception"]["values"][0]["mechanism"] = {"type": "signalhandler", "synthetic": True}
    assert calculate(event).components == ["exception", "main.c:main"]


# Exceptions without stack: the type and the value, its variable parts normalized.
def _stackless(type_: str, value: str) -> Event:
    return {"platform": "go", "exception": {"values": [{"type": type_, "value": value}]}}


def test_exception_without_stack_groups_on_type_and_value() -> None:
    value = 'Get "https://api.example.com/v1/orders/42": dial tcp 10.0.0.7:443: i/o timeout'
    grouping = calculate(_stackless("*url.Error", value))
    expected = 'Get "<url>": dial tcp <ip>:<int>: i/o timeout'
    assert grouping.components == ["exception", "*url.Error", expected]


@pytest.mark.parametrize(
    "a, b, same",
    [
        (("KeyError", "'user 42'"), ("KeyError", "'user 97'"), True),
        (("ValueError", "order 0x7f3a"), ("ValueError", "order 0x11"), True),
        (("KeyError", "'user'"), ("KeyError", "'order'"), False),
        (("KeyError", "'user 42'"), ("IndexError", "'user 42'"), False),
    ],
)
def test_stackless_exceptions(a: tuple[str, str], b: tuple[str, str], same: bool) -> None:
    assert (calculate(_stackless(*a)).hash == calculate(_stackless(*b)).hash) is same

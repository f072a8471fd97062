"""Small but realistic normalized error events, one per SDK platform.

Frames are oldest first, as the normalizer stores them; abs_paths hold each platform's
usual deploy directory, whose version string is ``Sample.deploy`` so that a test can move
the event to another deploy.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

Event = dict[str, Any]
Frame = dict[str, Any]


@dataclass(frozen=True)
class Sample:
    platform: str
    event: Event
    deploy: str  # the version string inside every deployed abs_path
    components: list[str]  # what grouping must produce for ``event``

    def copy(self) -> Event:
        return copy.deepcopy(self.event)


def frame(function: str, lineno: int, in_app: bool | None, **keys: Any) -> Frame:
    """A frame with the keys every SDK sends, plus ``keys`` (module, filename, abs_path...)."""
    data = {"function": function, "lineno": lineno, "in_app": in_app}
    return {**data, "context_line": f"    {function}()", **keys}


def error(platform: str, type_: str, value: str, frames: list[Frame]) -> Event:
    exception = {
        "type": type_,
        "value": value,
        "mechanism": {"type": "generic", "handled": False},
        "stacktrace": {"frames": frames},
    }
    return {"platform": platform, "level": "error", "exception": {"values": [exception]}}


# Compact on purpose: one frame per line or two reads like a stack trace.
# fmt: off
_PY = "/srv/shop/releases/2024.05.1"
_SITE = f"{_PY}/venv/lib/python3.11/site-packages"
PYTHON = Sample("python", error("python", "ValueError", "invalid literal for int(): 'abc'", [
    frame("inner", 55, False, module="django.core.handlers.exception",
          filename="django/core/handlers/exception.py",
          abs_path=f"{_SITE}/django/core/handlers/exception.py"),
    frame("_get_response", 197, False, module="django.core.handlers.base",
          filename="django/core/handlers/base.py",
          abs_path=f"{_SITE}/django/core/handlers/base.py"),
    frame("checkout", 42, True, module="shop.views", filename="shop/views.py",
          abs_path=f"{_PY}/shop/views.py",
          context_line="    order = load_order(request.GET['id'])"),
    frame("load_order", 17, True, module="shop.orders", filename="shop/orders.py",
          abs_path=f"{_PY}/shop/orders.py",
          context_line="    return Order.objects.get(pk=int(order_id))"),
]), "2024.05.1", ["exception", "shop.views:checkout", "shop.orders:load_order", "ValueError"])

_NODE = "/srv/shop/releases/v1.4.2"
NODE = Sample("node", error("node", "TypeError", "Cannot read properties of undefined", [
    frame("processTicksAndRejections", 95, False, colno=5, module="task_queues",
          filename="node:internal/process/task_queues",
          abs_path="node:internal/process/task_queues"),
    frame("Layer.handle [as handle_request]", 95, False, colno=5, module="express.lib.router:layer",
          filename=f"{_NODE}/node_modules/express/lib/router/layer.js",
          abs_path=f"{_NODE}/node_modules/express/lib/router/layer.js"),
    frame("Object.getUser", 31, True, colno=23, module="src.routes:users",
          filename=f"{_NODE}/src/routes/users.js", abs_path=f"{_NODE}/src/routes/users.js"),
    frame("async UserService.findById", 12, True, colno=40, module="src.services:users",
          filename=f"{_NODE}/src/services/users.js", abs_path=f"{_NODE}/src/services/users.js"),
]), "v1.4.2", ["exception", "src.routes:users:getUser", "src.services:users:UserService.findById",
               "TypeError"])

# The JVM reports no paths: the deploy string is the SDK version in the release tag.
JAVA = Sample("java", error("java", "IllegalStateException", "Order 1234 not found", [
    frame("run", 833, False, module="java.lang.Thread", filename="Thread.java"),
    frame("invoke", -1, False, module="jdk.internal.reflect.GeneratedMethodAccessor123"),
    frame("placeOrder", 58, True, module="com.example.shop.web.OrderController",
          filename="OrderController.java"),
    frame("lambda$placeOrder$0", 77, True, module="com.example.shop.service.OrderService",
          filename="OrderService.java"),
    frame("orElseThrow", 403, False, module="java.util.Optional", filename="Optional.java"),
]) | {"release": "shop@6.18.1"}, "6.18.1", [
    "exception", "com.example.shop.web.OrderController:placeOrder",
    "com.example.shop.service.OrderService:lambda$placeOrder", "IllegalStateException"])

_GO = "/home/runner/work/shop/shop-v1.8.0"
GO = Sample("go", error("go", "*errors.errorString", "order 42: not found", [
    frame("(*conn).serve", 1995, False, module="net/http", filename="server.go",
          abs_path="/usr/local/go/src/net/http/server.go"),
    frame("(*OrderHandler).Create", 41, True, module="github.com/acme/shop/handlers",
          filename="order.go", abs_path=f"{_GO}/handlers/order.go"),
    frame("(*OrderHandler).Create.func1", 48, True, module="github.com/acme/shop/handlers",
          filename="order.go", abs_path=f"{_GO}/handlers/order.go"),
    frame("(*Store).Get", 102, True, module="github.com/acme/shop/store", filename="store.go",
          abs_path=f"{_GO}/store/store.go"),
]), "v1.8.0", ["exception", "github.com/acme/shop/handlers:(*OrderHandler).Create",
               "github.com/acme/shop/handlers:(*OrderHandler).Create.func",
               "github.com/acme/shop/store:(*Store).Get", "*errors.errorString"])

_RB = "/srv/shop/releases/20240501120000"
_GEMS = "/usr/local/bundle/gems"
RUBY = Sample("ruby", error("ruby", "NoMethodError", "undefined method `price' for nil:NilClass", [
    frame("block in spawn_thread", 147, False, filename="puma/thread_pool.rb",
          abs_path=f"{_GEMS}/puma-6.4.0/lib/puma/thread_pool.rb"),
    frame("process_action", 6, False, filename="action_controller/metal/basic_implicit_render.rb",
          abs_path=f"{_GEMS}/actionpack-7.1.3/lib/action_controller/metal/basic_implicit_render.rb"),
    frame("show", 12, True, filename="app/controllers/orders_controller.rb",
          abs_path=f"{_RB}/app/controllers/orders_controller.rb"),
    frame("block (2 levels) in total", 33, True, filename="app/models/order.rb",
          abs_path=f"{_RB}/app/models/order.rb"),
]), "20240501120000", ["exception", "orders_controller.rb:show", "order.rb:block in total",
                       "NoMethodError"])

_PHP = "/var/www/releases/42"
_LARAVEL = "/vendor/laravel/framework/src/Illuminate"
PHP = Sample("php", error("php", "InvalidArgumentException", "Order #981 is invalid", [
    frame("Illuminate\\Routing\\Controller::callAction", 54, False,
          filename=f"{_LARAVEL}/Routing/Controller.php",
          abs_path=f"{_PHP}{_LARAVEL}/Routing/Controller.php"),
    frame("App\\Http\\Controllers\\OrderController::show", 27, True,
          filename="/app/Http/Controllers/OrderController.php",
          abs_path=f"{_PHP}/app/Http/Controllers/OrderController.php"),
    frame("App\\Services\\OrderService::{closure}", 88, True,
          filename="/app/Services/OrderService.php",
          abs_path=f"{_PHP}/app/Services/OrderService.php"),
]), "releases/42", [
    "exception", "ordercontroller.php:App\\Http\\Controllers\\OrderController::show",
    "orderservice.php:App\\Services\\OrderService::{closure}", "InvalidArgumentException"])

# sentry-rust reports platform "native"; symbols keep rustc's build hash.
_RS = "/home/ci/build/shop-1.2.0"
_RUSTC = "/rustc/90c541806f23a127002de5b4038be731ba1458ca/library"
RUST = Sample("native", error("native", "ParseIntError", "invalid digit found in string", [
    frame("std::rt::lang_start::h3e5f7a9b1c2d4e6f", 165, False, filename="rt.rs",
          abs_path=f"{_RUSTC}/std/src/rt.rs", instruction_addr="0x55d4c3a1b2c0"),
    frame("shop::handlers::create_order::h0a1b2c3d4e5f6789", 58, True, filename="src/handlers.rs",
          abs_path=f"{_RS}/src/handlers.rs", instruction_addr="0x55d4c3a1c4d8"),
    frame("shop::db::Pool<T>::get::hfedcba9876543210", 21, True, filename="src/db.rs",
          abs_path=f"{_RS}/src/db.rs", instruction_addr="0x55d4c3a1d010"),
    frame("core::result::Result<T,E>::unwrap::h1111222233334444", 1077, False, filename="result.rs",
          abs_path=f"{_RUSTC}/core/src/result.rs", instruction_addr="0x55d4c3a1e2f4"),
]), "shop-1.2.0", ["exception", "handlers.rs:shop::handlers::create_order",
                   "db.rs:shop::db::Pool::get", "ParseIntError"])
# fmt: on

SAMPLES = [PYTHON, NODE, JAVA, GO, RUBY, PHP, RUST]

// Entry point: the build label module first (so builds differ in every column after
// it), then the Sentry browser SDK, then the shop.
import { buildLabel } from "./format.js";
import * as Sentry from "@sentry/browser";
import { Cart } from "./cart.js";

const config = window.TRACEBOX || {};

Sentry.init({
  dsn: config.dsn,
  release: config.release || undefined,
  environment: "test",
  sampleRate: 1.0,
  beforeSend(event) {
    // The test reads the id to find the event through Tracebox's API.
    document.body.dataset.eventId = event.event_id;
    return event;
  },
});

function checkout() {
  const cart = new Cart();
  cart.add("book", 1250);
  document.getElementById("total").textContent = cart.total();
}

document.getElementById("checkout").addEventListener("click", () => {
  // Thrown from an event handler: the SDK's global handler reports it.
  setTimeout(checkout, 0);
});
document.body.dataset.build = buildLabel;
document.body.dataset.ready = "true";

// Tracebox: small progressive enhancements. Every page and form works without this file.
// Loaded as a file (the Content-Security-Policy forbids inline scripts).
(function () {
  "use strict";

  var CONNECTION_FAILED = "Connection failed. Check auth token and try again";

  function showCopyButtons(root) {
    root.querySelectorAll(".copy-button[hidden]").forEach(function (b) { b.hidden = false; });
  }

  function copy(button) {
    var input = document.getElementById(button.getAttribute("data-copy"));
    if (!input) return;
    var done = function () {
      var label = button.textContent;
      button.textContent = "Copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(done, function () { fallbackCopy(input, done); });
    } else {
      fallbackCopy(input, done);
    }
  }

  function fallbackCopy(input, done) {
    input.focus();
    input.select();
    try { if (document.execCommand("copy")) done(); } catch (e) { /* the text stays selected */ }
  }

  function syncBackend(form) {
    var chosen = form.querySelector("input[name=backend]:checked");
    form.querySelectorAll(".backend-panel").forEach(function (panel) {
      panel.hidden = !chosen || panel.getAttribute("data-backend") !== chosen.value;
    });
  }

  function setStatus(form, kind, text, detail) {
    var box = form.querySelector("#connect-status");
    var old = form.querySelector("#connect-error");
    if (old) old.remove();
    box.className = "connect-status" + (kind ? " flash flash-" + kind : "");
    box.textContent = text;
    if (detail) {
      var span = document.createElement("span");
      span.className = "detail";
      span.textContent = detail.charAt(0).toUpperCase() + detail.slice(1) + ".";
      box.appendChild(span);
    }
  }

  function connect(button) {
    var form = button.form;
    var apiUrl = form.querySelector("#api_url").value.trim();
    var token = form.querySelector("#auth_token").value.trim();
    var select = form.querySelector("#project");
    var url = button.getAttribute("data-projects-url") +
      "?api_host=" + encodeURIComponent(apiUrl) + "&token=" + encodeURIComponent(token);
    button.disabled = true;
    setStatus(form, "", "Connecting…");
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok || !Array.isArray(body.projects)) {
            setStatus(form, "alert", CONNECTION_FAILED, body && body.message);
            return;
          }
          var previous = select.value;
          while (select.options.length > 1) select.remove(1);
          body.projects.forEach(function (p) {
            var option = document.createElement("option");
            option.value = p.organization_slug + "/" + p.slug;
            option.textContent = p.organization_name + " | " + p.name;
            if (previous === option.value) option.selected = true;
            select.appendChild(option);
          });
          select.options[0].textContent = "Select project";
          setStatus(form, "notice", "Connected: " + body.projects.length + " projects found.");
        });
      })
      .catch(function () { setStatus(form, "alert", CONNECTION_FAILED); })
      .finally(function () { button.disabled = false; });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) return;
    if (button.classList.contains("copy-button")) {
      event.preventDefault();
      copy(button);
    } else if (button.id === "connect-button") {
      event.preventDefault();
      connect(button);
    }
  });

  document.addEventListener("submit", function (event) {
    var message = event.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);

  document.addEventListener("change", function (event) {
    if (event.target.name === "backend") syncBackend(event.target.form);
  });

  function init(root) {
    showCopyButtons(root);
    root.querySelectorAll("#error-tracking-settings").forEach(syncBackend);
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (event) { init(event.target); });
})();

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
    if (event.target.hasAttribute("data-autosubmit") && event.target.form) {
      event.target.form.requestSubmit();
    }
  });

  // The error list's keys: j/k move, o opens, r/i/a resolve, ignore, assign to me;
  // Escape leaves the search box so the keys reach the list.
  var selectedRow = -1;

  function errorRows() {
    return Array.prototype.slice.call(document.querySelectorAll("#error-list tr.error-row"));
  }

  function selectRow(index) {
    var rows = errorRows();
    if (!rows.length) return;
    selectedRow = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach(function (row, i) { row.classList.toggle("selected", i === selectedRow); });
    var link = rows[selectedRow].querySelector("a.error-title");
    if (link) link.focus({ preventScroll: true });
    rows[selectedRow].scrollIntoView({ block: "nearest" });
  }

  function submitRowForm(key) {
    var row = errorRows()[selectedRow];
    var form = row && row.querySelector('form[data-key="' + key + '"]');
    if (form) form.requestSubmit();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    var target = event.target;
    if (event.key === "Escape" && target.id === "query") {
      event.preventDefault();  // keep the query (a search field clears itself on Escape)
      target.blur();
      return;
    }
    if (target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
    if (!document.getElementById("error-list") || !errorRows().length) return;
    var key = event.key;
    if (key === "j") selectRow(selectedRow + 1);
    else if (key === "k") selectRow(selectedRow < 0 ? 0 : selectedRow - 1);
    else if (key === "o" && selectedRow >= 0) window.location.href = errorRows()[selectedRow].getAttribute("data-href");
    else if ((key === "r" || key === "i" || key === "a") && selectedRow >= 0) submitRowForm(key);
    else return;
    event.preventDefault();
  });

  function init(root) {
    showCopyButtons(root);
    root.querySelectorAll("#error-tracking-settings").forEach(syncBackend);
    if (selectedRow >= 0 && root.querySelector && root.querySelector("tr.error-row")) {
      selectRow(selectedRow);  // the list was swapped in: keep the place
    }
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:load", function (event) { init(event.target); });
})();

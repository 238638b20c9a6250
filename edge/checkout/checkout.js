// The hosted checkout page's script. The page works without it: each button
// is a form that posts the order's CSRF token and is answered 303 back to the
// page. This script makes the page live instead: it submits the forms with
// fetch, polls the order's state (the interval is the server's: fast while a
// step is in flight, slow while the order waits for the user, never once it
// is final) so that each step shows as it happens, keeps the countdown, and
// once the order is COMPLETED goes to the partner's redirect URL. It writes
// only text (textContent), never HTML, so the order's data cannot become
// markup; everything it needs comes from data- attributes, since the
// Content-Security-Policy allows no inline script.
(function () {
  "use strict";

  var root = document.getElementById("checkout");
  if (!root || !window.fetch || !window.URLSearchParams) {
    return;
  }

  function $(id) { return document.getElementById(id); }
  function num(name, fallback) {
    var v = Number(root.getAttribute(name));
    return isFinite(v) && v >= 0 ? v : fallback;
  }

  var stateURL = new URL(root.getAttribute("data-state"), location.href).href;
  var redirectMs = num("data-redirect-ms", 1500);
  var status = root.getAttribute("data-status");
  var pollTimer = 0;
  var polling = false;   // a state request is in flight
  var again = false;     // another was asked for meanwhile
  var busy = false;      // an action is being submitted
  var leaving = false;   // the redirect is scheduled
  var deadline = performance.now() + num("data-remaining-ms", 0);
  var expiredShown = false;

  function terminal(s) {
    return s === "COMPLETED" || s === "FAILED" || s === "REFUNDED" || s === "EXPIRED";
  }

  function notice(text) {
    var n = $("notice");
    n.textContent = text || "";
    n.hidden = !text;
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function utc(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + " UTC";
  }

  function span(cls, text) {
    var s = document.createElement("span");
    s.className = cls;
    s.textContent = text;
    return s;
  }

  function renderHistory(history) {
    var list = $("history");
    if (list.children.length === history.length) {
      return; // steps are only ever appended
    }
    var items = [];
    history.forEach(function (h) {
      var li = document.createElement("li");
      li.setAttribute("data-status", h.status);
      li.appendChild(span("step", h.status));
      li.appendChild(document.createTextNode(" "));
      li.appendChild(span("step-label", h.label));
      var t = document.createElement("time");
      t.dateTime = new Date(h.at).toISOString();
      t.textContent = utc(h.at);
      li.appendChild(t);
      if (h.reason) { li.appendChild(span("reason", h.reason)); }
      if (h.txHash) { li.appendChild(span("mono hash", h.txHash)); }
      items.push(li);
    });
    list.replaceChildren.apply(list, items);
  }

  // safeURL accepts only an http(s) address, whatever the state says.
  function safeURL(raw) {
    try {
      var u = new URL(raw);
      return u.protocol === "https:" || u.protocol === "http:" ? u.href : "";
    } catch (e) {
      return "";
    }
  }

  function leave(raw) {
    var target = safeURL(raw);
    if (!target || leaving) {
      return;
    }
    leaving = true;
    $("redirect-link").href = target;
    $("redirect-note").hidden = false;
    setTimeout(function () { location.assign(target); }, redirectMs);
  }

  function render(st) {
    status = st.status;
    root.setAttribute("data-status", st.status);
    $("status").textContent = st.status;
    $("status-label").textContent = st.statusLabel;
    renderHistory(st.history || []);

    var actions = st.actions || [];
    ["pay", "fail", "refund"].forEach(function (a) {
      $("action-" + a).hidden = actions.indexOf(a) < 0;
    });
    $("actions").hidden = actions.length === 0;

    deadline = performance.now() + st.expiresInMs;
    $("countdown").hidden = st.status !== "CREATED";
    if (st.expired && !expiredShown) {
      expiredShown = true;
      notice("This checkout has expired: it was not paid in time, and no payment was taken.");
    }
    if (st.txHash) {
      $("tx-hash").textContent = st.txHash;
      $("tx").hidden = false;
    }
    $("done").hidden = st.status !== "COMPLETED";
    if (st.status === "COMPLETED" && st.redirect) {
      leave(st.redirect);
    }
  }

  function schedule(ms) {
    clearTimeout(pollTimer);
    pollTimer = ms > 0 ? setTimeout(poll, ms) : 0;
  }

  function poll() {
    clearTimeout(pollTimer);
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    var wait = 3000;
    fetch(stateURL, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" })
      .then(function (res) {
        return res.json().then(function (body) {
          if (res.ok && body && body.data) {
            render(body.data);
            wait = body.data.pollMs;
          } else if (res.status === 404) {
            notice("This checkout no longer exists.");
            wait = 0;
          }
        });
      })
      .catch(function () { /* the network blinked: ask again later */ })
      .then(function () {
        polling = false;
        if (again) {
          again = false;
          poll();
          return;
        }
        schedule(wait);
      });
  }

  // messageOf reads the reason of a refused action from the page the
  // server answered with, parsed inertly (DOMParser runs no script).
  function messageOf(res) {
    return res.text().then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var m = doc.getElementById("message");
      return m && m.textContent.trim() ? m.textContent.trim() : "The request was refused (HTTP " + res.status + ").";
    });
  }

  function setBusy(on) {
    busy = on;
    Array.prototype.forEach.call(document.querySelectorAll("form.action button"), function (b) {
      b.disabled = on;
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("form.action"), function (form) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (busy) {
        return;
      }
      setBusy(true);
      notice("");
      fetch(form.action, {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        credentials: "same-origin",
        redirect: "manual"
      })
        .then(function (res) {
          // Accepted: the answer is a 303 back to this page, which
          // redirect: "manual" leaves unfollowed.
          if (res.type === "opaqueredirect" || res.ok) {
            return "";
          }
          return messageOf(res);
        })
        .catch(function () { return "The request did not reach the service. Check your connection and try again."; })
        .then(function (msg) {
          if (msg) { notice(msg); }
          setBusy(false);
          poll();
        });
    });
  });

  function tick() {
    if (status !== "CREATED") {
      return;
    }
    var left = Math.max(0, Math.round((deadline - performance.now()) / 1000));
    $("time-left").textContent = Math.floor(left / 60) + ":" + pad(left % 60);
    if (left === 0 && !expiredShown) {
      poll(); // the server says EXPIRED, and the page stops offering to pay
    }
  }
  setInterval(tick, 1000);
  tick();

  if (status === "COMPLETED" && root.getAttribute("data-redirect")) {
    leave(root.getAttribute("data-redirect"));
  } else if (!terminal(status)) {
    schedule(num("data-poll-ms", 3000));
  }
}());

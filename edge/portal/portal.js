// The partner portal's script. Every action of the portal is a plain form
// that works without it; the script only asks before a destructive action
// and, on a delivery log with a delivery on its way, reloads the page
// every couple of seconds so that its attempts show as they happen. It
// talks to nothing but its own pages.
(function () {
  "use strict";
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var q = form.getAttribute("data-confirm");
    if (q && !window.confirm(q)) {
      ev.preventDefault();
    }
  });
  var every = parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  if (every > 0) {
    window.setTimeout(function () { window.location.reload(); }, every);
  }
})();

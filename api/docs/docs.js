// Renders the API reference at /docs from the document the service serves
// at /v1/openapi.json, with the vendored Redoc bundle. It is a file of its
// own, served from the same origin, so that the page's
// Content-Security-Policy can refuse every inline and foreign script.
(function () {
  "use strict";
  var el = document.getElementById("redoc");
  var spec = new URL(el.getAttribute("data-spec-url"), document.baseURI).href;
  Redoc.init(spec, {
    expandResponses: "200,201,202",
    jsonSampleExpandLevel: 4,
    requiredPropsFirst: true,
    pathInMiddlePanel: true,
    showExtensions: ["x-rate-limit-bucket", "x-mode", "x-anonymous-free", "x-http-status"],
    hideHostname: true,
    theme: {
      typography: {
        fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
        headings: { fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" },
        code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" }
      }
    }
  }, el);
})();

// Change requests to the refcam server (webui/http_guard.py): a JSON body, and the access token
// the page was opened with (?token=... in its address) in the X-Refcam-Token header.
"use strict";
window.refcamPost = (function () {
  const token = new URLSearchParams(window.location.search).get("token");
  return function (url, body) {
    const headers = { "Content-Type": "application/json" };
    if (token) headers["X-Refcam-Token"] = token;
    return fetch(url, { method: "POST", headers: headers, body: JSON.stringify(body || {}), credentials: "same-origin" });
  };
})();

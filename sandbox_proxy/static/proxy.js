// webhost sandbox proxy: loads one MCP App into an inner frame and relays JSON-RPC between it and
// the host page (mcp-apps §13.2/§13.3). An ES module, no build step; its frame tokens come from
// ./constants.js, generated from the backend's (python -m webhost.page_constants).
//
// Trust notes. This page runs on the App's own per-server origin and, in the default design, the
// App's frame is same-origin with it, so the App can run code in this realm: every check here is
// advisory and the host page must distrust everything from this origin. What the App cannot change
// is the CSP (an HTTP header on this document, inherited by the App) and frame-ancestors.
// @ts-check
import { PERMISSION_TOKENS, SANDBOX_TOKENS } from "./constants.js";

(function () {
  "use strict";

  var MAX_MESSAGE_CHARS = 16 * 1024 * 1024;
  var RESERVED_PREFIX = "ui/notifications/sandbox-";
  var RESOURCE_READY = "ui/notifications/sandbox-resource-ready";
  // Inner frame sandbox tokens this proxy will ever grant: no top navigation, popups, modals, downloads.
  /** @type {readonly string[]} */
  var SANDBOX_ALLOWED = SANDBOX_TOKENS;
  /** @type {Readonly<Record<string, string>>} */
  var PERMISSIONS = PERMISSION_TOKENS;
  var MAX_VIOLATION_REPORTS = 50;
  var OWN_ORIGIN = window.location.origin;

  /** @param {string} why */
  function refuse(why) {
    // Render nothing; a console line helps whoever is debugging a blank frame.
    if (window.console) console.warn("webhost sandbox proxy refused: " + why);
  }

  /** @param {string} name */
  function metaContent(name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute("content") || "" : "";
  }

  /** @param {string} text */
  function words(text) {
    return String(text).split(/\s+/).filter(Boolean);
  }

  // 1. The proxy must be framed.
  if (window.self === window.top) return refuse("not framed");

  // 2. The host origin: the embedder as the browser reports it, accepted only if the sandbox
  // server listed it (from the signed token). Chromium/WebKit expose ancestorOrigins, which the
  // embedder cannot suppress; Firefox has only the referrer (so the host must not send no-referrer).
  var configured = words(metaContent("webhost-host-origins"));
  var ancestor = location.ancestorOrigins && location.ancestorOrigins.length ? location.ancestorOrigins[0] : "";
  var referrerOrigin = "";
  if (document.referrer) {
    try { referrerOrigin = new URL(document.referrer).origin; } catch (e) { referrerOrigin = ""; }
  }
  var HOST_ORIGIN = ancestor || referrerOrigin;
  if (!HOST_ORIGIN || configured.indexOf(HOST_ORIGIN) < 0) return refuse("embedder is not a host origin");
  if (ancestor && referrerOrigin && referrerOrigin !== ancestor) return refuse("referrer and ancestor differ");

  // 3. Self-test: the top window must be cross-origin to us, or we are not isolated from the host.
  try {
    void /** @type {Window} */ (window.top).location.href;
    return refuse("top window is same-origin");
  } catch (e) { /* expected: SecurityError */ }

  var grantedAllow = metaContent("webhost-allow").split(";").map(function (t) { return t.trim(); })
    .filter(Boolean);
  var grantedSandbox = words(metaContent("webhost-sandbox")).filter(function (t) {
    return SANDBOX_ALLOWED.indexOf(t) >= 0;
  });

  /** @type {HTMLIFrameElement | null} */
  var inner = null;        // the App's iframe, once loaded
  /** @type {string | null} */
  var innerOrigin = null;  // OWN_ORIGIN (same-origin inner frame) or "null" (opaque)
  var loaded = false;
  var violations = 0;

  var MAX_ID_CHARS = 200;  // the host's own bound on a request id (static/js/apps/messages.js validId)

  // A plain-JSON copy of a JSON-RPC 2.0 message ({msg}), or why there is none ({reason}): oversized data,
  // non-JSON values (ports, blobs, cyclic objects) and anything that is not a request, notification or
  // response are not passed on. ({} without a reason: not JSON-RPC at all, silently ignored.)
  /** @param {unknown} data @returns {{msg?: any, reason?: string}} */
  function cleanMessage(data) {
    var text;
    try { text = JSON.stringify(data); } catch (e) { return { reason: "it is not JSON (a cyclic or non-JSON value)" }; }
    if (typeof text !== "string") return {};
    if (text.length > MAX_MESSAGE_CHARS) return { reason: "it is larger than " + MAX_MESSAGE_CHARS + " characters" };
    var msg = JSON.parse(text);
    if (!msg || typeof msg !== "object" || Array.isArray(msg) || msg.jsonrpc !== "2.0") return {};
    if (typeof msg.method === "string") return { msg: msg };
    if ("id" in msg && ("result" in msg || "error" in msg)) return { msg: msg };
    return { reason: "method is not a string" };
  }

  // The id of a JSON-RPC request in `data` (read from the structured clone, whatever else it holds), or null.
  /** @param {any} data @returns {string | number | null} */
  function requestId(data) {
    if (!data || typeof data !== "object" || Array.isArray(data) || data.jsonrpc !== "2.0") return null;
    if (!("method" in data) || "result" in data || "error" in data) return null;
    var id = data.id;
    if (typeof id === "string" && id.length <= MAX_ID_CHARS) return id;
    return typeof id === "number" && isFinite(id) ? id : null;
  }

  /** @param {unknown} v */
  function isTruthy(v) { return !!v; }

  // Inner sandbox: what the host asked for, limited to the allow-list and to what the token granted.
  /** @param {unknown} requested */
  function sandboxTokens(requested) {
    if (typeof requested !== "string") return grantedSandbox.slice();
    return words(requested).filter(function (t, i, all) {
      return grantedSandbox.indexOf(t) >= 0 && all.indexOf(t) === i;
    });
  }

  // Inner allow: requested permissions, limited to what the token granted.
  /** @param {any} permissions @returns {string[]} */
  function allowTokens(permissions) {
    if (!permissions || typeof permissions !== "object") return grantedAllow.slice();
    /** @type {string[]} */
    var out = [];
    Object.keys(PERMISSIONS).forEach(function (name) {
      var token = PERMISSIONS[name];
      if (isTruthy(permissions[name]) && grantedAllow.indexOf(token) >= 0) out.push(token);
    });
    return out;
  }

  /** @param {SecurityPolicyViolationEvent} event */
  function reportViolation(event) {
    // Advisory only: the App can forge this too (it shares our realm), so the host just displays it.
    if (violations >= MAX_VIOLATION_REPORTS) return;
    violations += 1;
    window.parent.postMessage({
      jsonrpc: "2.0",
      method: "ui/notifications/sandbox-csp-violation",
      params: {
        blockedURI: String(event.blockedURI || "").slice(0, 2048),
        effectiveDirective: String(event.effectiveDirective || ""),
        violatedDirective: String(event.violatedDirective || ""),
        disposition: String(event.disposition || ""),
        sourceFile: String(event.sourceFile || "").slice(0, 2048),
        lineNumber: Number(event.lineNumber) || 0
      }
    }, HOST_ORIGIN);
  }

  // A warm proxy (served from /warm before any App was chosen, under a fixed bootstrap policy) does not
  // write the App into an inherited document: it loads the App's own document from /app?p=<the open's
  // token> on this origin, which brings the App's policy in its header, and writes the App into that.
  var WARM = metaContent("webhost-mode") === "warm";

  /** @param {HTMLIFrameElement} frame @param {string[]} tokens @param {string[]} allow */
  function styleFrame(frame, tokens, allow) {
    // Attributes before insertion: sandbox flags are fixed when the frame's first document is made.
    frame.setAttribute("sandbox", tokens.join(" "));
    if (allow.length) frame.setAttribute("allow", allow.join("; "));
    frame.setAttribute("title", "MCP App");
    // CSSOM, not a style attribute, so this works whatever style-src says.
    document.documentElement.style.height = "100%";
    document.body.style.margin = "0";
    document.body.style.height = "100%";
    document.body.style.overflow = "hidden";
    frame.style.border = "0";
    frame.style.display = "block";
    frame.style.width = "100%";
    frame.style.height = "100%";
  }

  /** @param {HTMLIFrameElement} frame @param {string} html */
  function writeApp(frame, html) {
    var doc = /** @type {Document} */ (frame.contentDocument);
    doc.open();
    // After open() (which erases listeners) and before write(), so parse-time violations count.
    doc.addEventListener("securitypolicyviolation", reportViolation);
    doc.write(html);
    doc.close();
  }

  /** @param {any} params */
  function loadApp(params) {
    if (!params || typeof params.html !== "string") return refuse("resource-ready without html");
    if (WARM) return loadWarm(params);
    var tokens = sandboxTokens(params.sandbox);
    var allow = allowTokens(params.permissions);
    var sameOrigin = tokens.indexOf("allow-same-origin") >= 0;
    var frame = document.createElement("iframe");
    styleFrame(frame, tokens, allow);
    inner = frame;
    innerOrigin = sameOrigin ? OWN_ORIGIN : "null";
    if (sameOrigin) {
      // document.write keeps the frame on our origin (storage, CORS work) and makes the App inherit
      // this document's CSP header ("header mode", mcp-apps §6.4).
      document.body.appendChild(frame);
      writeApp(frame, params.html);
    } else {
      // An opaque frame cannot be written into from here; srcdoc also inherits our policy.
      frame.srcdoc = params.html;
      document.body.appendChild(frame);
    }
  }

  // Warm mode: the App's document starts loading on APP_DOCUMENT (sent just before the HTML, so the
  // request for /app overlaps the transfer of the HTML), and the HTML is written once both are here.
  var APP_DOCUMENT = "ui/notifications/sandbox-webhost-app-document";
  /** @type {string | null} */
  var warmUrl = null;       // the /app URL being loaded
  /** @type {Document | null} */
  var warmDoc = null;       // the App's document, once it loaded and checked out
  /** @type {string | null} */
  var warmHtml = null;      // the App's HTML, once it arrived

  /** @param {any} params */
  function loadWarmDocument(params) {
    if (warmUrl !== null) return refuse("a second app document ignored");
    var url;
    try { url = new URL(String(params && params.appUrl), OWN_ORIGIN); } catch (e) { url = null; }
    warmUrl = "";  // one document per proxy, whatever happens to this one
    if (!url) return refuse("warm frame without an app URL");
    // Bound to this origin: another server's App document cannot be loaded here (and the sandbox
    // listener refuses a token for another label on this Host anyway).
    if (url.origin !== OWN_ORIGIN || url.pathname !== "/app") return refuse("app URL is not this origin's /app");
    var tokens = sandboxTokens(params.sandbox);
    // Only same-origin Apps come warm (the host opens the others cold): we write into the document.
    if (tokens.indexOf("allow-same-origin") < 0 || tokens.indexOf("allow-scripts") < 0) {
      return refuse("a warm frame serves same-origin Apps only");
    }
    warmUrl = url.href;
    var frame = document.createElement("iframe");
    styleFrame(frame, tokens, []);  // a warm frame was made before any permission was granted: none
    inner = frame;
    innerOrigin = OWN_ORIGIN;
    frame.addEventListener("load", function () {
      var doc = frame.contentDocument;
      // The App's document must be /app's (its policy), not an error page or about:blank.
      var meta = doc && doc.querySelector('meta[name="webhost-sandbox"]');
      if (!doc || !meta) {
        frame.remove();
        return refuse("the App's document did not load (token refused?)");
      }
      var granted = words(meta.getAttribute("content") || "");
      if (!tokens.every(function (t) { return granted.indexOf(t) >= 0; })) {
        frame.remove();
        return refuse("the App's token does not grant this sandbox");
      }
      warmDoc = doc;
      writeWarm();
    }, { once: true });
    frame.src = url.href;
    document.body.appendChild(frame);
  }

  /** @param {any} params */
  function loadWarm(params) {
    if (warmUrl === null) loadWarmDocument(params);
    else if (String(params.appUrl) !== warmUrl && new URL(String(params.appUrl), OWN_ORIGIN).href !== warmUrl) {
      return refuse("the HTML is for another app document");
    }
    warmHtml = params.html;
    writeWarm();
  }

  function writeWarm() {
    if (warmDoc === null || warmHtml === null || !inner) return;
    var html = warmHtml;
    warmHtml = null;
    writeApp(inner, html);
  }

  /** @param {any} msg */
  function fromHost(msg) {
    if (msg.method === RESOURCE_READY) {
      if (loaded) return refuse("second sandbox-resource-ready ignored");
      loaded = true;  // one App per proxy, whatever happens to this one: a frame is never reused
      return loadApp(msg.params);
    }
    if (WARM && msg.method === APP_DOCUMENT && !loaded) return loadWarmDocument(msg.params);
    if (typeof msg.method === "string" && msg.method.indexOf(RESERVED_PREFIX) === 0) return;
    if (!inner || !inner.contentWindow) return;
    // An opaque origin cannot be named as a target, hence "*" only in that mode.
    inner.contentWindow.postMessage(msg, innerOrigin === "null" ? "*" : /** @type {string} */ (innerOrigin));
  }

  /** @param {any} msg */
  function fromApp(msg) {
    // Reserved sandbox methods never come from the App (spec: forward only non-sandbox methods).
    // The forged message itself is dropped; the host is told that one was (advisory, rate-limited).
    if (typeof msg.method === "string" && msg.method.indexOf(RESERVED_PREFIX) === 0) {
      answerRefused(msg, "a reserved sandbox method");
      reportDropped(msg.method);
      return;
    }
    window.parent.postMessage(msg, HOST_ORIGIN);
  }

  /** @param {unknown} method @param {string} [reason] why a request was refused (absent: a reserved method) */
  function reportDropped(method, reason) {
    if (violations >= MAX_VIOLATION_REPORTS) return;
    violations += 1;
    /** @type {Record<string, string>} */
    var params = { method: String(method).slice(0, 200) };
    if (reason) params.reason = reason;
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-dropped", params: params }, HOST_ORIGIN);
  }

  // A request from the App this proxy cannot pass on still gets an answer at once (the App would otherwise
  // wait for its own timeout), and the host is told (advisory, rate-limited like every report).
  /** @param {unknown} data @param {string} reason */
  function refuseRequest(data, reason) {
    if (!answerRefused(data, reason)) return;
    var method = /** @type {any} */ (data).method;
    reportDropped(typeof method === "string" ? method : "(a method that is not a string)", reason);
  }

  // Answer a request of the App's with an error; false when `data` is no request (nothing to answer).
  /** @param {unknown} data @param {string} reason */
  function answerRefused(data, reason) {
    var id = requestId(data);
    if (id === null || !inner || !inner.contentWindow) return false;
    inner.contentWindow.postMessage({ jsonrpc: "2.0", id: id, error: { code: -32600, message: "Invalid Request: " + reason } },
      innerOrigin === "null" ? "*" : /** @type {string} */ (innerOrigin));
    return true;
  }

  window.addEventListener("message", function (event) {
    var fromParent = event.source === window.parent && event.origin === HOST_ORIGIN;
    var fromInner = inner !== null && event.source === inner.contentWindow && event.origin === innerOrigin;
    if (!fromParent && !fromInner) return;  // other windows, the App's own nested frames: drop
    var clean = cleanMessage(event.data);
    if (!clean.msg) {
      if (fromInner && clean.reason) refuseRequest(event.data, clean.reason);
      return;
    }
    if (fromParent) fromHost(clean.msg); else fromApp(clean.msg);
  });

  // 4. Tell the host we are ready for the App (the listener above is already attached).
  window.parent.postMessage(
    { jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, HOST_ORIGIN);
})();

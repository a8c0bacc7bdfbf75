// The live page: server-sent events fill the ruling card, the status, the state and the rulings log.
// window.refcam keeps what arrived and when, for the browser tests' latency figures.
// No game is named here: views are drawn by their kind, settings come from the game's options.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const refcam = (window.refcam = { rulings: [], events: 0, connectedAt: null, config: null, lastState: null,
    status: null, card: null });
  // The access token comes in the page's own address (?token=...); changes send it, watching needs none.
  const TOKEN = new URLSearchParams(location.search).get("token") || "";

  function changeHeaders() {
    const h = { "Content-Type": "application/json" };
    if (TOKEN) h["X-Refcam-Token"] = TOKEN;
    return h;
  }

  // ----- small helpers ---------------------------------------------------------------------
  function short(text) {
    // piece names without their game's prefix ("boat-2", not "tornado/boat-2"), in any text
    const ids = ((refcam.config && refcam.config.games) || []).map((g) => g.id);
    if (!ids.length) return String(text);
    return String(text).replace(new RegExp("\\b(?:" + ids.join("|") + ")/(?=[A-Za-z0-9])", "g"), "");
  }

  function clock(seconds) {
    if (typeof seconds !== "number" || !isFinite(seconds)) return "";
    const s = Math.max(0, Math.floor(seconds));
    return String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }

  function fmt(v) {
    return typeof v === "number" ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)) : String(v);
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function showAlert(text) {
    const a = $("alert");
    a.hidden = !text;
    a.textContent = text || "";
  }

  // ----- one status, from the server's status event ----------------------------------------
  const STATUS_CLASS = { "in play": "in-play", stable: "stable", "source ended": "ended", "camera lost": "lost", error: "error" };

  function setStatus(ev) {
    const shown = ev.shown || (ev.status === "stable" ? "stable" : "in play");
    refcam.status = shown;
    const s = $("status");
    s.textContent = shown;
    s.className = "status " + (STATUS_CLASS[shown] || "in-play");
    s.dataset.status = shown;
    const src = ev.source_status || "";
    if (ev.error) showAlert("source stopped: " + ev.error);
    else if (shown === "source ended") showAlert("the replay has ended: the last rulings stand (" + ev.frames + " frames)");
    else if (shown === "camera lost") showAlert(src || "camera lost; retrying");
    else showAlert("");
    const running = shown === "in play" || shown === "stable";
    $("source-line").textContent = [refcam.config ? refcam.config.source : "", running ? src : "",
      running && ev.fps ? ev.fps + " fps" : ""].filter(Boolean).join(" · ");
  }

  // ----- the ruling card and the spoken rulings --------------------------------------------
  function verdictOf(r) {
    const cannot = /cannot tell|too close to call|cannot judge/i.test(r.summary || "");
    if (r.legal === true) return { cls: "legal", word: "LEGAL" };
    if (r.legal === false) return { cls: "illegal", word: "ILLEGAL" };
    if (cannot) return { cls: "undecided", word: "CANNOT TELL" };
    if (r.kind === "move" && r.legal == null) return { cls: "undecided", word: "NOT JUDGED" };
    if (r.kind === "warning") return { cls: "warning", word: "WARNING" };
    return { cls: "info", word: String(r.kind || "ruling").toUpperCase() };
  }

  function showCard(r, gameT, seq) {
    const v = verdictOf(r);
    const card = $("card");
    card.className = "card " + v.cls;
    card.dataset.seq = seq;
    $("card-verdict").textContent = v.word;
    $("card-text").textContent = short(r.summary);
    $("card-rule").textContent = r.rule || "";
    $("card-time").textContent = clock(gameT);
    refcam.card = { seq: seq, shown_ms: Date.now(), summary: r.summary };
  }

  function speak(r) {
    if (!$("speak").checked || !("speechSynthesis" in window)) return;
    const v = verdictOf(r);
    const words = (v.cls === "legal" || v.cls === "illegal" || v.cls === "undecided" ? v.word.toLowerCase() + ": " : "") + short(r.summary);
    window.speechSynthesis.speak(new SpeechSynthesisUtterance(words));
  }

  // ----- the rulings log: newest first, game time, warnings folded, a filter ---------------
  const folded = new Map(); // a warning's text (numbers aside) -> its log entry

  function logEntry(cls, verdict, text, rule, gameT) {
    const li = el("li", null, cls);
    if (verdict) li.appendChild(el("span", verdict, "verdict"));
    li.appendChild(el("span", clock(gameT), "when"));
    li.appendChild(el("span", short(text), "text"));
    if (rule) li.appendChild(el("span", rule, "rule"));
    return li;
  }

  function addToLog(li) {
    const log = $("log");
    log.insertBefore(li, log.firstChild);
    while (log.children.length > 300) log.removeChild(log.lastChild);
  }

  function logRuling(r, gameT) {
    if (r.kind === "warning") return logWarning(r.summary, gameT);
    const v = verdictOf(r);
    const shown = v.cls === "legal" || v.cls === "illegal" || v.cls === "undecided" ? v.word : "";
    addToLog(logEntry(v.cls, shown, r.summary, r.rule, gameT));
  }

  function logWarning(message, gameT) {
    const key = String(message).replace(/[-+]?\d[\d.]*/g, "#");
    const old = folded.get(key);
    if (old) {
      // the same warning again (also on the next pass of a replay): one entry, counted
      old.count += 1;
      old.li.querySelector(".times").textContent = "×" + old.count;
      old.li.querySelector(".when").textContent = clock(gameT);
      addToLog(old.li);
      return;
    }
    const li = logEntry("warning", "", message, null, gameT);
    li.insertBefore(el("span", "", "times"), li.querySelector(".text"));
    folded.set(key, { li: li, count: 1 });
    addToLog(li);
  }

  function clearLog() {
    $("log").textContent = "";
    folded.clear();
  }

  function setFilter(which) {
    $("log").dataset.filter = which;
    for (const b of document.querySelectorAll("#log-filter button")) b.setAttribute("aria-pressed", String(b.dataset.filter === which));
  }

  window.refcamShort = short;
  window.refcamClock = clock;
  window.refcamUi = { showCard, speak, logRuling, logWarning, clearLog, setFilter, setStatus, showAlert, changeHeaders, el, fmt, TOKEN };
})();

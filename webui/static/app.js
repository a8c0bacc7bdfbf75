// The live page: server-sent events fill the ruling card, the status, the state and the rulings log.
// window.refcam keeps what arrived and when, for the browser tests' latency figures.
// No game is named here: views are drawn by their kind, settings come from the game's options.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const refcam = (window.refcam = { rulings: [], events: 0, connectedAt: null, config: null, lastState: null,
    status: null, card: null, cardLog: [] });
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

  // kind "info": news that is no alarm (a replay's normal end); otherwise alarm red
  function showAlert(text, kind) {
    const a = $("alert");
    a.hidden = !text;
    a.textContent = text || "";
    a.className = "alert" + (kind ? " " + kind : "");
  }

  // A refusal the players must read (e.g. "Settle it" without the token): stays until dismissed.
  function showNotice(text) {
    $("notice").hidden = !text;
    $("notice-text").textContent = text || "";
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
    else if (shown === "source ended") showAlert("the replay has ended: the last rulings stand (" + ev.frames + " frames)", "info");
    else if (shown === "camera lost") showAlert(src || "camera lost; retrying");
    else showAlert("");
    const running = shown === "in play" || shown === "stable";
    // a replay slower than its recording says so: every frame is still ruled, later
    $("pace").hidden = !(running && ev.replay_note);
    $("pace").textContent = running && ev.replay_note ? ev.replay_note : "";
    $("source-line").textContent = [refcam.config ? refcam.config.source : "", running ? src : "",
      running && ev.fps ? ev.fps + " fps" : ""].filter(Boolean).join(" · ");
  }

  // ----- the ruling card and the spoken rulings --------------------------------------------
  // r.cannot_tell: the server's word (referee.rulings.cannot_tell) that nothing was judged.
  function verdictOf(r) {
    if (r.legal === true) return { cls: "legal", word: "LEGAL" };
    if (r.legal === false) return { cls: "illegal", word: "ILLEGAL" };
    if (r.cannot_tell) return { cls: "undecided", word: "CANNOT TELL" };
    if (r.kind === "move" && r.legal == null) return { cls: "undecided", word: "NOT JUDGED" };
    if (r.kind === "warning") return { cls: "warning", word: "WARNING" };
    return { cls: "info", word: String(r.kind || "ruling").toUpperCase() };
  }

  // A summary opens with its verdict in one short sentence ("Illegal: boat-3's card does not
  // continue the course (Racing Card Placement)."); notation and measurements follow it. A
  // sentence ends at ". " (a decimal point has no space after it) or at a line break.
  function sentences(text) {
    return String(text || "").split(/(?<=[.!?])\s+(?=\S)|\n+/).map((x) => x.trim()).filter(Boolean);
  }

  // The words that open a verdict-first summary (referee/rulings.py), or "".
  const OPENING = /^(legal|illegal|cannot tell|pending|put right|resumed|seen together):\s/i;
  function openingVerdict(sentence) {
    const m = OPENING.exec(sentence);
    return m ? m[1] : "";
  }

  // The card's headline: the first sentence of the first ruling's summary. Folded behind "N more":
  // that ruling's other breaches (details.breaches, a list of sentences, where the game gives them;
  // else the sentences after the first), then each other ruling of the same turn.
  function cardParts(items) {
    const main = items[0].r;
    const said = sentences(main.summary);
    const headline = said[0] || "";
    const breaches = main.details && Array.isArray(main.details.breaches) ? main.details.breaches.map(String) : null;
    const folded = breaches ? breaches.filter((b) => b.trim() !== headline) : said.slice(1);
    for (const it of items.slice(1)) folded.push(verdictOf(it.r).word + ": " + it.r.summary);
    return { headline, folded };
  }

  // What the card shows: illegal and "cannot tell" rulings of the latest turn outrank routine
  // news. Levels: 3 a violation or cannot tell (held until the next turn is ruled or the players
  // dismiss it), 2 a turn or other news of the game, 1 routine news (warnings, "not crossed
  // yet"), 0 rankings (they have their own panel and never take the card).
  function levelOf(r) {
    const v = verdictOf(r);
    if (v.cls === "illegal" || v.cls === "undecided" || r.kind === "violation") return 3;
    if (r.kind === "ranking") return 0;
    if (r.kind === "warning" || (r.details && r.details.crossed === false)) return 1;
    return 2;
  }

  const card = { level: -1, t: null, items: [] };

  // The next turn ruled (a move, or a legal ruling such as a card withdrawn) after the held one.
  function releases(r) {
    return card.t !== null && typeof r.t === "number" && r.t !== card.t && (r.kind === "move" || r.legal === true);
  }

  function offerCard(r, gameT, seq) {
    const level = levelOf(r);
    if (level === 0) return showRanking(r, gameT);
    if (r.kind === "warning" && level < 3) return;  // warnings stay in the log
    if (card.level === 3 && !card.dismissed) {
      if (level === 3 && r.t === card.t) return drawCard(card.items.concat([{ r, gameT, seq }]), 3, r.t);
      if (level < 3 && !releases(r)) return;  // routine news waits behind the violation (it is in the log)
    } else if (level < card.level && r.t === card.t) {
      return;  // the same turn's routine news does not replace its ruling
    }
    drawCard([{ r, gameT, seq }], level, r.t);
  }

  function drawCard(items, level, t) {
    Object.assign(card, { level: level, t: typeof t === "number" ? t : null, items: items, dismissed: false });
    const main = items[0];
    const v = verdictOf(main.r);
    const box = $("card");
    box.className = "card " + v.cls;
    box.dataset.seq = items[items.length - 1].seq;
    const parts = cardParts(items);
    const opening = openingVerdict(parts.headline);
    // the verdict is said once: by the summary's own first word, else by the card's label
    $("card-verdict").textContent = opening ? "" : v.word;
    box.classList.toggle("no-label", !!opening);
    const text = $("card-text");
    text.textContent = "";
    if (opening) text.appendChild(el("span", opening + ":", "card-verdict-word"));
    text.appendChild(document.createTextNode((opening ? " " : "") + short(parts.headline.slice(opening ? opening.length + 1 : 0).trim())));
    const more = $("card-more");
    more.hidden = !parts.folded.length;
    more.open = false;
    $("card-more-count").textContent = parts.folded.length + " more";
    const list = $("card-more-list");
    list.textContent = "";
    for (const line of parts.folded) list.appendChild(el("div", short(line)));
    $("card-rule").textContent = Array.from(new Set(items.map((it) => it.r.rule).filter(Boolean))).join(" · ");
    $("card-time").textContent = clock(main.gameT);
    $("card-dismiss").hidden = level !== 3;
    const shown = Date.now();
    refcam.card = { seq: main.seq, shown_ms: shown, summary: main.r.summary, level: level };
    refcam.cardLog.push({ shown_ms: shown, summaries: items.map((it) => it.r.summary), level: level });
    if (refcam.cardLog.length > 500) refcam.cardLog.shift();
  }

  function dismissCard() {
    card.dismissed = true;
    card.level = 1;
    $("card").classList.add("dismissed");
    $("card-dismiss").hidden = true;
    refcam.cardLog.push({ shown_ms: Date.now(), summaries: [], level: 1, dismissed: true });
  }

  // The ranking panel: from a ranking view's table when there is one (compact: "1. boat-1 =
  // 2. boat-2 · 3. boat-3", "=" between boats equidistant within measurement), else the ruling's words.
  function showRanking(r, gameT) {
    if (!rankingFromView) setRankingText(short(r.summary).replace(/^ranking:\s*/i, ""));
    $("ranking-time").textContent = clock(gameT);
  }

  let rankingFromView = false;

  function showRankingView(data) {
    const rows = (data && data.ranking) || [];
    rankingFromView = rows.length > 0;
    if (!rankingFromView) return;
    const ranked = rows.filter((r) => typeof r.rank === "number");
    const parts = ranked.map((r, i) => {
      const next = ranked[i + 1];
      const sep = !next ? "" : (r.equidistant_with || []).includes(next.name) ? " = " : " · ";
      return `${r.rank}. ${short(r.name)}${r.finished === true ? " (finished)" : ""}${sep}`;
    });
    const unseen = rows.filter((r) => typeof r.rank !== "number").map((r) => `${short(r.name)} ${r.status || "unranked"}`);
    setRankingText(parts.join("") + (unseen.length ? " · " + unseen.join(" · ") : ""));
  }

  function setRankingText(text) {
    $("ranking-panel").hidden = !text;
    $("ranking-text").textContent = text;
  }

  function speak(r) {
    if (!$("speak").checked || !("speechSynthesis" in window)) return;
    const v = verdictOf(r);
    const headline = sentences(r.summary)[0] || "";
    const said = openingVerdict(headline) || !(v.cls === "legal" || v.cls === "illegal" || v.cls === "undecided");
    const words = (said ? "" : v.word.toLowerCase() + ": ") + short(headline);
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
  $("card-dismiss").addEventListener("click", dismissCard);
  $("notice-close").addEventListener("click", () => showNotice(""));
  window.refcamUi = { offerCard, levelOf, cardParts, speak, logRuling, logWarning, clearLog, setFilter, setStatus, showAlert, showNotice, showRankingView, changeHeaders, el, fmt, TOKEN };
})();

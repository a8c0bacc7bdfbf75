// The live page: server-sent events fill the status, state and rulings log.
// window.refcam keeps what arrived and when, for the browser tests' latency figures.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const refcam = (window.refcam = { rulings: [], events: 0, connectedAt: null, config: null, lastState: null });

  function setStatus(status) {
    const el = $("status");
    const stable = status === "stable";
    el.textContent = stable ? "stable" : "in play…";
    el.className = "status " + (stable ? "stable" : "in-play");
    el.dataset.status = status;
  }

  function showAlert(text) {
    const el = $("alert");
    el.hidden = !text;
    el.textContent = text || "";
  }

  function fmt(v) {
    return typeof v === "number" ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)) : String(v);
  }

  function cell(tr, text, tag) {
    const td = document.createElement(tag || "td");
    td.textContent = text === undefined || text === null ? "" : String(text);
    tr.appendChild(td);
  }

  function table(head, rows) {
    const t = document.createElement("table");
    const hr = document.createElement("tr");
    head.forEach((h) => cell(hr, h, "th"));
    t.appendChild(hr);
    for (const r of rows) {
      const tr = document.createElement("tr");
      r.forEach((c) => cell(tr, c));
      t.appendChild(tr);
    }
    return t;
  }

  function short(name) { return String(name).split("/").pop(); }

  function measureText(m) {
    if (!m) return "";
    return `${fmt(m.value)} ± ${fmt(m.sigma)} ${m.kind === "angle_deg" ? "°" : "mm"}`;
  }

  function renderRanking(data, add, para) {
    const hands = data.hand_size || {};
    if (!data.ranking.length) para("no one ranked yet");
    else add(table(["#", "who", "zone", "measure", "finished", "hand"], data.ranking.map((r) => [
      r.rank === null || r.rank === undefined ? "–" : r.rank, short(r.name),
      r.zone === null || r.zone === undefined ? (r.status || "") : r.zone,
      measureText(r.measure) + (r.equidistant_with && r.equidistant_with.length ? " = " + r.equidistant_with.map(short).join(", ") : ""),
      r.finished === true ? "yes" : r.finished === false ? "" : r.finished, hands[r.name]])));
    const facts = [];
    if (data.course) facts.push("course " + data.course);
    if (data.round) facts.push("round " + data.round);
    if (data.turn_order && data.turn_order.length) facts.push("turn order " + data.turn_order.map(short).join(", "));
    if (data.crossed && data.crossed.length) facts.push("crossed " + data.crossed.map(short).join(", "));
    if (data.eliminated && data.eliminated.length) facts.push("eliminated " + data.eliminated.map(short).join(", "));
    if (data.violations && data.violations.length) facts.push(data.violations.length + " violation(s)");
    if (facts.length) para(facts.join(" · "), "facts");
  }

  function renderPieces(data, add) {
    add(table(["piece", "where"], (data.pieces || []).map((r) => [short(r.name), r.where || `(${fmt(r.x_mm)}, ${fmt(r.y_mm)}) mm`])));
  }

  function renderKeyValues(data, add) {
    // a view kind this page has no table for: each top-level entry as one row
    add(table(["", ""], Object.entries(data).map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : v])));
  }

  const VIEWS = { ranking: renderRanking, pieces: renderPieces };

  function renderState(state) {
    refcam.lastState = state;
    const box = $("state");
    box.textContent = "";
    if (!state) return;
    const add = (el) => { box.appendChild(el); return el; };
    const para = (text, cls) => { const p = document.createElement("p"); p.textContent = text; if (cls) p.className = cls; return add(p); };
    box.dataset.kind = state.kind || "";
    if (state.error) para(state.error, "note");
    const data = state.data || {};
    if (data.note) para(data.note, "note");
    if (state.kind) (VIEWS[state.kind] || renderKeyValues)(data, add, para);
    const det = document.createElement("details");
    const sum = document.createElement("summary");
    sum.textContent = "all details";
    const pre = document.createElement("pre");
    pre.textContent = JSON.stringify(state, null, 1);
    det.appendChild(sum);
    det.appendChild(pre);
    add(det);
  }

  function addLog(kind, text, rule, legal, t) {
    const li = document.createElement("li");
    const undecided = kind === "move" && legal !== true && legal !== false;  // a move the camera could not judge
    li.className = kind === "warning" ? "warning" : legal === true ? "legal" : legal === false ? "illegal"
      : undecided ? "undecided" : "info";
    if (legal === true || legal === false || undecided) {
      const v = document.createElement("span");
      v.className = "verdict";
      v.textContent = undecided ? "CANNOT JUDGE" : legal ? "LEGAL" : "ILLEGAL";
      li.appendChild(v);
    }
    if (typeof t === "number") {
      const w = document.createElement("span");
      w.className = "when";
      w.textContent = t.toFixed(1) + " s";
      li.appendChild(w);
    }
    li.appendChild(document.createTextNode(text));
    if (rule) {
      const r = document.createElement("span");
      r.className = "rule";
      r.textContent = rule;
      li.appendChild(r);
    }
    const log = $("log");
    log.insertBefore(li, log.firstChild);
    while (log.children.length > 300) log.removeChild(log.lastChild);
  }

  function connect() {
    const es = new EventSource("/events");
    // On every (re)connection the server sends the whole rulings log again: start the list afresh.
    es.onopen = () => { refcam.connectedAt = Date.now(); showAlert(""); $("log").textContent = ""; };
    es.onerror = () => showAlert("connection to refcam lost; retrying…");
    const on = (type, fn) => es.addEventListener(type, (msg) => {
      refcam.events += 1;
      fn(JSON.parse(msg.data), Date.now());
    });
    const seen = new Set();
    on("ruling", (ev, now) => {
      const r = ev.ruling;
      if (!seen.has(ev.seq)) refcam.rulings.push({ seq: ev.seq, entry_ms: ev.entry_ms, sent_ms: ev.sent_ms, arrival_ms: now, summary: r.summary, legal: r.legal, rule: r.rule, kind: r.kind });
      seen.add(ev.seq);
      addLog(r.kind, r.summary, r.rule, r.legal, r.t);
    });
    on("warning", (ev) => addLog("warning", ev.message, null, null, null));
    on("status", (ev) => {
      setStatus(ev.status);
      const src = ev.source_status || "";
      showAlert(ev.error ? "source stopped: " + ev.error : /lost/.test(src) ? src : "");
      $("source-line").textContent = [refcam.config ? refcam.config.source : "", src, ev.fps ? ev.fps + " fps" : ""].filter(Boolean).join(" · ");
    });
    on("state", (ev) => renderState(ev.state));
    on("config", (ev) => {
      refcam.config = ev.config;
      $("game-title").textContent = ev.config.game_title;
      document.title = "refcam: " + ev.config.game_title;
      $("settle").hidden = !ev.config.settle;
      $("game").value = ev.config.game;
      renderOptions(ev.config.options);
    });
    on("restart", (ev) => { $("log").textContent = ""; addLog("warning", ev.message, null, null, null); });
  }

  // The settings form: the chosen game's declared options (a list where it offers choices).
  function renderOptions(options) {
    const box = $("options");
    box.textContent = "";
    for (const o of options || []) {
      const label = document.createElement("label");
      label.title = o.help;
      label.appendChild(document.createTextNode(o.name.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase()) + " "));
      let field;
      if (o.choices.length) {
        field = document.createElement("select");
        const values = [""].concat(o.choices, o.value && !o.choices.includes(o.value) ? [o.value] : []);
        for (const v of values) {
          const opt = document.createElement("option");
          opt.value = v;
          opt.textContent = v || "default";
          opt.selected = v === (o.value || "");
          field.appendChild(opt);
        }
      } else {
        field = document.createElement("input");
        field.placeholder = o.help;
        field.value = o.value || "";
      }
      field.name = o.name;
      field.dataset.option = o.name;
      label.appendChild(field);
      box.appendChild(label);
    }
  }

  $("game").addEventListener("change", (e) => {
    const games = (refcam.config && refcam.config.games) || [];
    const chosen = games.find((g) => g.id === e.target.value);
    if (refcam.config && e.target.value === refcam.config.game) renderOptions(refcam.config.options);
    else if (chosen) renderOptions(chosen.options);
  });

  async function settle() {
    const btn = $("settle");
    btn.disabled = true;
    try {
      const resp = await fetch("/api/settle", { method: "POST" });
      const data = await resp.json();
      if (!resp.ok) { showAlert(data.error || "cannot settle now"); return; }
      $("settle-img").src = data.png;
      $("settle-download").href = data.download;
      const m = $("settle-measures");
      m.textContent = "";
      for (const line of data.lines || []) {
        const d = document.createElement("div");
        d.textContent = line;
        m.appendChild(d);
      }
      if (!(data.lines || []).length) m.textContent = `settled at ${data.t.toFixed(1)} s`;
      $("settle-result").hidden = false;
    } finally {
      btn.disabled = false;
    }
  }

  $("settle").addEventListener("click", settle);
  $("config-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = Object.fromEntries(new FormData(e.target).entries());
    const resp = await fetch("/api/config", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const data = await resp.json();
    const err = $("config-error");
    err.hidden = resp.ok;
    err.textContent = resp.ok ? "" : data.error;
    if (resp.ok) $("log").textContent = "";
  });
  setStatus("in play");
  connect();
})();

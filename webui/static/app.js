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

  function renderState(state) {
    refcam.lastState = state;
    const box = $("state");
    box.textContent = "";
    if (!state) return;
    if (state.note) {
      const p = document.createElement("p");
      p.className = "note";
      p.textContent = state.note;
      box.appendChild(p);
    }
    const rows = state.ranking || state.pieces || [];
    if (rows.length) {
      const table = document.createElement("table");
      const ranked = !!state.ranking;
      const head = ranked ? ["#", "boat", "zone", "measure", "finished"] : ["piece", "where"];
      table.innerHTML = "<tr>" + head.map((h) => `<th>${h}</th>`).join("") + "</tr>";
      for (const r of rows) {
        const tr = document.createElement("tr");
        const cells = ranked
          ? [r.rank, r.name, r.zone, r.measure ? `${fmt(r.measure.value)} ± ${fmt(r.measure.sigma)} ${r.measure.kind === "angle_deg" ? "°" : "mm"}` : "", r.finished]
          : [r.name, r.where || `(${fmt(r.x_mm)}, ${fmt(r.y_mm)}) mm`];
        for (const c of cells) {
          const td = document.createElement("td");
          td.textContent = c === undefined || c === null ? "" : String(c);
          tr.appendChild(td);
        }
        table.appendChild(tr);
      }
      box.appendChild(table);
    }
    const rest = Object.assign({}, state);
    for (const k of ["ranking", "pieces", "note", "game", "engine"]) delete rest[k];
    if (Object.keys(rest).length) {
      const pre = document.createElement("pre");
      pre.textContent = JSON.stringify(rest, null, 1);
      box.appendChild(pre);
    }
  }

  function addLog(kind, text, rule, legal, t) {
    const li = document.createElement("li");
    li.className = kind === "warning" ? "warning" : legal === true ? "legal" : legal === false ? "illegal" : "info";
    if (legal === true || legal === false) {
      const v = document.createElement("span");
      v.className = "verdict";
      v.textContent = legal ? "LEGAL" : "ILLEGAL";
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
    es.onopen = () => { refcam.connectedAt = Date.now(); showAlert(""); };
    es.onerror = () => showAlert("connection to refcam lost; retrying…");
    const on = (type, fn) => es.addEventListener(type, (msg) => {
      refcam.events += 1;
      fn(JSON.parse(msg.data), Date.now());
    });
    on("ruling", (ev, now) => {
      const r = ev.ruling;
      refcam.rulings.push({ seq: ev.seq, entry_ms: ev.entry_ms, sent_ms: ev.sent_ms, arrival_ms: now, summary: r.summary, legal: r.legal, rule: r.rule, kind: r.kind });
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
    });
    on("restart", (ev) => { $("log").textContent = ""; addLog("warning", ev.message, null, null, null); });
  }

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
      const rows = (data.measures && data.measures.ranking) || [];
      for (const r of rows) {
        const d = document.createElement("div");
        const meas = r.measure ? ` ${fmt(r.measure.value)} ± ${fmt(r.measure.sigma)} ${r.measure.kind === "angle_deg" ? "°" : "mm"}` : "";
        const eq = r.equidistant_with && r.equidistant_with.length ? ` (equidistant within measurement with ${r.equidistant_with.join(", ")})` : "";
        d.textContent = `${r.rank}. ${r.name}${meas}${eq}`;
        m.appendChild(d);
      }
      if (!rows.length) m.textContent = `settled at ${data.t.toFixed(1)} s`;
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

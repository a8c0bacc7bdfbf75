// The state panel: each view kind its own table; an unknown kind as plain rows. Knows no game.
"use strict";
(function () {
  const ui = window.refcamUi;
  const short = (t) => window.refcamShort(t);
  const fmt = ui.fmt;

  function table(head, rows, classes) {
    const t = document.createElement("table");
    t.className = "rows";
    const hr = document.createElement("tr");
    head.forEach((h, i) => hr.appendChild(ui.el("th", h, (classes || [])[i])));
    t.appendChild(hr);
    for (const r of rows) {
      const tr = document.createElement("tr");
      r.forEach((c, i) => {
        const td = ui.el("td", c === undefined || c === null ? "" : c, (classes || [])[i]);
        if (head[i]) td.dataset.label = head[i];  // a phone shows each row as lines "label: value"
        tr.appendChild(td);
      });
      t.appendChild(tr);
    }
    return t;
  }

  // An uncertainty with the digits it needs: never "± 0.0" for a small but real σ.
  function sigmaText(v) {
    if (typeof v !== "number" || !isFinite(v)) return String(v);
    if (v >= 0.1) return fmt(v);
    return v > 0 ? String(Number(v.toPrecision(1))) : "< 0.01";
  }

  function measureText(m) {
    if (!m) return "";
    return `${fmt(m.value)} ± ${sigmaText(m.sigma)} ${m.kind === "angle_deg" ? "°" : "mm"}`;
  }

  function unit(kind) { return kind === "angle_deg" ? "°" : "mm"; }

  // A pair's call: the difference and its own uncertainty, which is why a confident call can
  // stand beside wide ± figures (most of each boat's ± is shared and cancels in the difference).
  function pairLine(c) {
    const u = unit(c.kind);
    const ratio = c.sigma > 0 ? ` (${(c.delta / c.sigma).toFixed(1)} σ)` : "";
    const band = typeof c.band === "number" ? `, band ${fmt(c.band)} ${u}` : "";
    const what = /equidistant/i.test(c.verdict) ? "equidistant with" : c.verdict === "zone" ? "a zone ahead of" : "ahead of";
    const diff = c.verdict === "zone" ? "" : `: Δ ${fmt(c.delta)} ${u}, σΔ ${sigmaText(c.sigma)} ${u}${band}${ratio}`;
    return `${short(c.ahead)} ${what} ${short(c.behind)}${diff}`;
  }

  function renderRanking(data, add, para) {
    const hands = data.hand_size || {};
    const ranking = data.ranking || [];
    if (!ranking.length) para("no one ranked yet: waiting for a still table", "waiting");
    // equidistant boats are named in the pairs below; a finished boat has no distance to go
    else add(table(["#", "who", "zone", "distance to go", "hand"], ranking.map((r) => [
      r.rank === null || r.rank === undefined ? "–" : r.rank, short(r.name),
      r.zone === null || r.zone === undefined ? (r.status || "") : r.zone,
      r.finished === true ? "finished" : measureText(r.measure) + (typeof r.finished === "string" ? " (" + r.finished + ")" : ""),
      hands[r.name]]),
    ["rank", "name", "zone", "measure", "num"]));
    const pairs = (data.calls || []).filter((c) => c.verdict !== "zone");
    if (pairs.length) {
      const box = add(ui.el("div", null, "pairs"));
      box.appendChild(ui.el("p", "Pairs: a boat's ± is mostly the course's placement, which both boats share; " +
        "their difference (Δ) is known to σΔ, and the call rests on Δ against σΔ.", "explain"));
      for (const c of pairs) box.appendChild(ui.el("p", pairLine(c), "pair"));
    }
    const facts = [];
    if (data.course) facts.push("course " + data.course);
    if (data.round) facts.push("round " + data.round);
    if (data.crossed && data.crossed.length) facts.push("crossed " + data.crossed.map(short).join(", "));
    if (data.eliminated && data.eliminated.length) facts.push("eliminated " + data.eliminated.map(short).join(", "));
    if (data.violations && data.violations.length) facts.push(data.violations.length + " violation(s)");
    if (facts.length) para(facts.join(" · "), "facts");
    const gp = data.grand_prix;
    if (gp && gp.final) {
      const f = gp.final;
      const who = f.winner ? `${short(f.winner)} wins` : `${f.leaders.map(short).join(", ")} tie: the players name the winner`;
      para(`Grand Prix over: ${who} (${Object.entries(f.totals).sort((a, b) => b[1] - a[1])
        .map(([n, v]) => short(n) + " " + v).join(", ")} points)`, "notice");
    } else if (gp && gp.totals && Object.keys(gp.totals).length) {
      para("Grand Prix totals: " + Object.entries(gp.totals).sort((a, b) => b[1] - a[1])
        .map(([n, v]) => short(n) + " " + v).join(", "), "facts");
    }
  }

  function renderPieces(data, add, para) {
    const pieces = data.pieces || [];
    if (!pieces.length) { para("no pieces seen yet: waiting for a still table", "waiting"); return; }
    add(table(["piece", "where"], pieces.map((r) => [short(r.name), short(r.where || `(${fmt(r.x_mm)}, ${fmt(r.y_mm)}) mm`)]),
      ["name", ""]));
  }

  // A view kind this page has no table for ("board", "river", ...), read generically: plain
  // entries as "name: value" rows, a multi-line text as itself, each list of records as a table.
  function flat(v) {
    if (v === null || v === undefined) return "";
    if (Array.isArray(v)) return v.map(flat).join(", ");
    if (typeof v === "object") {
      return Object.entries(v).filter(([, x]) => !empty(x))
        .map(([k, x]) => k.replace(/_/g, " ") + (x === true ? "" : " " + flat(x))).join("; ");
    }
    return short(typeof v === "number" ? (Number.isInteger(v) ? String(v) : fmt(v)) : v);
  }

  // Nothing to say: false, empty, or no value ("illegal on board false" is not news).
  function empty(v) {
    return v === false || v === null || v === undefined || v === "" ||
      (Array.isArray(v) && !v.length) || (typeof v === "object" && !Array.isArray(v) && v && !Object.keys(v).length);
  }

  function renderKeyValues(data, add, para) {
    // a long nested record reads badly as one row: it stays in "all details" below
    const tooLong = (v) => v && typeof v === "object" && !Array.isArray(v) && flat(v).length > 160;
    const entries = Object.entries(data).filter(([k, v]) => k !== "note" && k !== "game" && !tooLong(v) && !empty(v) && flat(v) !== "")
      .map(([k, v]) => [k, v === true ? "yes" : v]);
    const plain = entries.filter(([, v]) => !(typeof v === "string" && v.includes("\n"))
      && !(Array.isArray(v) && v.length && v.every((x) => x && typeof x === "object" && !Array.isArray(x))));
    add(table(["", ""], plain.map(([k, v]) => [k.replace(/_/g, " "), flat(v)]), ["key", "value"]));
    for (const [k, v] of entries) {
      if (typeof v === "string" && v.includes("\n")) add(ui.el("pre", short(v), "view-text"));
      else if (plain.every(([pk]) => pk !== k)) {
        para(k.replace(/_/g, " "), "list-title");
        const cols = [...new Set(v.flatMap((row) => Object.keys(row)))];
        add(table(cols.map((c) => c.replace(/_/g, " ")), v.map((row) => cols.map((c) => flat(row[c]))),
          cols.map((c) => (c === "name" ? "name" : ""))));
      }
    }
  }

  const VIEWS = { ranking: renderRanking, pieces: renderPieces };

  // What the players may do next (the view's offers): one button each, which applies the
  // offer's settings to the game being played, as the settings form would.
  function renderOffers(offers, add) {
    for (const offer of offers) {
      const box = add(ui.el("div", "", "offer"));
      const btn = ui.el("button", offer.label, "offer-button");
      btn.type = "button";
      btn.addEventListener("click", async () => {
        btn.disabled = true;
        try { await window.refcamPage.applySettings(offer.settings); } finally { btn.disabled = false; }
      });
      box.appendChild(btn);
      if (offer.hint) box.appendChild(ui.el("span", offer.hint, "offer-hint"));
    }
  }

  function renderState(state, notice) {
    window.refcam.lastState = state;
    const box = document.getElementById("state");
    box.textContent = "";
    if (!state) return;
    const add = (e) => { box.appendChild(e); return e; };
    const para = (text, cls) => add(ui.el("p", text, cls));
    box.dataset.kind = state.kind || "";
    if (notice) para(notice, "notice");
    if (state.error) para(state.error, "note");
    const data = state.data || {};
    if (data.note) para(data.note, "note");
    const rest = window.refcamDiagram ? window.refcamDiagram.show(data, add) : data;  // the view's diagram, if any (diagram.js)
    if (state.kind && VIEWS[state.kind]) VIEWS[state.kind](rest, add, para);
    else if (state.kind && rest !== data) {
      // the drawing says it at a glance: its data as a table stays one tap away
      const more = add(document.createElement("details"));
      more.className = "view-data";
      more.appendChild(ui.el("summary", "the state as a table"));
      renderKeyValues(rest, (e) => { more.appendChild(e); return e; }, (text, cls) => more.appendChild(ui.el("p", text, cls)));
    } else if (state.kind) renderKeyValues(rest, add, para);
    renderOffers(state.offers || [], add);
    const det = document.createElement("details");
    det.appendChild(ui.el("summary", "all details"));
    det.appendChild(ui.el("pre", JSON.stringify(state, null, 1)));
    add(det);
  }

  window.refcamViews = { renderState };
})();

// The live page's wiring: the event stream, "Settle it" and its full-screen photo finish,
// the settings form, spoken rulings and the phones panel.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const ui = window.refcamUi;
  const refcam = window.refcam;
  let notice = "";

  function onRuling(ev, now) {
    const r = Object.assign({}, ev.ruling, { cannot_tell: !!ev.cannot_tell });
    const gameT = typeof ev.game_t === "number" ? ev.game_t : null;
    const live = refcam.connectedAt !== null && ev.sent_ms >= refcam.connectedAt - 5;
    refcam.rulings.push({ seq: ev.seq, entry_ms: ev.entry_ms, sent_ms: ev.sent_ms, arrival_ms: now, summary: r.summary,
      legal: r.legal, rule: r.rule, kind: r.kind, game_t: gameT, t: r.t, cannot_tell: r.cannot_tell,
      details: r.details && "crossed" in r.details ? { crossed: r.details.crossed } : undefined });
    ui.logRuling(r, gameT);
    ui.offerCard(r, gameT, ev.seq);
    if (live && ui.levelOf(r) >= 2) ui.speak(r);
  }

  function onConfig(ev) {
    const old = refcam.config;
    refcam.config = ev.config;
    $("game-title").textContent = ev.config.game_title;
    document.title = "refcam: " + ev.config.game_title;
    $("settle").hidden = !ev.config.settle;
    $("game").value = ev.config.game;
    renderOptions(ev.config.options);
    notice = old && old.game !== ev.config.game
      ? `Now refereeing ${ev.config.game_title}. Its state fills in once the camera sees ${ev.config.game_title} pieces on a still table; ` +
        "another game's pieces are not counted."
      : "";
  }

  function connect() {
    const es = new EventSource("/events");
    // On every (re)connection the server sends the whole rulings log again: start the list afresh.
    es.onopen = () => { refcam.connectedAt = Date.now(); ui.showAlert(""); ui.clearLog(); };
    es.onerror = () => ui.showAlert("connection to refcam lost; retrying…");
    const on = (type, fn) => es.addEventListener(type, (msg) => {
      refcam.events += 1;
      fn(JSON.parse(msg.data), Date.now());
    });
    on("ruling", onRuling);
    on("warning", (ev) => ui.logWarning(ev.message, ev.game_t));
    on("status", (ev) => ui.setStatus(ev));
    on("state", (ev) => {
      const data = (ev.state && ev.state.data) || {};
      if ((data.ranking && data.ranking.length) || (data.pieces && data.pieces.length)) notice = "";
      window.refcamViews.renderState(ev.state, notice);
      if (ev.state && ev.state.kind === "ranking") ui.showRankingView(data);
      if (window.refcamDeclare) window.refcamDeclare.render(ev.state);
    });
    on("config", onConfig);
    on("restart", (ev) => {
      // a replay's next pass: the log stays (its warnings keep folding), with a divider
      const li = ui.el("li", ev.message, "divider");
      $("log").insertBefore(li, $("log").firstChild);
    });
  }

  // ----- the settings form: the chosen game's declared options -----------------------------
  function renderOptions(options) {
    const box = $("options");
    box.textContent = "";
    for (const o of options || []) {
      const label = ui.el("label", o.name.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase()) + " ");
      label.title = o.help;
      let field;
      if (o.choices.length) {
        field = document.createElement("select");
        const values = [""].concat(o.choices, o.value && !o.choices.includes(o.value) ? [o.value] : []);
        for (const v of values) {
          const opt = ui.el("option", v || "default");
          opt.value = v;
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

  // what: the change in words, for a refusal without the token ("Settle it", "Declaring", ...)
  async function postJson(url, body, what) {
    const resp = await fetch(url, { method: "POST", headers: ui.changeHeaders(), body: JSON.stringify(body || {}) });
    let data = {};
    try { data = await resp.json(); } catch (e) { data = { error: `refused (HTTP ${resp.status})` }; }
    if (!resp.ok && (resp.status === 401 || resp.status === 403) && !ui.TOKEN) {
      data.error = `${what || "This change"} needs the access token, and this page was opened without it: open the ` +
        "address refcam serve printed (it ends in ?token=…)";
    }
    return { resp, data };
  }

  // An offer of the view (e.g. the next race): these settings on top of the game's current ones.
  async function applySettings(settings) {
    const body = Object.assign({ game: refcam.config && refcam.config.game }, settings);
    const { resp, data } = await postJson("/api/config", body, "Starting the next race");
    ui.showNotice(resp.ok ? "" : data.error);
    return resp.ok;
  }
  window.refcamPage = { applySettings, postJson };

  $("config-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = Object.fromEntries(new FormData(e.target).entries());
    const { resp, data } = await postJson("/api/config", body, "Changing the settings");
    const err = $("config-error");
    err.hidden = resp.ok;
    err.textContent = resp.ok ? "" : data.error;
  });

  // ----- settle it: the photo finish, full screen, tap to zoom -------------------------------
  async function settle() {
    const btn = $("settle");
    btn.disabled = true;
    try {
      const { resp, data } = await postJson("/api/settle", {}, "Settle it");
      if (!resp.ok) { ui.showNotice(data.error || "cannot settle now"); return; }
      ui.showNotice("");
      $("photo-title").textContent = data.title || "Settled";
      $("settle-img").src = data.png;
      $("photo-img").src = data.png;
      $("settle-download").href = data.download;
      $("photo-download").href = data.download;
      for (const id of ["settle-measures", "photo-text"]) {
        const m = $(id);
        m.textContent = "";
        for (const line of data.lines || []) m.appendChild(ui.el("div", window.refcamShort(line)));
        if (!(data.lines || []).length) m.textContent = `settled at ${window.refcamClock(data.t)}`;
      }
      $("settle-result").hidden = false;
      openPhoto();
    } finally {
      btn.disabled = false;
    }
  }

  function openPhoto() {
    const box = $("photo");
    box.hidden = false;
    box.classList.remove("zoomed");
    document.body.classList.add("photo-open");
    $("photo-close").focus();
  }

  function closePhoto() {
    $("photo").hidden = true;
    document.body.classList.remove("photo-open");
  }

  function toggleZoom(e) {
    const box = $("photo");
    const frame = $("photo-frame");
    const img = $("photo-img");
    const r = img.getBoundingClientRect();
    const fx = (e.clientX - r.left) / r.width, fy = (e.clientY - r.top) / r.height;
    box.classList.toggle("zoomed");
    if (box.classList.contains("zoomed")) {
      // keep the tapped spot under the finger
      frame.scrollLeft = fx * img.clientWidth - frame.clientWidth / 2;
      frame.scrollTop = fy * img.clientHeight - frame.clientHeight / 2;
    }
  }

  $("settle").addEventListener("click", settle);
  $("settle-img").addEventListener("click", openPhoto);
  $("photo-close").addEventListener("click", closePhoto);
  $("photo-img").addEventListener("click", toggleZoom);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closePhoto(); });

  // ----- spoken rulings (off unless chosen), the log filter, phones ---------------------------
  const speakBox = $("speak");
  if (!("speechSynthesis" in window)) { speakBox.disabled = true; speakBox.parentElement.title = "this browser cannot speak"; }
  speakBox.checked = localStorage.getItem("refcam-speak") === "1";
  speakBox.addEventListener("change", () => localStorage.setItem("refcam-speak", speakBox.checked ? "1" : "0"));
  for (const b of document.querySelectorAll("#log-filter button")) b.addEventListener("click", () => ui.setFilter(b.dataset.filter));
  ui.setFilter("all");

  async function showPhones() {
    const resp = await fetch("/api/phone", { headers: ui.TOKEN ? { "X-Refcam-Token": ui.TOKEN } : {} });
    if (!resp.ok) return;
    const data = await resp.json();
    const box = $("phones");
    box.hidden = !data.urls.length;
    if (!data.urls.length) return;
    $("phone-qr").src = "/phone-qr.svg" + (ui.TOKEN ? "?token=" + encodeURIComponent(ui.TOKEN) : "");
    const list = $("phone-urls");
    list.textContent = "";
    for (const u of data.urls) list.appendChild(ui.el("div", u));
    $("phone-note").textContent = data.note;
  }

  ui.setStatus({ shown: "in play" });
  connect();
  showPhones();
})();

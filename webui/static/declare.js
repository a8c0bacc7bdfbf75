// "Players declare": what the camera cannot see (a pass, a card played from the hand, a vote).
// The game lists what it takes right now in the state (state.declarables); each is one row:
// whom it is about, its value, and a button. Knows no game.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const ui = window.refcamUi;
  let shownKey = "";

  function field(name, options, help) {
    let f;
    if (options.length) {
      f = document.createElement("select");
      for (const o of options) { const opt = ui.el("option", o); opt.value = o; f.appendChild(opt); }
    } else {
      f = document.createElement("input");
      f.placeholder = help;
      f.autocomplete = "off";
    }
    f.name = name;
    f.setAttribute("aria-label", name === "subject" ? "who" : help || "value");
    return f;
  }

  function row(d) {
    const form = ui.el("form", null, "declare-row");
    form.dataset.kind = d.kind;
    form.appendChild(ui.el("span", d.label, "declare-label"));
    if (d.subjects.length) form.appendChild(field("subject", d.subjects.map((s) => window.refcamShort(s)), ""));
    if (d.values.length || d.value_help) form.appendChild(field("value", d.values, d.value_help));
    const btn = ui.el("button", "Declare", "declare-button");
    btn.type = "submit";
    form.appendChild(btn);
    const hint = ui.el("div", d.hint + (d.rule ? ` (${d.rule})` : ""), "declare-hint");
    form.appendChild(hint);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const body = { kind: d.kind };
      const data = new FormData(form);
      if (data.has("subject")) body.subject = data.get("subject");
      if (data.has("value")) body.value = String(data.get("value")).trim();
      btn.disabled = true;
      try {
        const { resp, data: answer } = await window.refcamPage.postJson("/api/declare", body, "Declaring");
        showError(resp.ok ? "" : answer.error);
      } finally {
        btn.disabled = false;
      }
    });
    return form;
  }

  function showError(text) {
    const box = $("declare-error");
    box.hidden = !text;
    box.querySelector(".declare-error-text").textContent = text || "";
  }

  // Redrawn only when what is offered changes, so a half-typed value survives a new state.
  function render(state) {
    const list = (state && state.declarables) || [];
    const key = JSON.stringify(list);
    if (key === shownKey) return;
    shownKey = key;
    const box = $("declare-list");
    box.textContent = "";
    $("declare").hidden = !list.length;
    for (const d of list) box.appendChild(row(d));
  }

  $("declare-error-close").addEventListener("click", () => showError(""));
  window.refcamDeclare = { render };
})();

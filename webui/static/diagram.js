// A view's diagram (View.data.diagram, built by referee.game.diagram) as inline SVG.
// Generic: it knows shape kinds and roles, never a game. Each shape's role becomes the CSS
// class "role-<role>" (webui/static/diagram.css); coordinates are the game's mm with y up.
// Built with DOM calls only (no innerHTML, no inline style), so a strict CSP holds.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  let drawn = 0; // makes marker ids unique when several diagrams share the page

  function el(tag, attrs, parent) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (parent) parent.appendChild(e);
    return e;
  }

  function roleName(role) {
    return String(role || "info").toLowerCase().replace(/[^a-z0-9-]/g, "-");
  }

  function num(v) { return Math.round(v * 100) / 100; }

  function pointsAttr(points) {
    return points.map(([x, y]) => num(x) + "," + num(-y)).join(" ");
  }

  // The drawing's extent in mm: the declared box, else every point (and circle) plus a margin.
  function extent(d, unit) {
    if (Array.isArray(d.box) && d.box.length === 4) return d.box;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const s of d.shapes || []) {
      const r = s.kind === "circle" ? (s.radius_mm || 0) : 0;
      for (const [x, y] of s.points || []) {
        x0 = Math.min(x0, x - r); x1 = Math.max(x1, x + r);
        y0 = Math.min(y0, y - r); y1 = Math.max(y1, y + r);
      }
    }
    if (!isFinite(x0)) return [0, 0, unit, unit];
    return [x0 - 0.7 * unit, y0 - 0.7 * unit, x1 + 0.7 * unit, y1 + 0.7 * unit];
  }

  // Typical feature size: the declared one, else a fortieth of the larger side.
  function unitOf(d) {
    if (d.unit_mm > 0) return d.unit_mm;
    const [x0, y0, x1, y1] = extent(Object.assign({}, d, { box: null }), 0);
    return Math.max(x1 - x0, y1 - y0, 1) / 40;
  }

  function arrowHead(defs, id, role, unit) {
    if (defs.querySelector("#" + id)) return;
    const m = el("marker", { id: id, viewBox: "0 0 10 10", refX: 8, refY: 5, markerUnits: "userSpaceOnUse",
      markerWidth: num(0.45 * unit), markerHeight: num(0.45 * unit), orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", class: "dg-head role-" + role }, m);
  }

  function shapeElement(s, ctx) {
    const role = roleName(s.role);
    const pts = s.points || [];
    let e;
    if (s.kind === "circle" && pts.length) {
      e = el("circle", { cx: num(pts[0][0]), cy: num(-pts[0][1]), r: num(s.radius_mm || ctx.unit / 4) });
    } else if (s.kind === "label" && pts.length) {
      e = el("text", { x: num(pts[0][0]), y: num(-pts[0][1]), "text-anchor": "middle", "dominant-baseline": "central" });
      e.textContent = s.text || "";
    } else if (s.kind === "polygon" && pts.length >= 3) {
      e = el("polygon", { points: pointsAttr(pts) });
    } else if ((s.kind === "line" || s.kind === "polyline" || s.kind === "arrow") && pts.length >= 2) {
      e = el("polyline", { points: pointsAttr(pts) });
      if (s.kind === "arrow") {
        const id = ctx.prefix + "-head-" + role;
        arrowHead(ctx.defs, id, role, ctx.unit);
        e.setAttribute("marker-end", "url(#" + id + ")");
      }
    } else {
      return null; // a kind this page does not draw, or too few points
    }
    e.setAttribute("class", "dg dg-" + s.kind + " role-" + role);
    if (s.text && s.kind !== "label") el("title", {}, e).textContent = s.text;
    return e;
  }

  // A label wider than the room on either side of its anchor is drawn smaller, never cut off
  // at the drawing's edge (about 0.6 em a character: an estimate, the text is not laid out yet).
  function fitLabel(e, s, x0, x1, size) {
    const x = s.points[0][0];
    const room = 2 * Math.min(x - x0, x1 - x);
    const wide = 0.6 * size * String(s.text || "").length;
    if (room > 0 && wide > room) e.setAttribute("font-size", num(size * room / wide));
  }

  function svgFor(d) {
    const unit = unitOf(d);
    const [x0, y0, x1, y1] = extent(d, unit);
    drawn += 1;
    const svg = el("svg", { viewBox: [x0, -y1, x1 - x0, y1 - y0].map(num).join(" "), class: "dg-svg",
      role: "img", "font-size": num(0.42 * unit) });
    svg.setAttribute("aria-label", (d.caption && d.caption[0]) || "diagram");
    const ctx = { unit: unit, prefix: "dg" + drawn, defs: el("defs", {}, svg) };
    for (const s of d.shapes || []) {
      const e = shapeElement(s, ctx);
      if (e) svg.appendChild(e);
      if (e && s.kind === "label") fitLabel(e, s, x0, x1, 0.42 * unit);
    }
    return svg;
  }

  // One legend entry: a small sample of the first shape declaring these words, then the words.
  function legendItem(entry, shapes) {
    const li = document.createElement("li");
    const role = roleName(entry.role);
    const sample = shapes.find((s) => s.legend === entry.text && s.kind !== "label")
      || shapes.find((s) => roleName(s.role) === role && s.kind !== "label") || { kind: "polygon" };
    const svg = el("svg", { viewBox: "0 0 20 20", class: "dg-swatch", "aria-hidden": "true" }, li);
    const ctx = { unit: 20, prefix: "dg" + drawn + "-legend", defs: el("defs", {}, svg) };
    const kinds = {
      circle: { kind: "circle", points: [[10, -10]], radius_mm: 7 },
      arrow: { kind: "arrow", points: [[2, -10], [18, -10]] },
      line: { kind: "line", points: [[2, -10], [18, -10]] },
      polyline: { kind: "line", points: [[2, -10], [18, -10]] },
    };
    const swatch = Object.assign({ kind: "polygon", points: [[3, -3], [17, -3], [17, -17], [3, -17]] },
      kinds[sample.kind] || {}, { role: role });
    const e = shapeElement(swatch, Object.assign(ctx, { unit: 14 }));
    if (e) svg.appendChild(e);
    li.appendChild(document.createTextNode(entry.text));
    return li;
  }

  // The figure for a diagram: the drawing, its legend, its caption lines.
  function draw(d) {
    const fig = document.createElement("figure");
    fig.className = "dg-figure";
    fig.appendChild(svgFor(d));
    if ((d.legend || []).length) {
      const ul = document.createElement("ul");
      ul.className = "dg-legend";
      for (const entry of d.legend) ul.appendChild(legendItem(entry, d.shapes || []));
      fig.appendChild(ul);
    }
    if ((d.caption || []).length) {
      const cap = document.createElement("figcaption");
      cap.className = "dg-caption";
      for (const line of d.caption) {
        const div = document.createElement("div");
        div.textContent = line;
        cap.appendChild(div);
      }
      fig.appendChild(cap);
    }
    return fig;
  }

  // The hook app.js calls where a view is rendered: draws data.diagram (if any) through add,
  // and returns the view's data without it, for the table below.
  function show(data, add) {
    if (!data || !data.diagram || typeof data.diagram !== "object") return data;
    add(draw(data.diagram));
    const rest = Object.assign({}, data);
    delete rest.diagram;
    return rest;
  }

  window.refcamDiagram = { draw: draw, show: show };
})();

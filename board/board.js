// The fleet board: renders each snapshot the server pushes over Server-Sent Events (no refresh, no polling).
// Every value is set with textContent: names, reasons and job ids come from attendees and printers, never markup.
"use strict";

const STATE_WORDS = {
  ready: "ready", printing: "printing", paused: "paused", device_down: "printer down", drained: "drained",
  dead: "agent dead", stopped: "stopped", gone: "silent",
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function clock(eventId) {
  const ms = Number(String(eventId).split("-")[0]);
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return "never";
  return seconds < 60 ? `${seconds.toFixed(1)} s ago` : `${Math.round(seconds / 60)} min ago`;
}

function beatAge(p) {
  // The server sends a heartbeat's age only once it is worth a look (board/wire.py): 0 is a fresh one.
  if (p.beat_age !== undefined) return age(p.beat_age);
  if (p.beat === null || p.beat === undefined) return "never";
  return p.beat === 0 ? "just now" : age(p.beat);
}

function labelsText(d) {
  if (!d || d.labels_left === null || d.labels_left === undefined) return "—";
  return d.labels_source === "roll" ? `≈ ${d.labels_left}` : String(d.labels_left);
}

function printerCard(p) {
  const fields = el("dl", {},
    el("dt", {}, "printing"), el("dd", { "data-field": "inflight" }, p.inflight || "—"),
    el("dt", {}, "printed"), el("dd", { "data-field": "printed" }, p.printed),
    el("dt", {}, "pinned"), el("dd", { "data-field": "depth" }, p.depth),
    el("dt", {}, "heartbeat"), el("dd", { "data-field": "beat" }, beatAge(p)),
  );
  const card = el("article", { class: `printer s-${p.state}`, "data-printer": p.name, "data-state": p.state },
    el("div", { class: "top" },
      el("span", { class: "name" }, p.name),
      el("span", { class: "state", "data-field": "state" }, STATE_WORDS[p.state] || p.state)),
    el("div", { class: "where" }, p.location || ""),
    fields);
  if (p.reasons && p.reasons.length) card.append(el("div", { class: "reasons" }, p.reasons.join(", ")));
  return card;
}

function eventLine(e) {
  const rest = [e.job_id && `job ${e.job_id}`, e.printer, e.reason].filter(Boolean).join(" · ");
  return el("li", {}, el("time", {}, clock(e.id)), el("span", { class: `ev ev-${e.event}` }, e.event), rest);
}

let WORDS = {};  // staff words for counts and duplicate events, sent by the server (protocol/vocabulary.py)

function duplicateLine(e) {
  return el("li", { "data-job": e.job_id || "" },
    el("span", { class: "job" }, `badge ${e.job_id || "?"}`), " — ",
    e.reason || `printed at ${e.printer || "?"}`,
    el("div", { class: "where" },
      `${clock(e.id)} · ${WORDS[e.event] || e.event}` +
      (e.printer ? ` · latest copy at ${e.printer}` : "")));
}

function render(s) {
  document.getElementById("venue").textContent = s.venue ? `· ${s.venue}` : "";
  const error = document.getElementById("error");
  error.hidden = !s.error;
  error.textContent = s.error || "";
  if (!s.printers) return;
  const counts = s.counts || {};
  // Waiting: the pool and every printer's queue (a zone's badges wait in its printers' queues, not the pool).
  document.getElementById("pool").textContent = counts.queued ?? s.pool ?? "–";
  document.getElementById("printing").textContent = counts.printing ?? 0;
  document.getElementById("printed").textContent = counts.printed ?? 0;
  document.getElementById("dlq").textContent = s.dlq ?? "–";
  WORDS = s.words || WORDS;
  const staff = s.staff || {};
  for (const b of document.querySelectorAll("[data-count]")) b.textContent = staff[b.dataset.count] ?? 0;
  for (const w of document.querySelectorAll("[data-words]")) w.textContent = WORDS[w.dataset.words] || "";
  document.getElementById("dlq-box").classList.toggle("alert", (s.dlq || 0) > 0);
  document.getElementById("dup-box").classList.toggle("alert", (staff.may_exist_twice || 0) > 0);
  document.getElementById("twice-box").classList.toggle("alert", (staff.printed_twice || 0) > 0);
  document.getElementById("printers").replaceChildren(...s.printers.map(printerCard));
  document.getElementById("events").replaceChildren(...(s.events || []).map(eventLine));
  renderDay(s.day, s.printers);
  // The attendee list's counts, when the venue has a list: checked in of expected, tickets cancelled (not the jobs
  // cancelled above), and per ticket type.
  const att = s.attendees;
  document.getElementById("attendees-section").hidden = !att;
  if (att) {
    document.getElementById("checked-in").textContent = att.checked_in;
    document.getElementById("expected").textContent = att.expected;
    document.getElementById("tickets-cancelled").textContent = att.cancelled ?? 0;
    document.getElementById("by-type").replaceChildren(...Object.entries(att.by_ticket_type).map(([type, c]) =>
      el("span", { class: "ticket-type" }, `${type === "-" ? "(no type)" : type} ${c.checked_in}/${c.expected}`)));
  }
  // Pre-printed badges (preprint/store.py, counts), every run together, when the venue has a run.
  const runs = (s.preprint && s.preprint.runs) || [];
  document.getElementById("preprint-section").hidden = runs.length === 0;
  for (const b of document.querySelectorAll("[data-preprint]")) {
    b.textContent = runs.reduce((n, r) => n + ((r.counts || {})[b.dataset.preprint] || 0), 0);
  }
  const dups = s.duplicates || [];
  document.getElementById("duplicates-section").hidden = dups.length === 0;
  document.getElementById("duplicates").replaceChildren(...dups.map(duplicateLine));
}


// ---- The event day (eventday/ computes it; board/wire.py sends it) ----
const SVG = "http://www.w3.org/2000/svg";
const ZONE_COLOURS = ["#1a73e8", "#e37400", "#188038", "#a142f4", "#d93025", "#12b5cb", "#9e6a03", "#e52592",
  "#5f6368", "#185abc"];
const CURVE = 180;  // minutes drawn, as eventday.counts.CURVE_MIN
let clockOffset = 0;  // server ms minus this page's ms, from each message's "t": a phone's clock may be off

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
}

function minutesText(m) {
  if (m === null || m === undefined) return "—";
  if (m === 0) return "none";
  return m < 1 ? "< 1 min" : `${Math.round(m)} min`;
}

function waitedText(ms) {
  const s = Math.max(0, (Date.now() + clockOffset - ms) / 1000);
  return s < 60 ? `${Math.round(s)} s` : s < 3600 ? `${Math.floor(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}

// Per zone, arrivals a minute (printed plus handed over) for the CURVE minutes ending with day.minute.
function curves(day) {
  const out = {};
  for (const series of [day.arrivals || {}, day.handed_over || {}]) {
    for (const [zone, minutes] of Object.entries(series)) {
      const counts = out[zone] || (out[zone] = new Array(CURVE).fill(0));
      for (const [minute, n] of Object.entries(minutes)) {
        const i = Number(minute) - (day.minute - CURVE + 1);
        if (i >= 0 && i < CURVE) counts[i] += n;
      }
    }
  }
  return out;
}

function chart(zones, perZone) {
  // One stacked bar a minute, one path per zone (a few elements, however many minutes): light on a slow phone.
  const width = 360, height = 120, top = 12, bottom = 14, bar = width / CURVE;
  const totals = new Array(CURVE).fill(0);
  for (const zone of zones) (perZone[zone] || []).forEach((n, i) => { totals[i] += n; });
  const peak = Math.max(1, ...totals);
  const scale = (height - top - bottom) / peak;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": "arrivals a minute, last 3 hours", "data-total": totals.reduce((a, b) => a + b, 0),
    preserveAspectRatio: "none" });
  const base = new Array(CURVE).fill(height - bottom);
  zones.forEach((zone, z) => {
    let d = "";
    (perZone[zone] || []).forEach((n, i) => {
      if (!n) return;
      const h = n * scale;
      base[i] -= h;
      d += `M${(i * bar).toFixed(1)} ${base[i].toFixed(1)}h${bar.toFixed(2)}v${h.toFixed(1)}h${(-bar).toFixed(2)}z`;
    });
    if (d) root.append(svg("path", { d, fill: ZONE_COLOURS[z % ZONE_COLOURS.length], "data-zone": zone }));
  });
  root.append(svg("line", { x1: 0, x2: width, y1: height - bottom, y2: height - bottom, stroke: "#9aa0a6" }));
  for (const [x, anchor, words] of [[0, "start", "3 h ago"], [width / 2, "middle", "1½ h"], [width, "end", "now"]]) {
    const label = svg("text", { x, y: height - 3, "text-anchor": anchor });
    label.textContent = words;
    root.append(label);
  }
  const most = svg("text", { x: 2, y: 9 });
  most.textContent = `${peak} a minute`;
  root.append(most);
  return root;
}

// An SVG swatch, not a style attribute: the page's CSP allows no inline styles.
function legendChip(colour) {
  const chip = svg("svg", { viewBox: "0 0 10 10", class: "chip" });
  chip.append(svg("rect", { width: 10, height: 10, rx: 2, fill: colour }));
  return chip;
}

function cell(field, value) { return el("td", { "data-field": field }, value); }

function renderDay(day, printers) {
  const section = document.getElementById("day-section");
  section.hidden = !day;
  if (!day) return;
  for (const [id, value] of [["day-expected", day.expected], ["day-arrived", day.arrived],
    ["day-to-come", day.to_come]]) document.getElementById(id).textContent = value ?? "—";
  const perZone = curves(day);
  const zoneNames = Object.keys({ ...perZone, ...(day.zones || {}) }).sort();
  const sum = (zone, last) => (perZone[zone] || []).slice(-last).reduce((a, b) => a + b, 0);
  document.getElementById("day-recent").textContent = zoneNames.reduce((a, z) => a + sum(z, 15), 0);
  document.getElementById("chart").replaceChildren(chart(zoneNames, perZone));
  document.getElementById("legend").replaceChildren(...zoneNames.map((zone, z) =>
    el("span", {}, legendChip(ZONE_COLOURS[z % ZONE_COLOURS.length]), zone === "-" ? "(no zone)" : zone)));
  document.querySelector("#zones tbody").replaceChildren(...zoneNames.map((zone) => {
    const z = (day.zones || {})[zone] || {};
    return el("tr", { "data-zone": zone },
      el("td", {}, zone === "-" ? "(no zone)" : zone), cell("waiting", z.waiting ?? 0),
      cell("wait", minutesText(z.wait_minutes)), cell("rate", (z.per_minute ?? 0).toFixed(1)),
      cell("arrived", sum(zone, CURVE)));
  }));
  const glance = day.printers || {};
  const faults = printers.filter((p) => glance[p.name] && glance[p.name].fault_since_ms)
    .sort((a, b) => glance[a.name].fault_since_ms - glance[b.name].fault_since_ms);
  document.getElementById("faults-section").hidden = faults.length === 0;
  document.getElementById("faults").replaceChildren(...faults.map((p) =>
    el("li", { "data-printer": p.name, "data-since": glance[p.name].fault_since_ms },
      `${p.name}: ${(p.reasons && p.reasons.length ? p.reasons.join(", ") : STATE_WORDS[p.state] || p.state)}`,
      el("span", {}, ` · ${p.location || ""} · waiting ${waitedText(glance[p.name].fault_since_ms)}`))));
  document.querySelector("#glance tbody").replaceChildren(...printers.map((p) => {
    const d = glance[p.name] || {};
    const low = d.labels_left !== null && d.labels_left !== undefined && d.labels_left < 20;
    return el("tr", { "data-printer": p.name, class: d.fault_since_ms ? "bad" : low ? "low" : "" },
      el("td", {}, p.name), cell("per_hour", d.per_hour ?? 0), cell("busy", `${p.busy ?? 0}%`),
      cell("labels", labelsText(d)));
  }));
}

// ---- The stream: the snapshot once, then merge patches (RFC 7386) at most once every 2 seconds ----
function applyPatch(target, patch) {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete target[key];
    else if (typeof value === "object" && !Array.isArray(value) && target[key] && typeof target[key] === "object"
      && !Array.isArray(target[key])) applyPatch(target[key], value);
    else target[key] = value;
  }
  return target;
}

function byId(a, b) {
  const [am, as] = String(a.id).split("-").map(Number), [bm, bs] = String(b.id).split("-").map(Number);
  return am - bm || as - bs;
}

// The page's form (keyed objects) as the lists render() takes.
function asLists(w) {
  const printers = Object.values(w.printers || {}).sort((a, b) => (a.name < b.name ? -1 : 1));
  return { ...w, printers, events: Object.values(w.events || {}).sort(byId).reverse(),
    duplicates: Object.values(w.duplicates || {}).sort(byId).reverse() };
}

let state = {};

function connect() {
  const link = document.getElementById("link");
  const source = new EventSource("/updates");
  source.onopen = () => { link.dataset.state = "live"; link.textContent = "live"; };
  source.onmessage = (message) => {
    const m = JSON.parse(message.data);
    if (m.t) clockOffset = m.t - Date.now();
    state = m.full ? m.full : applyPatch(state, m.patch || {});
    render(asLists(state));
    if (m.full && !document.body.dataset.ready) {
      document.body.dataset.readyMs = String(Math.round(performance.now()));  // since navigation: bench/board.py
      document.body.dataset.ready = "1";  // the page is drawn: what a test or a bench waits for
    }
    link.dataset.state = "live";
    link.textContent = `live · updated ${new Date().toLocaleTimeString()}`;
  };
  // EventSource reconnects by itself; say so, so nobody trusts a frozen page.
  source.onerror = () => { link.dataset.state = "lost"; link.textContent = "connection lost — reconnecting…"; };
}

connect();

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

function printerCard(p) {
  const fields = el("dl", {},
    el("dt", {}, "printing"), el("dd", { "data-field": "inflight" }, p.inflight || "—"),
    el("dt", {}, "printed"), el("dd", { "data-field": "printed" }, p.printed),
    el("dt", {}, "pinned"), el("dd", { "data-field": "depth" }, p.depth),
    el("dt", {}, "heartbeat"), el("dd", { "data-field": "beat" }, age(p.beat_age)),
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
  document.getElementById("pool").textContent = s.pool ?? "–";
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
  const dups = s.duplicates || [];
  document.getElementById("duplicates-section").hidden = dups.length === 0;
  document.getElementById("duplicates").replaceChildren(...dups.map(duplicateLine));
}

function connect() {
  const link = document.getElementById("link");
  const source = new EventSource("/events");
  source.onopen = () => { link.dataset.state = "live"; link.textContent = "live"; };
  source.onmessage = (message) => {
    render(JSON.parse(message.data));
    link.dataset.state = "live";
    link.textContent = `live · updated ${new Date().toLocaleTimeString()}`;
  };
  // EventSource reconnects by itself; say so, so nobody trusts a frozen page.
  source.onerror = () => { link.dataset.state = "lost"; link.textContent = "connection lost — reconnecting…"; };
}

connect();

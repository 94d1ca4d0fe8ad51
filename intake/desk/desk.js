// The help desk: search the attendee list as you type, see each badge's state, print, reprint with a reason,
// cancel a ticket (after a confirmation, with an undo), add a walk-in. Only the buttons the token may use are shown
// (what it may do comes from /desk/settings.json). The token comes once in the address's fragment (/desk#token=...), which browsers
// never send to a server, and is kept in this browser's localStorage (as the kiosk keeps its own).
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    localStorage.setItem("badge-desk-token", fromHash);
    history.replaceState(null, "", location.pathname);
  }
  const token = localStorage.getItem("badge-desk-token");
  let asked = 0;  // each search's number: an older answer arriving late is dropped
  let timer = null;
  // What this token may do (/desk/settings.json); nothing until the intake said so.
  let may = {};
  let confirming = null;  // the handle of the attendee whose "cancel the ticket?" question is open (kept across the redraws)
  let noneFound = false;  // the message says "No one found": the next results take it away

  function say(text, error, undo) {
    $("message").textContent = text;
    $("message").className = error ? "error" : "";
    noneFound = false;
    // An undo belongs to the message it stands beside: any other message takes it away.
    $("undo").hidden = !undo;
    $("undo").onclick = undo ? () => { $("undo").hidden = true; act(undo); } : null;
  }

  async function loadSettings() {
    if (!token) return;
    let products = [];
    try {
      const settings = await call("GET", "/desk/settings.json");
      may = settings.may || {};
      showDay(settings.day);
      products = settings.pretix_products || [];
    } catch (err) {
      say(err.message, true);
    }
    $("walk-in").hidden = !may.walk_in;
    // The pretix products a walk-in's order may be of (the pretix sync offers them); none: no choice shown.
    const select = $("walk-in-product");
    select.replaceChildren(new Option("No pretix order", ""), ...products.map((p) => new Option(p.name, p.id)));
    select.hidden = products.length === 0;
    await loadVoids();
  }

  // The pre-printed badges staff must pull from their boxes before the doors open (printed, then void).
  async function loadVoids() {
    let runs = [];
    try { runs = (await call("GET", "/v1/preprint/voids")).runs || []; } catch (err) { return; }
    const list = $("voids-list");
    list.textContent = "";
    let n = 0;
    for (const run of runs) {
      for (const v of run.voids) {
        if (!v.printed) continue;
        const li = document.createElement("li");
        li.textContent = "Run " + run.run + ", box " + v.box + ": " + v.name + " (" + v.reason + ")";
        list.appendChild(li);
        n += 1;
      }
    }
    $("voids-count").textContent = String(n);
    $("voids").hidden = n === 0;
  }

  // The day's counts at the top (expected, arrived, still to come), from the attendee list; hidden without one.
  function showDay(day) {
    $("day").hidden = !day;
    if (!day) return;
    $("day-expected").textContent = day.expected;
    $("day-arrived").textContent = day.arrived;
    $("day-to-come").textContent = day.to_come;
  }

  // The counts move all day: read again every DAY_EVERY ms (one small request; the desk's searches come first).
  const DAY_EVERY = 15000;
  setInterval(async () => {
    if (!token) return;
    try { showDay((await call("GET", "/desk/settings.json")).day); } catch (err) { /* the next try, or a search, says */ }
  }, DAY_EVERY);

  async function call(method, path, body) {
    const init = { method: method, headers: { "Authorization": "Bearer " + token } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(path, init);
    let data = {};
    try { data = await resp.json(); } catch (err) { /* an empty answer */ }
    if (!resp.ok) throw new Error(data.detail || resp.statusText);
    return data;
  }

  function when(ms) {
    return ms ? new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "";
  }

  // A badge in a pre-print box (a.preprint): where it is, unless it is void (then the desk prints theirs).
  function boxText(p) {
    const where = p.box_label + " (run " + p.run + ")";
    if (p.state === "preprinted") return "Pre-printed: " + where + " — hand it over";
    if (p.state === "handed_over") return "Pre-printed badge handed over: " + where;
    if (p.state === "void") return "Pre-printed badge void — pull it from " + where;
    return "Being pre-printed for " + where;
  }

  function badgeText(a) {
    const b = a.badge;
    if (a.status === "cancelled") return "Ticket cancelled";
    if (a.preprint && (a.preprint.state !== "void" || b.state === "none")) return boxText(a.preprint);
    if (b.state === "none") return a.attention ? "No badge yet: " + a.attention : "No badge yet";
    if (b.state === "printed") {
      const again = b.reprints ? " (reprinted " + b.reprints + "×)" : "";
      return "Printed at " + (b.location || b.printer) + " " + when(b.printed_ms) + again;
    }
    if (b.state === "printing") return "Printing at " + (b.location || b.printer);
    if (b.state === "queued") return "Waiting for a printer";
    return "Badge " + b.state;
  }

  function row(a) {
    const li = $("row").content.firstElementChild.cloneNode(true);
    li.dataset.code = a.handle;
    li.classList.toggle("cancelled", a.status === "cancelled");
    li.querySelector(".name").textContent = a.name || "(no name)";
    li.querySelector(".company").textContent = a.company;
    li.querySelector(".type").textContent = a.ticket_type;
    li.querySelector(".code").textContent = a.order_code || "";
    const badge = li.querySelector(".badge");
    badge.textContent = badgeText(a);
    badge.dataset.state = a.status === "cancelled" ? "cancelled" : a.badge.state;
    const print = li.querySelector(".print");
    const boxed = a.preprint && a.preprint.state !== "void";
    print.hidden = !may.print || a.status === "cancelled" || a.badge.state !== "none" || Boolean(boxed);
    const handOver = li.querySelector(".hand-over");
    handOver.hidden = !may.print || a.status === "cancelled" || !boxed || a.preprint.state !== "preprinted";
    handOver.addEventListener("click", () => act(async () => {
      await call("POST", "/v1/attendees/" + encodeURIComponent(a.handle) + "/handed-over");
      return "Handed over the badge of " + a.name + " (" + a.preprint.box_label + ")";
    }));
    print.addEventListener("click", () => act(async () => {
      await call("POST", "/v1/attendees/" + encodeURIComponent(a.handle) + "/badge");
      return "Printing the badge of " + a.name;
    }));
    const reason = li.querySelector(".reason");
    const reprint = li.querySelector(".reprint");
    const printed = a.badge.state === "printed" || a.badge.state === "dead";
    reason.hidden = reprint.hidden = !may.reprint || !printed || a.status === "cancelled";
    reprint.addEventListener("click", () => act(async () => {
      if (!reason.value.trim()) throw new Error("Say why the badge is printed again");
      await call("POST", "/v1/jobs/" + encodeURIComponent(a.job_id) + "/reprint", { reason: reason.value.trim() });
      return "Reprinting the badge of " + a.name;
    }));
    // The attendee's handle, never the ticket code (which a desk sees masked): a code is a credential.
    const path = "/v1/attendees/" + encodeURIComponent(a.handle);
    const restoreStep = async () => {
      await call("PATCH", path, { status: "valid" });
      return "Restored the ticket of " + a.name;
    };
    const cancel = li.querySelector(".cancel");
    const confirm = li.querySelector(".confirm");
    cancel.hidden = !may.cancel || a.status === "cancelled";
    confirm.hidden = cancel.hidden || confirming !== a.handle;
    li.querySelector(".confirm-text").textContent = "Cancel the ticket of " + (a.name || a.code) + "?";
    cancel.addEventListener("click", () => {
      confirming = a.handle;
      confirm.hidden = false;
      li.querySelector(".keep").focus();
    });
    li.querySelector(".keep").addEventListener("click", () => {
      confirming = null;
      confirm.hidden = true;
    });
    li.querySelector(".confirm-cancel").addEventListener("click", () => {
      confirming = null;
      act(async () => {
        await call("PATCH", path, { status: "cancelled" });
        return ["Cancelled the ticket of " + a.name, restoreStep];
      });
    });
    const restore = li.querySelector(".restore");
    restore.hidden = !may.restore || a.status !== "cancelled";
    restore.addEventListener("click", () => act(restoreStep));
    return li;
  }

  // A step answers its message, or [message, the step that undoes it].
  async function act(step) {
    try {
      const done = await step();
      if (Array.isArray(done)) say(done[0], false, done[1]);
      else say(done, false);
    } catch (err) {
      say(err.message, true);
    }
    await search();
  }

  async function search() {
    const q = $("q").value.trim();
    const mine = ++asked;
    if (!q) { $("results").replaceChildren(); return; }
    try {
      const data = await call("GET", "/v1/attendees?q=" + encodeURIComponent(q));
      if (mine !== asked) return;
      $("results").replaceChildren(...data.attendees.map(row));
      if (!data.attendees.length) {
        say("No one found for “" + q + "”", false);
        noneFound = true;
      } else if (noneFound) {
        say("", false);  // an earlier search's "No one found" does not stand above these results
      }
    } catch (err) {
      if (mine === asked) say(err.message, true);
    }
  }

  if (!token) say("This desk is not set up yet (no token in the address): ask staff.", true);
  loadSettings().then(() => { if ($("q").value.trim()) search(); });
  $("q").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, 150);
  });
  $("walk-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(async () => {
      const body = { name: $("walk-in-name").value, company: $("walk-in-company").value };
      if ($("walk-in-product").value) body.pretix_product = Number($("walk-in-product").value);
      const a = await call("POST", "/v1/attendees", body);
      $("walk-in-form").reset();
      $("q").value = a.name;
      return "Added " + a.name + " and printing the badge";
    });
  });
  // Badge states change while the desk looks: refresh what is shown.
  setInterval(() => { if ($("q").value.trim() && document.activeElement.className !== "reason") search(); }, 2000);
  $("q").focus();
})();

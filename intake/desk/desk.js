// The help desk: search the attendee list as you type, see each badge's state, print, reprint with a reason,
// cancel a ticket, add a walk-in. The token comes once in the address's fragment (/desk#token=...), which browsers
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

  function say(text, error) {
    $("message").textContent = text;
    $("message").className = error ? "error" : "";
  }

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

  function badgeText(a) {
    const b = a.badge;
    if (a.status === "cancelled") return "Ticket cancelled";
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
    li.dataset.code = a.code;
    li.classList.toggle("cancelled", a.status === "cancelled");
    li.querySelector(".name").textContent = a.name || "(no name)";
    li.querySelector(".company").textContent = a.company;
    li.querySelector(".type").textContent = a.ticket_type;
    li.querySelector(".code").textContent = a.order_code || "";
    const badge = li.querySelector(".badge");
    badge.textContent = badgeText(a);
    badge.dataset.state = a.status === "cancelled" ? "cancelled" : a.badge.state;
    const print = li.querySelector(".print");
    print.hidden = a.status === "cancelled" || a.badge.state !== "none";
    print.addEventListener("click", () => act(async () => {
      await call("POST", "/v1/attendees/" + encodeURIComponent(a.code) + "/badge");
      return "Printing the badge of " + a.name;
    }));
    const reason = li.querySelector(".reason");
    const reprint = li.querySelector(".reprint");
    const printed = a.badge.state === "printed" || a.badge.state === "dead";
    reason.hidden = reprint.hidden = !printed || a.status === "cancelled";
    reprint.addEventListener("click", () => act(async () => {
      if (!reason.value.trim()) throw new Error("Say why the badge is printed again");
      await call("POST", "/v1/jobs/" + encodeURIComponent(a.job_id) + "/reprint", { reason: reason.value.trim() });
      return "Reprinting the badge of " + a.name;
    }));
    const cancel = li.querySelector(".cancel");
    cancel.hidden = a.status === "cancelled";
    cancel.addEventListener("click", () => act(async () => {
      await call("PATCH", "/v1/attendees/" + encodeURIComponent(a.code), { status: "cancelled" });
      return "Cancelled the ticket of " + a.name;
    }));
    return li;
  }

  async function act(step) {
    try {
      say(await step(), false);
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
      if (!data.attendees.length) say("No one found for “" + q + "”", false);
    } catch (err) {
      if (mine === asked) say(err.message, true);
    }
  }

  if (!token) say("This desk is not set up yet (no token in the address): ask staff.", true);
  $("q").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, 150);
  });
  $("walk-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    act(async () => {
      const a = await call("POST", "/v1/attendees", {
        name: $("walk-in-name").value, company: $("walk-in-company").value,
      });
      $("walk-in-form").reset();
      $("q").value = a.name;
      return "Added " + a.name + " and printing the badge";
    });
  });
  // Badge states change while the desk looks: refresh what is shown.
  setInterval(() => { if ($("q").value.trim() && document.activeElement.className !== "reason") search(); }, 2000);
  $("q").focus();
})();

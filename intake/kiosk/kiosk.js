// The self-service kiosk. With an attendee list loaded it scans a ticket, greets the attendee by the name on the
// list and follows their one badge until it says where it came out; a second scan says where and when it printed;
// an unknown or cancelled ticket is sent to the help desk. Names are typed only where the venue allows it
// (kiosk.allow_unlisted) or has no list: then the kiosk creates the badge job itself, as it always did.
// The token comes once in the address's fragment (/kiosk#token=...), which browsers never send to a server; it is
// kept in this browser's localStorage and removed from the address bar.
(function () {
  "use strict";
  // A venue's translated strings file from before a key was added still works: the missing key is shown in English.
  const S = Object.assign({
    no_printer: "No printer can print your badge right now. Please go to the help desk.",
    queued_wait: "Your badge is in line: about {wait} min…",
    preprint_ready: "{name}, your badge is ready: box {box}, {range}, {pickup}.",
    preprint_planned: "{name}, your badge is being printed for box {box}, {range}: please collect it at {pickup}.",
    preprint_handed_over: "Your badge was handed to you already. If it is lost, please go to {pickup}.",
  }, window.KIOSK_STRINGS);
  const $ = (id) => document.getElementById(id);
  const fill = (text, values) => text.replace(/\{(\w+)\}/g, (_, k) => (values && values[k]) || S.somewhere);

  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    localStorage.setItem("badge-kiosk-token", fromHash);
    history.replaceState(null, "", location.pathname);
  }
  const token = localStorage.getItem("badge-kiosk-token");
  // list: the venue has an attendee list; names: the kiosk may type a name; reset_after: seconds an answer stays.
  let settings = { list: false, names: true, reset_after: 20 };
  let turn = 0;  // each check-in's number: a new scan makes an older one's answers stale
  let resetTimer = null;

  document.documentElement.lang = S.lang;
  document.title = S.title;
  $("title").textContent = S.title;
  $("code-label").textContent = S.code_label;
  $("name-label").textContent = S.name_label;
  $("submit").textContent = S.submit;
  $("again").textContent = S.again;

  async function loadSettings() {
    try {
      const resp = await fetch("/kiosk/settings.json");
      if (resp.ok) settings = await resp.json();
    } catch (err) { /* the defaults: names typed, as without a list */ }
    $("name-row").hidden = !settings.names;
    $("name").required = settings.names && !settings.list;
    $("prompt").textContent = settings.names && !settings.list ? S.prompt : S.prompt_scan;
  }

  function show(text, kind) {
    const status = $("status");
    status.textContent = text;
    status.className = kind || "";
    status.dataset.kind = kind || "";
    document.body.classList.toggle("answered", Boolean(text));
  }

  function headers() {
    return { "Authorization": "Bearer " + token, "Content-Type": "application/json" };
  }

  function clock(ms) {
    return ms ? new Date(ms).toLocaleTimeString(S.lang, { hour: "2-digit", minute: "2-digit" }) : "";
  }

  // A job (the typed-name flow) or an attendee's badge, as one line and its kind.
  function describe(state, values, duplicate, greet) {
    const hello = greet ? fill(S.hello, values) + " — " : "";
    // Waiting while no printer it may go to can print (all out of labels, paused, down): not "next in line".
    if (state === "queued" && values.no_printer) return [S.no_printer, "error"];
    if (state === "printing") return [hello + fill(S.printing, values), "printing"];
    if (state === "printed") {
      if (duplicate && values.time) return [fill(S.printed_before, values), "ready"];
      return [fill(duplicate ? S.already : S.ready, values), "ready"];
    }
    if (state === "cancelled") return [S.cancelled, "error"];
    if (state === "dead") return [S.failed, "error"];
    // The zone's expected wait, when it is long enough to say (kiosk.say_wait_after): about how long, not "next".
    if (values.wait) return [hello + fill(S.queued_wait, values), "queued"];
    return [hello + S.queued, "queued"];
  }

  // The answer stays until the next scan or reset_after seconds; the form is ready for the next attendee at once.
  function finish() {
    $("again").hidden = false;
    $("form").reset();
    $("code").focus();
    clearTimeout(resetTimer);
    resetTimer = setTimeout(reset, settings.reset_after * 1000);
  }

  function reset() {
    clearTimeout(resetTimer);
    turn += 1;
    $("form").reset();
    $("again").hidden = true;
    show("", "");
    loadSettings();
    $("code").focus();
  }

  // A typed name's job says its wait as a scanned ticket's badge does (wait_minutes), under the same word.
  const jobValues = (job) => ({ ...job, wait: job.wait_minutes });

  async function followJob(job, mine) {
    let state = job.state;
    for (let i = 0; i < 40 && state !== "printed" && mine === turn; i++) {
      const resp = await fetch("/v1/jobs/" + encodeURIComponent(job.job_id) + "?wait=25&state=" + state,
        { headers: headers() });
      if (mine !== turn) return;
      if (!resp.ok) { show(S.failed, "error"); return; }
      job = await resp.json();
      state = job.state;
      const [text, kind] = describe(state, jobValues(job), job.duplicate, false);
      show(text, kind);
      if (kind === "error") break;
    }
  }

  // The badge is followed by the id the answer gave (badge_id), not by the ticket code scanned.
  async function followBadge(body, mine) {
    const values = (b) => ({
      name: body.first_name || body.name, location: b.location, time: clock(b.printed_ms), no_printer: b.no_printer,
      wait: b.wait_minutes,
    });
    let badge = body.badge;
    let [text, kind] = describe(badge.state, values(badge), body.duplicate, true);
    show(text, kind);
    for (let i = 0; i < 120 && badge.state !== "printed" && kind !== "error" && mine === turn; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      if (mine !== turn) return;
      const resp = await fetch("/v1/attendees/" + encodeURIComponent(body.badge_id), { headers: headers() });
      if (resp.status === 429) continue;
      if (!resp.ok) { show(S.failed, "error"); return; }
      badge = (await resp.json()).badge;
      if (mine !== turn) return;
      [text, kind] = describe(badge.state, values(badge), false, true);
      show(text, kind);
    }
  }

  async function createJob(code, name, mine) {
    const resp = await fetch("/v1/jobs", {
      method: "POST", headers: headers(), body: JSON.stringify({ attendee_id: code, name: name }),
    });
    const body = await resp.json();
    if (resp.status === 422) { show(fill(S.invalid, { detail: body.detail }), "error"); return; }
    if (!answered(resp)) return;
    const [text, kind] = describe(body.state, jobValues(body), body.duplicate, false);
    show(text, kind);
    await followJob(body, mine);
  }

  function answered(resp) {
    if (resp.status === 429) { show(S.busy, "error"); return false; }
    if (resp.status === 401 || resp.status === 403) { show(S.no_token, "error"); return false; }
    if (!resp.ok) { show(S.failed, "error"); return false; }
    return true;
  }

  async function checkIn(code, name, mine) {
    if (!settings.list) { await createJob(code, name, mine); return; }
    const resp = await fetch("/v1/attendees/" + encodeURIComponent(code) + "/badge",
      { method: "POST", headers: headers() });
    if (resp.status === 404) {
      if (settings.names && name) { await createJob(code, name, mine); return; }
      show(S.unknown, "error");
      return;
    }
    if (resp.status === 409) {
      const problem = await resp.json();
      show(problem.needs_attention ? S.see_desk : S.cancelled_ticket, "error");
      return;
    }
    if (!answered(resp)) return;
    const body = await resp.json();
    if (body.preprint && body.printed === false) {
      // A pre-printed badge waits in its box: nothing was printed, the answer says where to collect it.
      const p = body.preprint;
      const key = p.state === "preprinted" ? "preprint_ready" : "preprint_" + p.state;
      const values = { name: body.first_name || body.name, box: String(p.box), range: p.range, pickup: p.pickup };
      show(fill(S[key] || S.preprint_ready, values), "ready");
      return;
    }
    await followBadge(body, mine);
  }

  async function submit(event) {
    event.preventDefault();
    if (!token) { show(S.no_token, "error"); return; }
    const code = $("code").value.trim();
    const name = $("name").value.trim();
    if (!code) return;
    clearTimeout(resetTimer);
    turn += 1;
    const mine = turn;
    show(S.sending, "sending");
    $("again").hidden = false;  // "Next attendee" from the first answer on, however long the badge waits
    $("form").reset();  // ready for the next scan while this one is answered
    try {
      await checkIn(code, name, mine);
    } catch (err) {
      if (mine === turn) show(S.failed, "error");
    } finally {
      if (mine === turn) finish();
    }
  }

  $("form").addEventListener("submit", submit);
  $("code").addEventListener("keydown", (e) => {
    // A scanner ends with Enter: check in at once, unless a name is still to be typed.
    if (e.key === "Enter" && !$("name").required) return;
    if (e.key === "Enter") { e.preventDefault(); $("name").focus(); }
  });
  $("again").addEventListener("click", reset);
  loadSettings();
})();

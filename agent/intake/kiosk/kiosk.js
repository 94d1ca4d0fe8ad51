// The self-service kiosk: create the badge job, then follow it until it says where the badge came out.
// The token comes once in the address's fragment (/kiosk#token=...), which browsers never send to a server; it is
// kept in this browser's localStorage and removed from the address bar.
(function () {
  "use strict";
  const S = window.KIOSK_STRINGS;
  const $ = (id) => document.getElementById(id);
  const fill = (text, values) => text.replace(/\{(\w+)\}/g, (_, k) => (values && values[k]) || S.somewhere);

  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    localStorage.setItem("badge-kiosk-token", fromHash);
    history.replaceState(null, "", location.pathname);
  }
  const token = localStorage.getItem("badge-kiosk-token");

  document.documentElement.lang = S.lang;
  document.title = S.title;
  $("title").textContent = S.title;
  $("prompt").textContent = S.prompt;
  $("code-label").textContent = S.code_label;
  $("name-label").textContent = S.name_label;
  $("submit").textContent = S.submit;
  $("again").textContent = S.again;

  function show(text, kind) {
    const status = $("status");
    status.textContent = text;
    status.className = kind || "";
    status.dataset.kind = kind || "";
  }

  function headers() {
    return { "Authorization": "Bearer " + token, "Content-Type": "application/json" };
  }

  function describe(job) {
    if (job.state === "printing") return [fill(S.printing, job), "printing"];
    if (job.state === "printed") return [fill(job.duplicate ? S.already : S.ready, job), "ready"];
    if (job.state === "cancelled") return [S.cancelled, "error"];
    if (job.state === "dead") return [S.failed, "error"];
    return [S.queued, "queued"];
  }

  async function follow(job) {
    let state = job.state;
    for (let i = 0; i < 40 && state !== "printed"; i++) {
      const resp = await fetch("/v1/jobs/" + encodeURIComponent(job.job_id) + "?wait=25&state=" + state,
        { headers: headers() });
      if (!resp.ok) { show(S.failed, "error"); return; }
      job = await resp.json();
      state = job.state;
      const [text, kind] = describe(job);
      show(text, kind);
      if (kind === "error") break;
    }
    $("again").hidden = false;
  }

  async function submit(event) {
    event.preventDefault();
    if (!token) { show(S.no_token, "error"); return; }
    const code = $("code").value.trim();
    const name = $("name").value.trim();
    show(S.sending, "sending");
    $("submit").disabled = true;
    try {
      const resp = await fetch("/v1/jobs", {
        method: "POST", headers: headers(), body: JSON.stringify({ attendee_id: code, name: name }),
      });
      const body = await resp.json();
      if (resp.status === 422) { show(fill(S.invalid, { detail: body.detail }), "error"); return; }
      if (resp.status === 429) { show(S.busy, "error"); return; }
      if (resp.status === 401 || resp.status === 403) { show(S.no_token, "error"); return; }
      if (!resp.ok) { show(S.failed, "error"); return; }
      const [text, kind] = describe(body);
      show(text, kind);
      $("form").hidden = true;
      await follow(body);
    } catch (err) {
      show(S.failed, "error");
    } finally {
      $("submit").disabled = false;
    }
  }

  $("form").addEventListener("submit", submit);
  $("code").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); $("name").focus(); }  // a scanner ends with Enter
  });
  $("again").addEventListener("click", () => {
    $("form").reset(); $("form").hidden = false; $("again").hidden = true; show("", ""); $("code").focus();
  });
})();

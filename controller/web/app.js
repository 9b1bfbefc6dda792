// The jetsweep dashboard's shell: login, session, live updates (EventSource on /api/events) and hash routing;
// the pages are in pages.js and analysis.js, the helpers in core.js. Contract with the browser tests:
// controller/web/README.md (data-testid / data-value of every number).
"use strict";
(function () {
  const J = window.jetsweep;
  const { state, page, el, raw, isNum, fmt, num, td, duration, mean, median, showError, AuthError, api, laterEpochs, meanOf, runFigures, modeOf, classOf, destroyCharts, chartBox, chart, colors, sparkline, snapshotPart, pages } = J;

  // ---- shell: login, session, live updates, routing ----

  function setLive(text, cls) {
    const live = document.querySelector('[data-testid="live-status"]');
    live.textContent = text;
    live.className = "live " + (cls || "");
    live.dataset.value = String(state.snapshots);
  }

  function showLogin(message) {
    destroyCharts();
    page.dataset.page = "login";
    page.removeAttribute("data-ready");
    const input = el("input", { testid: "login-token", attrs: { type: "password", name: "token", autocomplete: "current-password", required: "" } });
    const form = el("form", { testid: "login-form", cls: "login" },
      el("h1", { text: "jetsweep: log in" }),
      el("p", { cls: "note", text: "The controller's API token, or its read-only viewer token (--viewer-token-file)." }),
      el("input", { attrs: { type: "text", name: "username", autocomplete: "username", value: "jetsweep", hidden: "" } }),
      input,
      el("button", { testid: "login-submit", text: "Log in", attrs: { type: "submit" } }));
    if (message) form.append(el("p", { testid: "login-error", cls: "notready", text: message }));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        const r = await api("/api/login", { method: "POST", body: JSON.stringify({ token: input.value }), noAuthRedirect: true });
        state.role = r.role;
        state.authRequired = r.auth_required;
        afterLogin();
      } catch (e) {
        showLogin(e.status === 401 ? "Wrong token." : String(e.message));
      }
    });
    page.replaceChildren(form);
    document.querySelector('[data-testid="role"]').textContent = "";
    document.getElementById("logout").hidden = true;
    stopLive();
    page.dataset.ready = "1";
    input.focus();
  }

  function afterLogin() {
    document.querySelector('[data-testid="role"]').textContent = state.role;
    document.getElementById("logout").hidden = !state.authRequired;
    startLive();
    render();
  }

  function stopLive() {
    if (state.source) state.source.close();
    state.source = null;
    setLive("offline", "off");
  }

  function startLive() {
    if (state.source) return;
    setLive("connecting", "");
    const source = new EventSource("/api/events");
    state.source = source;
    source.addEventListener("open", () => setLive("live", "on"));
    source.addEventListener("snapshot", (ev) => {
      try {
        state.snapshot = JSON.parse(ev.data);
      } catch (e) {
        return;
      }
      state.snapshots += 1;
      setLive("live", "on");
      onSnapshot();
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) {
        // Refused (logged out, session expired) or the controller went away: ask who we are now.
        state.source = null;
        setLive("offline", "off");
        checkSession(false);
      } else {
        setLive("connecting", "");
      }
    });
  }

  async function checkSession(first) {
    try {
      const s = await api("/api/session", { noAuthRedirect: true });
      state.authRequired = s.auth_required;
      if (s.role === "none") {
        state.role = null;
        return showLogin();
      }
      const changed = state.role !== s.role;
      state.role = s.role;
      if (first || changed) afterLogin();
      else startLive();
    } catch (e) {
      showError("The controller does not answer: " + e.message);
      setTimeout(() => checkSession(first), 5000);
    }
  }

  function route() {
    const parts = (location.hash.replace(/^#\/?/, "") || "fleet").split("/").filter(Boolean);
    return { name: parts[0], args: parts.slice(1) };
  }


  // Draws the page of the current route (data-ready set once its data is drawn).
  async function render() {
    if (!state.role) return;
    const r = route();
    const fn = pages[r.name] || pages.fleet;
    const id = ++state.renderId;
    for (const a of document.querySelectorAll("header nav a"))
      a.classList.toggle("active", a.getAttribute("href") === "#/" + r.name);
    page.removeAttribute("data-ready");
    page.dataset.page = pages[r.name] ? r.name : "fleet";
    showError(null);
    try {
      const content = await fn(r.args, false);
      if (id !== state.renderId) return;   // a newer render started meanwhile
      destroyCharts();
      page.replaceChildren(content.node);
      if (content.draw) content.draw();
      page.dataset.ready = "1";
    } catch (e) {
      if (e instanceof AuthError || id !== state.renderId) return;
      page.replaceChildren(el("p", { text: "Could not load this page." }));
      showError(String(e.message));
      page.dataset.ready = "1";
    }
  }

  // A live snapshot arrived: pages built from it are redrawn; others refresh when their subject changed.
  function onSnapshot() {
    const r = route();
    const name = pages[r.name] ? r.name : "fleet";
    if (name === "fleet" || name === "campaigns") return render();
    if (name === "campaign") {
      const c = (state.snapshot.campaigns || []).find((x) => String(x.campaign_id) === r.args[0]);
      const key = c ? JSON.stringify(c) : null;
      if (key !== state.campaignKey) {
        state.campaignKey = key;
        return render();
      }
    }
    if (name === "run") {
      // While its run executes the run page refreshes on snapshots, at most every 3 s.
      const status = page.querySelector('[data-testid="run-status"]');
      const executing = status && ["queued", "assigned", "running"].includes(status.textContent);
      if (executing && Date.now() >= state.runRefreshAt) {
        state.runRefreshAt = Date.now() + 3000;
        return render();
      }
    }
  }

  // ---- start ----

  document.getElementById("logout").addEventListener("click", async () => {
    // Nothing new starts (no live updates, no renders), what is under way finishes, then the session ends.
    state.role = null;
    state.renderId += 1;
    stopLive();
    await J.settle();
    try { await api("/api/logout", { method: "POST", body: "{}", noAuthRedirect: true }); } catch (e) { /* the login form follows anyway */ }
    showLogin();
  });
  window.addEventListener("hashchange", () => render());
  J.render = render;
  J.showLogin = showLogin;
  checkSession(true);
})();

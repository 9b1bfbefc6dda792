// The dashboard's shared helpers: DOM building, number formatting (data-testid / data-value: controller/web/README.md),
// API calls, run figures and charts. Loaded first; the page scripts and app.js read them from window.jetsweep.
"use strict";
(function () {
  const J = (window.jetsweep = window.jetsweep || {});
  const state = {
    role: null, authRequired: true, snapshot: null, snapshots: 0, source: null,
    charts: [], renderId: 0, runRefreshAt: 0, campaignKey: null,
  };
  const page = document.getElementById("page");

  const pages = {};

  // ---- small helpers ----

  // el("td", {testid, value, cls, text, href, title, attrs}, ...children)
  function el(tag, opts, ...children) {
    const e = document.createElement(tag);
    const o = opts || {};
    if (o.testid) e.dataset.testid = o.testid;
    if ("value" in o) e.dataset.value = raw(o.value);
    if (o.cls) e.className = o.cls;
    if (o.text !== undefined && o.text !== null) e.textContent = String(o.text);
    if (o.href) e.setAttribute("href", o.href);
    if (o.title) e.title = o.title;
    if (o.attrs) for (const [k, v] of Object.entries(o.attrs)) e.setAttribute(k, v);
    for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  function raw(v) { return v === null || v === undefined ? "" : String(v); }
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function fmt(v, digits) {
    if (!isNum(v)) return "—";
    if (digits === undefined) digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
    return v.toFixed(digits);
  }
  // A number cell: data-value is the raw API number, the text a rounded one with its unit.
  function num(testid, v, digits, unit) {
    return el("span", { testid, value: v, text: fmt(v, digits) + (isNum(v) && unit ? " " + unit : "") });
  }
  function td(child, cls) { return el("td", { cls }, child); }
  function duration(s) {
    if (!isNum(s)) return "—";
    if (s < 90) return Math.round(s) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    if (s < 172800) return (s / 3600).toFixed(1) + " h";
    return (s / 86400).toFixed(1) + " d";
  }
  // An ETA in seconds as wall-clock time of day plus the time left: "14:05 (in 12 min)"; "—" when unknown.
  function eta(s) {
    if (!isNum(s)) return "—";
    const at = new Date(Date.now() + s * 1000);
    const hh = String(at.getHours()).padStart(2, "0"), mm = String(at.getMinutes()).padStart(2, "0");
    const day = s >= 86400 ? at.toISOString().slice(0, 10) + " " : "";
    return day + hh + ":" + mm + " (in " + duration(s) + ")";
  }
  function mean(xs) { return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null; }
  function median(xs) {
    if (!xs.length) return null;
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  }
  function showError(message) {
    const box = document.getElementById("error");
    if (!message) {
      box.hidden = true;
      box.removeAttribute("data-testid");
      return;
    }
    box.hidden = false;
    box.dataset.testid = "error";
    box.textContent = message;
  }

  class AuthError extends Error {}

  // Requests under way, so that logging out can let them finish first (a request that reached the controller
  // after the logout would be answered 401, which the browser logs as a failed load).
  const inflight = new Set();
  function settle() { return Promise.allSettled([...inflight]); }

  function api(path, opts) {
    const p = request(path, opts);
    inflight.add(p);
    const done = () => inflight.delete(p);
    p.then(done, done);
    return p;
  }

  async function request(path, opts) {
    const o = opts || {};
    const headers = { Accept: "application/json" };
    if (o.method && o.method !== "GET") {
      headers["X-Jetsweep-CSRF"] = "1";
      headers["Content-Type"] = "application/json";
    }
    const res = await fetch(path, { method: o.method || "GET", headers, body: o.body, credentials: "same-origin" });
    let body = null;
    try { body = await res.json(); } catch (e) { body = null; }
    if (res.status === 401 && !o.noAuthRedirect) {
      state.role = null;
      J.showLogin();
      throw new AuthError("not logged in");
    }
    if (!res.ok) {
      const err = new Error((body && body.error) || res.status + " " + res.statusText);
      err.status = res.status;
      throw err;
    }
    return body;
  }

  // ---- run figures (epoch 0 is the warm-up: excluded from every mean, as in jetsweep compare) ----

  function laterEpochs(run) { return (run.epochs || []).filter((e) => e.epoch >= 1); }
  function meanOf(epochs, key) {
    if (!epochs.length || !epochs.every((e) => isNum(e[key]))) return null;
    return mean(epochs.map((e) => e[key]));
  }
  function runFigures(run) {
    const later = laterEpochs(run);
    return {
      meanEpochS: later.length ? mean(later.map((e) => e.e2e_s)) : null,
      meanPowerW: meanOf(later, "mean_power_w"),
      energyPerEpochJ: meanOf(later, "energy_j"),
    };
  }
  function modeOf(run) {
    const pm = run.config && run.config.power_mode;
    if (pm && typeof pm === "object" && pm.name) return pm.name;
    if (run.applied && run.applied.mode_name) return run.applied.mode_name;
    if (pm && typeof pm === "object") {
      const parts = [];
      if (pm.cores) parts.push(pm.cores + "c");
      if (pm.cpu_khz) parts.push(Math.round(pm.cpu_khz / 1000) + "MHz");
      if (pm.gpu_hz) parts.push("gpu" + Math.round(pm.gpu_hz / 1e6));
      if (pm.emc_hz) parts.push("emc" + Math.round(pm.emc_hz / 1e6));
      return parts.join("/") || "custom";
    }
    return run.reference_state ? "reference" : null;
  }
  function classOf(run) {
    return (run.facts && run.facts.device_class) || (run.config && run.config.device) || "?";
  }

  // ---- charts ----

  function destroyCharts() {
    for (const c of state.charts) c.destroy();
    state.charts = [];
  }
  function chartBox(testid, label) {
    const canvas = el("canvas", { testid, attrs: { "aria-label": label, role: "img" } });
    return { box: el("div", { cls: "chart" }, canvas), canvas };
  }
  function chart(canvas, config) {
    if (typeof Chart === "undefined") return null;
    config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options);
    const c = new Chart(canvas, config);
    state.charts.push(c);
    return c;
  }
  const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

  // A sparkline drawn by hand (cheap enough to redraw on every snapshot).
  function sparkline(testid, points, key) {
    const canvas = el("canvas", { testid, cls: "spark", value: points.length, attrs: { width: "120", height: "28" } });
    const ys = points.map((p) => p[key]).filter(isNum);
    const ctx = canvas.getContext && canvas.getContext("2d");
    if (ctx && ys.length > 1) {
      const lo = Math.min(...ys), hi = Math.max(...ys), span = hi - lo || 1;
      const t0 = points[0].t_unix_s, t1 = points[points.length - 1].t_unix_s, tspan = t1 - t0 || 1;
      ctx.strokeStyle = "#1f4e79";
      ctx.lineWidth = 1.2;
      ctx.beginPath();
      let first = true;
      for (const p of points) {
        if (!isNum(p[key])) continue;
        const x = ((p.t_unix_s - t0) / tspan) * 118 + 1, y = 26 - ((p[key] - lo) / span) * 24;
        if (first) ctx.moveTo(x, y); else ctx.lineTo(x, y);
        first = false;
      }
      ctx.stroke();
    }
    canvas.title = ys.length ? key + ": " + fmt(Math.min(...ys)) + " … " + fmt(Math.max(...ys)) : "no samples in the last 5 minutes";
    return canvas;
  }

  async function snapshotPart(key, path) {
    if (state.snapshot && state.snapshot[key]) return state.snapshot[key];
    return api(path);   // before the first snapshot arrives
  }

  Object.assign(J, { state, page, el, raw, isNum, fmt, num, td, duration, eta, mean, median, showError, AuthError, api, laterEpochs, meanOf, runFigures, modeOf, classOf, destroyCharts, chartBox, chart, colors, sparkline, snapshotPart, pages, settle });
})();

// The dashboard's Fleet, Campaigns, Campaign and Run pages (ids: controller/web/README.md).
"use strict";
(function () {
  const J = window.jetsweep;
  const { state, page, el, raw, isNum, fmt, num, td, duration, eta, mean, median, showError, AuthError, api, laterEpochs, meanOf, runFigures, modeOf, classOf, destroyCharts, chartBox, chart, colors, sparkline, snapshotPart, pages } = J;

  // What the agent measured the run trained (runs.workload, proto::WorkloadFacts); "—" until it started.
  function workloadSize(w) {
    if (!w || w.parameters === null || w.parameters === undefined) return "—";
    const macs = isNum(w.forward_macs) ? ", " + w.forward_macs.toLocaleString("en") + " forward MACs per sample" : "";
    return w.parameters.toLocaleString("en") + " parameters" + macs +
      (w.model_sha256 ? " (TorchScript " + w.model_sha256.slice(0, 12) + ")" : "");
  }
  function dataFingerprint(w) {
    if (!w) return "—";
    if (!w.dataset_fingerprint) return "none (no data read: a simulated board)";
    return w.dataset_fingerprint.slice(0, 12) + " (" + w.dataset_files + " files, " + (w.dataset_bytes / 1e6).toFixed(1) + " MB)";
  }

  // ---- Fleet ----

  // The applied board state in short ("4c 1037MHz gpu 1300MHz") when it has no mode name.
  function appliedSummary(a) {
    if (!a) return null;
    const parts = [];
    if (a.cores_online) parts.push(a.cores_online + "c");
    if (a.cpu_khz) parts.push(Math.round(a.cpu_khz / 1000) + "MHz");
    if (a.gpu_hz) parts.push("gpu " + Math.round(a.gpu_hz / 1e6) + "MHz");
    if (a.clocks_pinned) parts.push("pinned");
    return parts.join(" ") || null;
  }

  pages.fleet = async function () {
    const fleet = await snapshotPart("fleet", "/api/fleet");
    const now = Date.now() / 1000;
    const rows = fleet.map((b) => {
      const id = b.agent_id;
      const latest = b.latest || {};
      const name = el("td", null, el("span", { testid: "fleet-name-" + id, text: b.name }));
      if (b.simulated) name.append(el("span", { testid: "fleet-simulated-" + id, cls: "badge sim", text: "simulated" }));
      const run = b.current_run === null || b.current_run === undefined
        ? el("span", { testid: "fleet-run-" + id, value: null, text: "—" })
        : el("a", { testid: "fleet-run-" + id, value: b.current_run, href: "#/run/" + b.current_run, text: "run " + b.current_run });
      const ready = el("span", {
        testid: "fleet-ready-" + id, value: b.ready, cls: b.ready ? "" : "notready",
        text: b.ready ? "ready" : "not ready: " + (b.not_ready || []).join("; "),
      });
      const hb = b.last_heartbeat_unix_s;
      const heartbeat = el("span", {
        testid: "fleet-heartbeat-" + id, value: hb,
        text: isNum(hb) ? Math.max(0, Math.round(now - hb)) + " s ago" : "— (last seen " + b.last_seen + ")",
      });
      const backlog = el("span", {
        testid: "fleet-backlog-" + id, value: b.backlog_messages,
        title: "results the agent holds that the controller has not acknowledged yet (its last heartbeat)",
        text: !isNum(b.backlog_messages) ? "—"
          : b.backlog_messages + (isNum(b.backlog_bytes) ? " (" + (b.backlog_bytes / 1e6).toFixed(1) + " MB)" : ""),
      });
      const series = b.series || [];
      return el("tr", { testid: "fleet-row-" + id },
        name,
        td(el("span", { testid: "fleet-class-" + id, text: b.device_class })),
        td(el("span", { testid: "fleet-state-" + id, cls: "state-" + b.state, text: b.state })),
        td(run),
        td(el("span", { testid: "fleet-mode-" + id, value: b.power_mode, text: b.power_mode || appliedSummary(b.applied) || "—",
          title: b.applied ? "applied and read back: " + JSON.stringify(b.applied) : "no run has applied a state yet" })),
        td(num("fleet-power-" + id, latest.power_w === undefined ? null : latest.power_w, 2, "W"), "num"),
        td(num("fleet-cpu-util-" + id, latest.cpu_util_pct === undefined ? null : latest.cpu_util_pct, 0, "%"), "num"),
        td(num("fleet-cpu-freq-" + id, latest.cpu_freq_mhz === undefined ? null : latest.cpu_freq_mhz, 0, "MHz"), "num"),
        td(num("fleet-temp-" + id, latest.temp_max_c === undefined ? null : latest.temp_max_c, 1, "°C"), "num"),
        td(sparkline("fleet-spark-power-" + id, series, "power_w")),
        td(sparkline("fleet-spark-cpu-" + id, series, "cpu_util_pct")),
        td(ready),
        td(heartbeat),
        td(backlog, "num"));
    });
    const head = el("tr", null, ...["Board", "Class", "State", "Run", "Power mode", "Power", "CPU", "CPU freq", "Hottest zone",
      "Power (5 min)", "CPU % (5 min)", "Readiness", "Last heartbeat", "Unacked results"].map((h) => el("th", { text: h })));
    const node = el("div", null,
      el("h1", null, "Fleet: ", el("span", { testid: "fleet-count", value: fleet.length, text: fleet.length }), " boards"),
      el("p", { testid: "fleet-temp-note", cls: "note",
        text: "Hottest zone: the highest of the board's thermal zones (CPU, GPU, SOC, ...) at its newest sample; " +
              "simulated boards have no thermal model and show none. Power, CPU, temperature and the sparklines come " +
              "from the samples of runs: an idle board has none." }),
      fleet.length ? el("table", null, el("thead", null, head), el("tbody", null, ...rows))
        : el("p", { text: "No boards have registered yet: start jetsweep-agent on a board (docs/OPERATIONS.md)." }));
    return { node };
  };

  // ---- Campaigns ----

  const countFields = ["runs", "queued", "assigned", "running", "done", "failed", "lost", "cancelled"];

  function campaignActions(c) {
    const box = el("span");
    if (state.role !== "admin") return box;
    const act = async (action) => {
      if (action === "cancel" && !window.confirm("Cancel campaign " + c.name + "? Its queued runs are dropped and running ones stopped.")) return;
      try {
        await api("/api/campaigns/" + c.campaign_id + "/" + action, { method: "POST", body: "{}" });
        J.render();
      } catch (e) {
        if (!(e instanceof AuthError)) showError(action + " failed: " + e.message);
      }
    };
    const button = (action, label) => {
      const b = el("button", { testid: "campaign-" + action + "-" + c.campaign_id, text: label, attrs: { type: "button" } });
      b.addEventListener("click", () => act(action));
      box.append(b, " ");
    };
    if (c.state === "active" && !c.finished) button("pause", "Pause");
    if (c.state === "paused") button("resume", "Resume");
    if (c.state !== "cancelled" && !c.finished) button("cancel", "Cancel");
    return box;
  }

  function progressOf(c) { return c.epochs_total > 0 ? c.epochs_done / c.epochs_total : 0; }

  function campaignCells(c) {
    const id = c.campaign_id;
    const progress = el("progress", { testid: "campaign-progress-" + id, value: progressOf(c), attrs: { max: "1", value: String(progressOf(c)) } });
    const unrunnable = el("div", { cls: "unrunnable" });
    (c.unrunnable || []).forEach((u, i) => unrunnable.append(el("div", { testid: "campaign-unrunnable-" + id + "-" + i, text: u.reason })));
    return [
      td(el("span", { testid: "campaign-state-" + id, text: c.state + (c.finished ? " (finished)" : "") })),
      td(el("span", null, progress, " ", num("campaign-epochs_done-" + id, c.epochs_done, 0), " / ",
        num("campaign-epochs_total-" + id, c.epochs_total, 0), " epochs")),
      ...countFields.map((f) => td(num("campaign-" + f + "-" + id, c[f], 0), "num")),
      td(el("span", null, el("span", { testid: "campaign-eta-text-" + id, text: c.finished ? "done" : c.paused ? "paused" : eta(c.eta_s) }),
        el("span", { testid: "campaign-eta_s-" + id, value: c.eta_s, attrs: { hidden: "" } }))),
      td(el("span", null, num("campaign-unrunnable_runs-" + id, c.unrunnable_runs, 0), unrunnable)),
      td(campaignActions(c)),
    ];
  }
  const campaignHead = () => el("tr", null, ...["Campaign", "State", "Progress", "Runs", "Queued", "Assigned", "Running", "Done",
    "Failed", "Lost", "Cancelled", "ETA (wall)", "Unrunnable", ""].map((h) => el("th", { text: h })));

  pages.campaigns = async function () {
    const campaigns = await snapshotPart("campaigns", "/api/campaigns");
    const rows = [...campaigns].reverse().map((c) => el("tr", { testid: "campaign-row-" + c.campaign_id },
      td(el("a", { testid: "campaign-name-" + c.campaign_id, href: "#/campaign/" + c.campaign_id, text: c.name })),
      ...campaignCells(c)));
    const node = el("div", null,
      el("h1", null, "Campaigns: ", el("span", { testid: "campaign-count", value: campaigns.length, text: campaigns.length })),
      campaigns.length ? el("table", null, el("thead", null, campaignHead()), el("tbody", null, ...rows))
        : el("p", { text: "No campaigns yet: jetsweep submit experiments/FILE.yaml" }));
    return { node };
  };

  // ---- Campaign ----

  pages.campaign = async function (args) {
    const ref = encodeURIComponent(args[0] || "");
    const [c, report] = await Promise.all([api("/api/campaigns/" + ref), api("/api/campaigns/" + ref + "/report")]);
    state.campaignKey = JSON.stringify(c);
    const byDevice = new Map();
    for (const run of report.runs) {
      const d = (run.config && run.config.device) || "?";
      const g = byDevice.get(d) || { runs: 0, done: 0, executing: 0, queued: 0, failed: 0 };
      g.runs += 1;
      if (run.status === "done") g.done += 1;
      else if (run.status === "running" || run.status === "assigned") g.executing += 1;
      else if (run.status === "queued") g.queued += 1;
      else g.failed += 1;
      byDevice.set(d, g);
    }
    const deviceRows = [...byDevice.entries()].map(([d, g]) => el("tr", null,
      td(el("span", { text: d })), td(num("class-done-" + d, g.done, 0), "num"), td(num("class-runs-" + d, g.runs, 0), "num"),
      td(el("progress", { attrs: { max: String(g.runs), value: String(g.done) } })),
      td(el("span", { text: g.executing + " running, " + g.queued + " queued, " + g.failed + " failed/lost/cancelled" }))));
    const runRows = report.runs.map((run) => {
      const id = run.run_id, f = runFigures(run);
      return el("tr", { testid: "run-row-" + id },
        td(el("a", { testid: "run-link-" + id, href: "#/run/" + id, text: "run " + id })),
        td(el("span", { testid: "run-status-" + id, text: run.status })),
        td(el("span", { testid: "run-agent-" + id, text: run.agent || "—" })),
        td(el("span", { testid: "run-mode-" + id, text: modeOf(run) || "—" })),
        td(el("span", { text: [run.config.model, run.config.dataset, "bs " + run.config.batch_size].join(" ") })),
        td(num("run-epochs-" + id, run.epochs.length, 0), "num"),
        td(num("run-mean-epoch-s-" + id, f.meanEpochS, 3, "s"), "num"),
        td(num("run-mean-power-w-" + id, f.meanPowerW, 2, "W"), "num"),
        td(num("run-energy-per-epoch-j-" + id, f.energyPerEpochJ, 1, "J"), "num"));
    });
    const title = el("h1", null, "Campaign " + c.campaign_id + ": " + c.name);
    if (report.simulated_runs > 0)
      title.append(el("span", { testid: "campaign-simulated", value: report.simulated_runs, cls: "badge sim", text: "simulated" }));
    const node = el("div", null, title,
      c.description ? el("p", { cls: "note", text: c.description }) : null,
      el("table", null, el("thead", null, campaignHead()),
        el("tbody", null, el("tr", { testid: "campaign-row-" + c.campaign_id }, td(el("span", { text: c.name })), ...campaignCells(c)))),
      el("p", null, el("a", { testid: "link-analysis", href: "#/analysis/" + c.campaign_id, text: "Analysis of this campaign →" })),
      el("h2", { text: "Progress per device" }),
      el("table", null, el("thead", null, el("tr", null, ...["Device", "Done", "Runs", "", ""].map((h) => el("th", { text: h })))),
        el("tbody", null, ...deviceRows)),
      el("h2", { text: "Runs (means over epochs 1+; epoch 0 is the warm-up)" }),
      el("table", null, el("thead", null, el("tr", null, ...["Run", "Status", "Agent", "Power mode", "Workload", "Epochs",
        "Mean epoch", "Mean power", "Energy / epoch"].map((h) => el("th", { text: h })))), el("tbody", null, ...runRows)));
    return { node };
  };

  // ---- Run ----

  function facts(pairs) {
    const dl = el("dl", { cls: "facts" });
    for (const [k, v] of pairs) dl.append(el("dt", { text: k }), el("dd", null, v));
    return dl;
  }

  pages.run = async function (args) {
    const id = encodeURIComponent(args[0] || "");
    const [run, samples] = await Promise.all([api("/api/runs/" + id), api("/api/runs/" + id + "/samples")]);
    const rid = run.run_id;
    const title = el("h1", null, "Run ", el("span", { testid: "run-id", value: rid, text: rid }));
    if (run.simulated) title.append(el("span", { testid: "run-simulated", cls: "badge sim", text: "simulated" }));
    const epochRows = run.epochs.map((e) => {
      const n = e.epoch;
      const row = el("tr", { testid: "epoch-row-" + n, cls: n === 0 ? "warmup" : "" },
        td(el("span", null, String(n), n === 0 ? el("span", { testid: "warmup-0", cls: "badge warmup", text: "warm-up" }) : null)),
        td(num("epoch-e2e-" + n, e.e2e_s, 3, "s"), "num"),
        td(num("epoch-stall-" + n, e.stall_s, 3, "s"), "num"),
        td(num("epoch-compute-" + n, e.compute_s, 3, "s"), "num"),
        td(num("epoch-other-" + n, e.e2e_s - e.stall_s - e.compute_s, 3, "s"), "num"),
        td(num("epoch-energy-" + n, e.energy_j, 1, "J"), "num"),
        td(num("epoch-power-" + n, e.mean_power_w, 2, "W"), "num"),
        td(el("span", { text: e.throttled ? "throttled" + (e.throttle_reason ? ": " + e.throttle_reason : "") : "" })));
      return row;
    });
    const epochsChart = chartBox("chart-epochs", "time per epoch: stall, compute, other");
    const energyChart = chartBox("chart-energy", "energy per epoch");
    const powerChart = chartBox("chart-power", "power over time");
    const freqChart = chartBox("chart-freq", "CPU frequency over time");
    const admin = state.role === "admin" && ["queued", "assigned", "running"].includes(run.status);
    const cancel = admin ? el("button", { testid: "run-cancel", text: "Cancel run", attrs: { type: "button" } }) : null;
    if (cancel) cancel.addEventListener("click", async () => {
      if (!window.confirm("Cancel run " + rid + "?")) return;
      try { await api("/api/runs/" + rid + "/cancel", { method: "POST", body: "{}" }); J.render(); }
      catch (e) { if (!(e instanceof AuthError)) showError("cancel failed: " + e.message); }
    });
    const node = el("div", null, title,
      facts([
        ["Campaign", el("a", { testid: "run-campaign", value: run.campaign_id, href: "#/campaign/" + run.campaign_id, text: run.campaign_id + " (" + run.campaign_name + ")" })],
        ["Status", el("span", { testid: "run-status", text: run.status })],
        ["Agent", el("span", { testid: "run-agent", text: run.agent || "—" })],
        ["Power mode", el("span", { text: modeOf(run) || "—" })],
        ["Compute device", el("span", { testid: "run-compute-device", text: run.compute_device || "—" })],
        ["Model size", el("span", { testid: "run-model-size", text: workloadSize(run.workload) })],
        ["Data fingerprint", el("span", { testid: "run-data-fingerprint", text: dataFingerprint(run.workload) })],
        ["Wall time", num("run-wall-s", run.wall_s, 1, "s")],
        ["Attempts", num("run-attempts", run.attempts, 0)],
        ["Storage", el("span", { text: (run.storage_medium || "—") + (run.storage_device ? " (" + run.storage_device + ")" : "") +
          (run.page_cache_dropped ? ", page cache dropped" : "") })],
        ["Reference state", el("span", { text: run.reference_state === null ? "—" : String(run.reference_state) })],
      ]),
      run.error ? el("p", { testid: "run-error", cls: "notready", text: run.error }) : null,
      cancel,
      el("h2", null, "Epochs: ", num("epoch-count", run.epochs.length, 0), " (epoch 0 is the warm-up: start-up costs; left out of every mean)"),
      el("div", { cls: "grid" }, el("div", { cls: "card" }, epochsChart.box), el("div", { cls: "card" }, energyChart.box)),
      el("table", null, el("thead", null, el("tr", null, ...["Epoch", "End to end", "Stall", "Compute", "Other", "Energy",
        "Mean power", ""].map((h) => el("th", { text: h })))), el("tbody", null, ...epochRows)),
      el("h2", null, "Telemetry: ", num("samples-count", samples.length, 0), " samples"),
      el("div", { cls: "grid" }, el("div", { cls: "card" }, powerChart.box), el("div", { cls: "card" }, freqChart.box)),
      el("h2", { text: "Configuration and provenance" }),
      el("div", { cls: "grid" },
        el("div", null, el("h2", { text: "Configuration" }), el("pre", { testid: "run-config", text: JSON.stringify(run.config, null, 2) })),
        el("div", null, el("h2", { text: "Applied board state" }), el("pre", { testid: "run-applied", text: JSON.stringify(run.applied, null, 2) })),
        el("div", null, el("h2", { text: "Agent facts" }), el("pre", { testid: "run-facts", text: JSON.stringify(run.facts, null, 2) }))));
    const draw = () => {
      const labels = run.epochs.map((e) => (e.epoch === 0 ? "0 (warm-up)" : String(e.epoch)));
      const dim = (c) => run.epochs.map((e) => (e.epoch === 0 ? c + "66" : c));
      chart(epochsChart.canvas, {
        type: "bar",
        data: { labels, datasets: [
          { label: "stall (data wait)", data: run.epochs.map((e) => e.stall_s), backgroundColor: dim("#d62728") },
          { label: "compute", data: run.epochs.map((e) => e.compute_s), backgroundColor: dim("#1f77b4") },
          { label: "other", data: run.epochs.map((e) => Math.max(0, e.e2e_s - e.stall_s - e.compute_s)), backgroundColor: dim("#7f7f7f") },
        ] },
        options: { scales: { x: { stacked: true, title: { display: true, text: "epoch" } }, y: { stacked: true, title: { display: true, text: "seconds" } } },
          plugins: { title: { display: true, text: "Time per epoch (epoch 0: warm-up, drawn lighter)" + (run.simulated ? " — simulated" : "") } } },
      });
      chart(energyChart.canvas, {
        type: "bar",
        data: { labels, datasets: [{ label: "energy (J)", data: run.epochs.map((e) => e.energy_j), backgroundColor: dim("#2ca02c") }] },
        options: { plugins: { title: { display: true, text: run.epochs.some((e) => isNum(e.energy_j)) ? "Energy per epoch" : "Energy per epoch: no power sensor" } } },
      });
      const line = (canvas, key, label, color) => chart(canvas, {
        type: "line",
        data: { datasets: [{ label, data: samples.filter((s) => isNum(s[key])).map((s) => ({ x: s.t_s, y: s[key] })),
          borderColor: color, pointRadius: 0, borderWidth: 1.5 }] },
        options: { parsing: false, scales: { x: { type: "linear", title: { display: true, text: "seconds since the run started" } } },
          plugins: { title: { display: true, text: samples.some((s) => isNum(s[key])) ? label : label + ": not measured" } } },
      });
      line(powerChart.canvas, "power_w", "Power (W)", "#ff7f0e");
      line(freqChart.canvas, "cpu_freq_mhz", "CPU frequency (MHz)", "#9467bd");
    };
    return { node, draw };
  };

})();

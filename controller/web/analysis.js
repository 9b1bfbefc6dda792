// The dashboard's Analysis and Compare pages (ids: controller/web/README.md).
"use strict";
(function () {
  const J = window.jetsweep;
  const { state, page, el, raw, isNum, fmt, num, td, duration, mean, median, showError, AuthError, api, laterEpochs, meanOf, runFigures, modeOf, classOf, destroyCharts, chartBox, chart, colors, sparkline, snapshotPart, pages } = J;

  // ---- Analysis ----

  // An adaptive plan's budget row: the unprofiled mode that may also fit and is predicted faster than the choice
  // (the choice is uncertain there: docs/ANALYSIS.md), or "—".
  function contenderText(f, b) {
    const k = b.contender;
    if (k === null || k === undefined || !f.candidates[k]) return "—";
    const mode = f.candidates[k].join(" / ");
    if (!isNum(b.time_ms) || !isNum(b.contender_time_ms) || b.contender_time_ms <= 0) return mode;
    return mode + " (" + (100 * (b.time_ms / b.contender_time_ms - 1)).toFixed(1) + " % faster)";
  }

  async function campaignPicker(what, target) {
    const campaigns = await snapshotPart("campaigns", "/api/campaigns");
    return { node: el("div", null, el("h1", { text: what }), el("p", { text: "Pick a campaign:" }),
      el("ul", null, ...[...campaigns].reverse().map((c) => el("li", null,
        el("a", { href: target(c), text: c.campaign_id + ": " + c.name })))) ) };
  }

  pages.analysis = async function (args) {
    if (!args[0]) return campaignPicker("Analysis", (c) => "#/analysis/" + c.campaign_id);
    const report = await api("/api/campaigns/" + encodeURIComponent(args[0]) + "/report");
    const points = [];
    for (const run of report.runs) {
      const f = runFigures(run);
      if (!isNum(f.meanEpochS)) continue;
      const cfg = Object.assign({}, run.config);
      delete cfg.repetition;
      delete cfg.seed;
      const cls = classOf(run);
      cfg.device = cls;
      points.push({ run, f, cls, group: JSON.stringify(cfg),
        label: cls + " " + (modeOf(run) || "default") + " bs=" + run.config.batch_size });
    }
    const pointRows = points.map((p) => el("tr", { testid: "point-row-" + p.run.run_id },
      td(el("a", { href: "#/run/" + p.run.run_id, text: "run " + p.run.run_id })),
      td(el("span", { testid: "point-label-" + p.run.run_id, text: p.label })),
      td(num("point-time-" + p.run.run_id, p.f.meanEpochS, 3, "s"), "num"),
      td(num("point-power-" + p.run.run_id, p.f.meanPowerW, 2, "W"), "num"),
      td(num("point-energy-" + p.run.run_id, p.f.energyPerEpochJ, 1, "J"), "num")));
    const classes = [...new Set(points.map((p) => p.cls))];
    const varPanels = classes.map((cls) => {
      const mine = points.filter((p) => p.cls === cls);
      const groups = new Map();
      for (const p of mine) groups.set(p.group, (groups.get(p.group) || []).concat([p.f.meanEpochS]));
      const rows = mine.map((p) => {
        const m = median(groups.get(p.group));
        const dev = m ? (100 * (p.f.meanEpochS - m)) / m : null;
        return el("tr", null, td(el("a", { href: "#/run/" + p.run.run_id, text: "run " + p.run.run_id })),
          td(el("span", { text: p.label })), td(num(null, p.f.meanEpochS, 3, "s"), "num"),
          td(el("span", { testid: "var-dev-" + p.run.run_id, value: dev, cls: dev > 0 ? "pos" : "neg", text: isNum(dev) ? (dev >= 0 ? "+" : "") + dev.toFixed(1) + " %" : "—" }), "num"),
          td(el("span", { text: groups.get(p.group).length + " runs" })));
      });
      return el("div", { testid: "variability-" + cls, cls: "card" }, el("h2", { text: cls }),
        el("table", null, el("thead", null, el("tr", null, ...["Run", "Configuration", "Mean epoch", "vs median", "Group"].map((h) => el("th", { text: h })))),
          el("tbody", null, ...rows)));
    });
    // Adaptive-profiling plans (issue 33): the fitted predictor over every candidate mode, measured points apart,
    // and the mode chosen per power budget (the fit's format: controller/adaptive_planner.hpp).
    const plans = (report.adaptive || []).filter((p) => p.fit && Array.isArray(p.fit.candidates));
    const planViews = plans.map((p) => {
      const f = p.fit, id = p.plan_id;
      const measuredCount = f.measured.filter((m) => m).length;
      const rows = (f.budgets || []).map((b, i) => {
        const c = b.candidate;
        const has = c !== null && c !== undefined;
        return el("tr", { testid: "adaptive-budget-" + id + "-" + i },
          td(num("adaptive-budget-w-" + id + "-" + i, b.budget_w, 1, "W"), "num"),
          td(el("span", { testid: "adaptive-mode-" + id + "-" + i, text: has ? f.candidates[c].join(" / ") : "nothing expected to fit" })),
          td(num("adaptive-time-" + id + "-" + i, has ? b.time_ms : null, 2, "ms"), "num"),
          td(num("adaptive-power-" + id + "-" + i, has ? b.power_w : null, 2, "W"), "num"),
          td(el("span", { testid: "adaptive-from-" + id + "-" + i, text: has ? (b.measured ? "measured" : "predicted") : "—" })),
          td(el("span", { testid: "adaptive-contender-" + id + "-" + i, text: contenderText(f, b) })));
      });
      // How the predictor and its front moved, round by round (leave-one-out errors absent before two modes).
      const historyRows = (p.history || []).map((h, i) => {
        const row = id + "-" + i;
        return el("tr", { testid: "adaptive-round-" + row },
          td(num("adaptive-round-n-" + row, h.round, 0), "num"),
          td(num("adaptive-round-modes-" + row, h.modes, 0), "num"),
          td(num("adaptive-round-obs-" + row, h.observations, 0), "num"),
          td(num("adaptive-round-time-loo-" + row, h.time_loo_pct, 1, "%"), "num"),
          td(num("adaptive-round-power-loo-" + row, h.power_loo_pct, 1, "%"), "num"),
          td(num("adaptive-round-front-" + row, h.front_size, 0), "num"),
          td(num("adaptive-round-changed-" + row, h.front_changed, 0), "num"));
      });
      const box = chartBox("chart-adaptive-" + id, "predicted and measured time vs power");
      const node = el("div", { testid: "adaptive-plan-" + id, cls: "card" },
        el("h2", { text: "Adaptive plan " + id + ": " + p.device + ", " + p.workload + " (" + p.state + ")" }),
        el("p", null, num("adaptive-measured-" + id, measuredCount, 0), " measured of ",
          num("adaptive-candidates-" + id, f.candidates.length, 0), " candidate modes, the others predicted; front of ",
          num("adaptive-front-" + id, (f.front || []).length, 0), " modes"),
        box.box,
        el("table", null, el("thead", null, el("tr", null, ...["Budget", "Mode (cores / CPU kHz / GPU Hz / EMC Hz)", "ms / minibatch", "Power", "From", "May also fit, predicted faster"].map((h) => el("th", { text: h })))),
          el("tbody", null, ...rows)),
        historyRows.length ? el("h3", { text: "Rounds" }) : null,
        historyRows.length ? el("table", { testid: "adaptive-history-" + id },
          el("thead", null, el("tr", null, ...["Round", "Modes queued", "Modes profiled before", "Time LOO error", "Power LOO error", "Front", "Front changes"].map((h) => el("th", { text: h })))),
          el("tbody", null, ...historyRows)) : null);
      // Sorted by x: with parsing off, Chart.js takes the x axis's range from the first and last points.
      const points = (keep) => f.candidates.map((c, i) => ({ x: f.time_ms[i], y: f.power_w[i], label: c.join("/"), i }))
        .filter((pt) => isNum(pt.x) && isNum(pt.y) && keep(pt.i)).sort((a, b) => a.x - b.x);
      const draw = () => chart(box.canvas, {
        type: "scatter",
        data: { datasets: [
          { label: "predicted", backgroundColor: "rgba(140,140,140,0.35)", pointRadius: 2, data: points((i) => !f.measured[i]) },
          { label: "measured", backgroundColor: colors[0], pointRadius: 5, data: points((i) => f.measured[i]) },
          { label: "predicted front", backgroundColor: colors[1], pointRadius: 3, data: points((i) => (f.front || []).includes(i)) }] },
        options: { parsing: false,
          scales: { x: { title: { display: true, text: "time per minibatch (ms)" } }, y: { title: { display: true, text: "power (W)" } } },
          plugins: { tooltip: { callbacks: { label: (ctx) => ctx.dataset.label + " " + ctx.raw.label + ": " + fmt(ctx.raw.x, 2) + " ms, " + fmt(ctx.raw.y, 2) + " W" } } } },
      });
      return { node, draw };
    });
    const powerChart = chartBox("chart-pareto-power", "mean epoch time vs mean power");
    const energyChart = chartBox("chart-pareto-energy", "mean epoch time vs energy per epoch");
    const sim = report.simulated_runs > 0 ? " (simulated)" : "";
    const node = el("div", null,
      el("h1", null, "Analysis of campaign " + report.campaign.id + ": " + report.campaign.name + sim),
      el("p", { cls: "note", text: "One point per run with epochs after the warm-up (epoch 0 left out). Hover a point for its mode." }),
      el("p", null, num("analysis-points", points.length, 0), " points"),
      el("div", { cls: "grid" }, el("div", { cls: "card" }, powerChart.box), el("div", { cls: "card" }, energyChart.box)),
      el("h2", { text: "Variability per board class (mean epoch time vs the median of runs of the same configuration)" }),
      el("div", { cls: "grid" }, ...varPanels),
      plans.length ? el("h2", { text: "Adaptive profiling" }) : null,
      ...planViews.map((v) => v.node),
      el("h2", { text: "Points" }),
      el("table", null, el("thead", null, el("tr", null, ...["Run", "Label", "Mean epoch", "Mean power", "Energy / epoch"].map((h) => el("th", { text: h })))),
        el("tbody", null, ...pointRows)));
    const scatter = (canvas, key, yTitle) => chart(canvas, {
      type: "scatter",
      data: { datasets: classes.map((cls, i) => ({ label: cls, backgroundColor: colors[i % colors.length],
        // Sorted by x: with parsing off, Chart.js takes the x axis's range from the first and last points.
        data: points.filter((p) => p.cls === cls && isNum(p.f[key])).map((p) => ({ x: p.f.meanEpochS, y: p.f[key], label: p.label, run: p.run.run_id }))
          .sort((a, b) => a.x - b.x) })) },
      options: { parsing: false,
        scales: { x: { title: { display: true, text: "mean epoch time (s)" } }, y: { title: { display: true, text: yTitle } } },
        plugins: { title: { display: true, text: yTitle + " vs time" + sim },
          tooltip: { callbacks: { label: (ctx) => ctx.raw.label + " (run " + ctx.raw.run + "): " + fmt(ctx.raw.x, 3) + " s, " + fmt(ctx.raw.y) } } } },
    });
    const draw = () => {
      scatter(powerChart.canvas, "meanPowerW", "mean power (W)");
      scatter(energyChart.canvas, "energyPerEpochJ", "energy per epoch (J)");
      planViews.forEach((v) => v.draw());
    };
    return { node, draw };
  };

  // ---- Compare ----

  pages.compare = async function (args) {
    if (!args[0] || !args[1]) {
      const campaigns = await snapshotPart("campaigns", "/api/campaigns");
      const pick = (id) => el("select", { testid: id }, ...[...campaigns].reverse().map((c) => el("option", { text: c.campaign_id + ": " + c.name, attrs: { value: String(c.campaign_id) } })));
      const a = pick("compare-pick-a"), b = pick("compare-pick-b");
      if (b.options.length > 1) b.selectedIndex = 1;
      const go = el("button", { testid: "compare-go", text: "Compare", attrs: { type: "button" } });
      go.addEventListener("click", () => { location.hash = "#/compare/" + a.value + "/" + b.value; });
      return { node: el("div", null, el("h1", { text: "Compare two campaigns" }), el("p", null, "A ", a, " B ", b, " ", go)) };
    }
    const cmp = await api("/api/campaigns/" + encodeURIComponent(args[0]) + "/compare/" + encodeURIComponent(args[1]));
    const side = (s, which) => el("div", { cls: "card" }, el("h2", { text: which + ": campaign " + s.campaign.id + " " + s.campaign.name }),
      el("p", null, num("compare-runs-" + which.toLowerCase(), s.runs, 0), " runs",
        s.simulated_runs > 0 ? el("span", { cls: "badge sim", text: "simulated" }) : null,
        s.power_sensor ? "" : " (no power sensor)"));
    const figure = (prefix, i, f) => [
      td(num(prefix + "-epoch-s-" + i, f.mean_epoch_s, 3, "s"), "num"),
      td(num(prefix + "-power-w-" + i, f.mean_power_w, 2, "W"), "num"),
      td(num(prefix + "-energy-j-" + i, f.energy_per_epoch_j, 1, "J"), "num")];
    const delta = (name, i, d) => td(el("span", { testid: "compare-delta-" + name + "-pct-" + i, value: d.pct,
      cls: d.pct > 0 ? "pos" : "neg", text: isNum(d.pct) ? (d.pct >= 0 ? "+" : "") + d.pct.toFixed(1) + " %" : "—" }), "num");
    const rows = cmp.configurations.map((c, i) => el("tr", { testid: "compare-row-" + i },
      td(el("span", { testid: "compare-label-" + i, text: c.label })),
      ...figure("compare-a", i, c.a), ...figure("compare-b", i, c.b),
      delta("epoch-s", i, c.delta.mean_epoch_s), delta("power-w", i, c.delta.mean_power_w), delta("energy-j", i, c.delta.energy_per_epoch_j)));
    const only = (list, which) => list.length ? el("div", null, el("h2", { text: "Only in " + which + " (" + list.length + ")" }),
      el("ul", null, ...list.map((o, i) => el("li", { testid: "compare-only-" + which.toLowerCase() + "-" + i, text: o.label })))) : null;
    const chartA = chartBox("chart-compare", "mean epoch time, A vs B");
    const node = el("div", null,
      el("h1", { text: "Compare campaigns " + cmp.a.campaign.id + " and " + cmp.b.campaign.id }),
      el("div", { cls: "grid" }, side(cmp.a, "A"), side(cmp.b, "B")),
      el("p", { cls: "note", text: "Configurations matched by their settings (repetitions pooled, device replaced by the board class); " +
        "means over epochs 1+ (epoch 0 is the warm-up). Deltas are B − A." }),
      el("p", null, num("compare-count", cmp.configurations.length, 0), " configurations matched"),
      el("table", null, el("thead", null, el("tr", null, ...["Configuration", "A epoch", "A power", "A energy", "B epoch", "B power",
        "B energy", "Δ epoch", "Δ power", "Δ energy"].map((h) => el("th", { text: h })))), el("tbody", null, ...rows)),
      el("div", { cls: "card" }, chartA.box),
      only(cmp.only_a, "A"), only(cmp.only_b, "B"));
    const draw = () => chart(chartA.canvas, {
      type: "bar",
      data: { labels: cmp.configurations.map((c) => c.label), datasets: [
        { label: "A: " + cmp.a.campaign.name, data: cmp.configurations.map((c) => c.a.mean_epoch_s), backgroundColor: colors[0] },
        { label: "B: " + cmp.b.campaign.name, data: cmp.configurations.map((c) => c.b.mean_epoch_s), backgroundColor: colors[1] }] },
      options: { plugins: { title: { display: true, text: "Mean epoch time (s), epochs 1+" } } },
    });
    return { node, draw };
  };

})();

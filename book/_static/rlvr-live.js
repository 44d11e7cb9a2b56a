// RLVR Lab: live dashboards on the static site (no kernel, no server, no CDN).
//
// The html-manager renders each dashboard from its saved widget state; its sliders move but nothing in
// the page recomputes. This script finds every rendered dashboard (class rlvr-dashboard, rlvr-kind-NAME),
// listens to its noUiSlider controls (class rlvr-ctl-PARAM, rlvr-log for log sliders, rlvr-int for
// integer ones) and, whenever one is set (slid or typed into), recomputes the readout with RLVRMath
// (book/_static/rlvr-math.js, checked against rlvr_lab by tests/test_widget_js.py) and redraws the
// figure's panels as SVG from the same functions. In a live kernel (Jupyter, Colab) none of this runs:
// the kernel recomputes and redraws the matplotlib figure.
(function () {
  "use strict";
  var M = window.RLVRMath;
  var SVGNS = "http://www.w3.org/2000/svg";
  var COLORS = { pass: "#2a9d8f", fail: "#e76f51", neutral: "#264653", accent: "#e9c46a", muted: "#8d99ae" };
  var SERIES = ["#219ebc", "#023047", "#fb8500", "#8ecae6", "#ffb703", "#8d99ae"];
  window.rlvrDashboards = [];

  function range(a, b, n) { var out = []; for (var i = 0; i < n; i++) out.push(a + (b - a) * i / (n - 1)); return out; }
  function logRange(a, b, n) { return range(Math.log10(a), Math.log10(b), n).map(function (e) { return Math.pow(10, e); }); }
  function ints(a, b) { var out = []; for (var i = a; i <= b; i++) out.push(i); return out; }

  // ---- a small SVG line plot: {title, xlabel, ylabel, xlog, ylog, ylim, series:[{x,y,color,dash,width,label}], marks:[{x,y,text,color}]}
  var W = 380, H = 250, PAD = { l: 52, r: 12, t: 26, b: 40 };
  function el(name, attrs, parent, text) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmtTick(v) {
    var a = Math.abs(v);
    if (a !== 0 && a < 1e-3) return v.toExponential(0).replace("e+", "e");
    if (a >= 1e6) return parseFloat((v / 1e6).toPrecision(3)) + "M";
    if (a >= 1e4) return parseFloat((v / 1e3).toPrecision(3)) + "k";
    return String(parseFloat(v.toPrecision(3)));
  }
  function ticks(lo, hi, log) {
    if (log) {
      var out = [];
      for (var e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) out.push(Math.pow(10, e));
      return out;
    }
    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span / 4)));
    if (span / step > 10) step *= 2.5; if (span / step > 10) step *= 2;
    var t = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push(parseFloat(v.toPrecision(12)));
    return t;
  }
  function panel(spec) {
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, class: "rlvr-panel", role: "img",
                          "aria-label": spec.title, "font-size": "11", "font-family": "sans-serif" });
    var xs = [], ys = [];
    spec.series.forEach(function (s) {
      s.x.forEach(function (x, i) {
        var y = s.y[i];
        if (isFinite(x) && isFinite(y) && (!spec.xlog || x > 0) && (!spec.ylog || y > 0)) { xs.push(x); ys.push(y); }
      });
    });
    (spec.marks || []).forEach(function (m) { if (isFinite(m.y) && (!spec.ylog || m.y > 0)) { xs.push(m.x); ys.push(m.y); } });
    var x0 = spec.xlim ? spec.xlim[0] : Math.min.apply(null, xs), x1 = spec.xlim ? spec.xlim[1] : Math.max.apply(null, xs);
    var y0 = spec.ylim ? spec.ylim[0] : Math.min.apply(null, ys), y1 = spec.ylim ? spec.ylim[1] : Math.max.apply(null, ys);
    if (!spec.ylim && !spec.ylog) { var pad = (y1 - y0) * 0.06 || 1; y0 -= pad; y1 += pad; }
    if (!spec.ylim && spec.ylog) { y0 /= 1.5; y1 *= 1.5; }
    if (x1 === x0) x1 = x0 + 1;
    if (y1 === y0) y1 = y0 + 1;
    var fx = function (x) {
      var t = spec.xlog ? (Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) : (x - x0) / (x1 - x0);
      return PAD.l + t * (W - PAD.l - PAD.r);
    };
    var fy = function (y) {
      var t = spec.ylog ? (Math.log10(y) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) : (y - y0) / (y1 - y0);
      return H - PAD.b - t * (H - PAD.t - PAD.b);
    };
    el("rect", { x: PAD.l, y: PAD.t, width: W - PAD.l - PAD.r, height: H - PAD.t - PAD.b, fill: "none", stroke: "#bbb" }, svg);
    ticks(x0, x1, spec.xlog).forEach(function (t) {
      if (t < x0 || t > x1) return;
      el("line", { x1: fx(t), x2: fx(t), y1: PAD.t, y2: H - PAD.b, stroke: "#eee" }, svg);
      el("text", { x: fx(t), y: H - PAD.b + 13, "text-anchor": "middle" }, svg, fmtTick(t));
    });
    ticks(y0, y1, spec.ylog).forEach(function (t) {
      if (t < y0 || t > y1) return;
      el("line", { x1: PAD.l, x2: W - PAD.r, y1: fy(t), y2: fy(t), stroke: "#eee" }, svg);
      el("text", { x: PAD.l - 4, y: fy(t) + 4, "text-anchor": "end" }, svg, fmtTick(t));
    });
    var clipId = "rlvr-clip-" + Math.random().toString(36).slice(2);
    var cp = el("clipPath", { id: clipId }, el("defs", {}, svg));
    el("rect", { x: PAD.l, y: PAD.t, width: W - PAD.l - PAD.r, height: H - PAD.t - PAD.b }, cp);
    var plotArea = el("g", { "clip-path": "url(#" + clipId + ")" }, svg);
    spec.series.forEach(function (s, k) {
      var d = "", pen = false;
      s.x.forEach(function (x, i) {
        var y = s.y[i];
        var ok = isFinite(x) && isFinite(y) && (!spec.xlog || x > 0) && (!spec.ylog || y > 0);
        if (!ok) { pen = false; return; }
        // keep far-off points finite for the path; the clip rectangle hides them anyway
        var yy = spec.ylog ? Math.min(Math.max(y, y0 / 10), y1 * 10) : Math.min(Math.max(y, y0 - 10 * (y1 - y0)), y1 + 10 * (y1 - y0));
        d += (pen ? "L" : "M") + fx(x).toFixed(1) + "," + fy(yy).toFixed(1);
        pen = true;
      });
      el("path", { d: d, fill: "none", stroke: s.color || SERIES[k % SERIES.length], "stroke-width": s.width || 1.6,
                   "stroke-dasharray": s.dash || "none" }, plotArea);
    });
    // Legend in a corner (spec.legend: "tl" default, "tr", "bl", "br", "bc"), on a white box over the curves.
    var legend = spec.series.filter(function (s) { return s.label; });
    if (legend.length) {
      var at = spec.legend || (spec.legendRight ? "tr" : "tl");
      var boxW = 24 + 6.2 * Math.max.apply(null, legend.map(function (s) { return s.label.length; }));
      var boxH = 13 * legend.length + 6;
      var lx = at.charAt(1) === "r" ? W - PAD.r - boxW - 4 : at.charAt(1) === "c" ? (PAD.l + W - PAD.r - boxW) / 2 : PAD.l + 4;
      var ly = at.charAt(0) === "b" ? H - PAD.b - boxH - 4 : PAD.t + 4;
      var g = el("g", { class: "rlvr-legend" }, svg);
      el("rect", { x: lx, y: ly, width: boxW, height: boxH, fill: "white", "fill-opacity": 0.85, stroke: "#ddd" }, g);
      legend.forEach(function (s, k) {
        var y = ly + 13 + 13 * k, x = lx + 4;
        el("line", { x1: x, x2: x + 14, y1: y - 4, y2: y - 4, stroke: s.color || SERIES[spec.series.indexOf(s) % SERIES.length],
                     "stroke-width": 2, "stroke-dasharray": s.dash || "none" }, g);
        el("text", { x: x + 18, y: y }, g, s.label);
      });
    }
    (spec.marks || []).forEach(function (m) {
      if (!isFinite(m.y) || (spec.ylog && m.y <= 0)) return;
      var cx = fx(m.x), cy = fy(m.y), c = m.color || COLORS.neutral;
      el("circle", { cx: cx, cy: cy, r: 4.5, fill: c, class: "rlvr-mark" }, svg);
      var anchor = cx > W * 0.6 ? "end" : "start";
      el("text", { x: cx + (anchor === "end" ? -7 : 7), y: cy + (m.below ? 15 : -7), "text-anchor": anchor, fill: c,
                   "font-weight": "bold", class: "rlvr-mark-label", stroke: "white", "stroke-width": 3,
                   "paint-order": "stroke" }, svg, m.text);
    });
    el("text", { x: W / 2, y: 16, "text-anchor": "middle", "font-weight": "bold" }, svg, spec.title);
    el("text", { x: (PAD.l + W - PAD.r) / 2, y: H - 6, "text-anchor": "middle" }, svg, spec.xlabel);
    el("text", { x: 11, y: (PAD.t + H - PAD.b) / 2, "text-anchor": "middle",
                 transform: "rotate(-90 11 " + (PAD.t + H - PAD.b) / 2 + ")" }, svg, spec.ylabel || "");
    return svg;
  }

  // An equation cited by its label: the number comes from the page (the dashboard's spec, written by
  // rlvr_lab.equations), never from this file; a label the page does not number is an error.
  function eqRef(numbers, used) {
    return function (label) {
      if (!(label in numbers)) throw new Error("rlvr-live: the page gives no number for equation " + label);
      used.push(label);
      return "eq (" + numbers[label] + ")";
    };
  }

  // ---- the figure of each dashboard, as panels computed by RLVRMath --------------------------------
  var FIGURES = {
    contrast: function (q, fx, E) {
      var ps = range(0.001, 0.999, 300), sizes = [2, 8, 16];
      if (sizes.indexOf(q.group_size) < 0) sizes.push(q.group_size);
      sizes.sort(function (a, b) { return a - b; });
      var line = function (f) {
        return sizes.map(function (g, k) {
          return { x: ps, y: ps.map(function (p) { return f(g, p); }), label: "G = " + g, color: SERIES[k],
                   width: g === q.group_size ? 2.8 : 1.3 };
        });
      };
      var pc = M.contrastProbability(q.group_size, q.p), cost = M.rolloutsPerInformativeGroup(q.group_size, q.p);
      return [
        { title: "Contrast probability, " + E("ch1-contrast"), xlabel: "pass rate p per attempt", ylabel: "P_c", ylim: [0, 1.02], legend: "bc",
          series: line(M.contrastProbability), marks: [{ x: q.p, y: pc, text: "P_c = " + M.pyFormat(pc, ".2f") }] },
        { title: "Cost of contrast G / P_c", xlabel: "pass rate p per attempt", ylabel: "rollouts per informative group",
          ylog: true, series: line(M.rolloutsPerInformativeGroup), legendRight: true,
          marks: [{ x: q.p, y: cost, text: M.pyFormat(cost, ".1f") + " rollouts" }] }
      ];
    },
    clip: function (q, fx, E) {
      var r = range(0, 2, 201), ps = logRange(1e-3, 1, 200);
      var top = M.clipProbabilityBounds(q.p, q.eps_low, q.eps_high)[1];
      return [
        { title: "Clipped surrogate, " + E("ch4-surrogate"), xlabel: "probability ratio r", ylabel: "surrogate per unit |A|",
          series: [
            { x: r, y: r.map(function (x) { return M.clippedSurrogate(x, 1, q.eps_low, q.eps_high); }), color: COLORS.pass, label: "A = +1", width: 2.4 },
            { x: r, y: r.map(function (x) { return M.clippedSurrogate(x, -1, q.eps_low, q.eps_high); }), color: COLORS.fail, label: "A = -1", width: 2.4 },
            { x: [1 - q.eps_low, 1 - q.eps_low], y: [-2, 2], color: COLORS.fail, dash: "4 3", width: 1 },
            { x: [1 + q.eps_high, 1 + q.eps_high], y: [-2, 2], color: COLORS.pass, dash: "4 3", width: 1 }] },
        { title: "Where the positive clip binds, " + E("ch7-headroom"), xlabel: "current token probability p", ylabel: "absolute probability",
          xlog: true, ylog: true, series: [
            { x: ps, y: ps.map(function (p) { return M.clipProbabilityBounds(p, q.eps_low, q.eps_high)[1]; }), color: COLORS.pass, label: "p (1 + eps_high)", width: 2 },
            { x: ps, y: ps, color: COLORS.muted, dash: "2 3", label: "current p" },
            { x: [1e-3, 1], y: [1, 1], color: COLORS.neutral, width: 1 }],
          marks: [{ x: q.p, y: top, text: "+" + M.pyFormat(top - q.p, ".3g") + " headroom", below: true }] }
      ];
    },
    all_pass: function (q, fx, E) {
      var ks = ints(1, Math.max(8, q.trials));
      var ab = M.allPassProbability(q.q_bad, q.trials), rg = 1 - M.allPassProbability(q.q_good, q.trials);
      return [
        { title: "Accidental reward vs false rejection, " + E("ch6-allpass"), xlabel: "trials K (all must pass)", ylabel: "probability", ylog: true,
          series: [{ x: ks, y: ks.map(function (k) { return M.allPassProbability(q.q_bad, k); }), color: COLORS.fail, label: "incorrect accepted" },
                   { x: ks, y: ks.map(function (k) { return 1 - M.allPassProbability(q.q_good, k); }), color: COLORS.pass, label: "correct rejected" }],
          legend: "bl",
          marks: [{ x: q.trials, y: ab, text: "accept " + M.pyFormat(ab, ".2%"), color: COLORS.fail, below: true },
                  { x: q.trials, y: rg, text: "reject " + M.pyFormat(rg, ".2%"), color: COLORS.pass }] },
        { title: "Verification work, " + E("ch6-trials"), xlabel: "trials K", ylabel: "expected trials executed",
          series: [{ x: ks, y: ks.map(function (k) { return M.expectedTrials(q.q_bad, k); }), color: COLORS.fail, label: "incorrect patch" },
                   { x: ks, y: ks.map(function (k) { return M.expectedTrials(q.q_good, k); }), color: COLORS.pass, label: "correct patch" },
                   { x: ks, y: ks, color: COLORS.muted, dash: "2 3", label: "run every trial" }],
          marks: [{ x: q.trials, y: M.expectedTrials(q.q_good, q.trials), text: M.pyFormat(M.expectedTrials(q.q_good, q.trials), ".2f"), color: COLORS.pass },
                  { x: q.trials, y: M.expectedTrials(q.q_bad, q.trials), text: M.pyFormat(M.expectedTrials(q.q_bad, q.trials), ".2f"), color: COLORS.fail, below: true }] }
      ];
    },
    false_accept: function (q, fx, E) {
      var rhos = logRange(1e-3, 1, 300), alphas = [0.005, 0.01, 0.025, 0.05, 0.1];
      if (alphas.indexOf(q.alpha) < 0) alphas.push(q.alpha);
      alphas.sort(function (a, b) { return a - b; });
      var share = M.falseAcceptShare(q.rho, q.alpha, q.beta), n = fx.rollouts;
      return [
        { title: "False-accept share of rewards, " + E("ch2-false-share"), xlabel: "policy pass rate rho", ylabel: "Pr(fail | accepted)",
          xlog: true, ylim: [0, 1.02], legend: "tl",
          series: alphas.map(function (a, k) {
            return { x: rhos, y: rhos.map(function (r) { return M.falseAcceptShare(r, a, q.beta); }),
                     color: a === q.alpha ? COLORS.fail : SERIES[k % SERIES.length], width: a === q.alpha ? 2.6 : 1.1,
                     label: "alpha = " + M.pyFormat(a, "g") };
          }),
          marks: [{ x: q.rho, y: share, text: M.pyFormat(share, ".1%") + " false", color: COLORS.fail }] },
        { title: "Accepts in " + M.pyFormat(n, ",.0f") + " rollouts", xlabel: "policy pass rate rho", ylabel: "expected count",
          xlog: true, ylog: true,
          series: [{ x: rhos, y: rhos.map(function (r) { return n * r * q.beta; }), color: COLORS.pass, label: "true accepts" },
                   { x: rhos, y: rhos.map(function (r) { return n * (1 - r) * q.alpha; }), color: COLORS.fail, label: "false accepts" }],
          marks: [{ x: q.rho, y: n * q.rho * q.beta, text: M.pyFormat(n * q.rho * q.beta, ",.1f"), color: COLORS.pass },
                  { x: q.rho, y: n * (1 - q.rho) * q.alpha, text: M.pyFormat(n * (1 - q.rho) * q.alpha, ",.1f"), color: COLORS.fail, below: true }] }
      ];
    },
    reward_weights: function (q, fx, E) {
      var ok = M.passOutranksFailure(q.w_format, q.w_length), margin = M.orderingMargin(q.w_format, q.w_length);
      var wf = q.w_format, wl = q.w_length;
      var worstPass = M.compositeReward(1, 0, 1, wf, wl), bestPass = M.compositeReward(1, 1, 0, wf, wl);
      var worstFail = M.compositeReward(0, 0, 1, wf, wl), bestFail = M.compositeReward(0, 1, 0, wf, wl);
      return [
        { title: "Order kept below λ_f + λ_ℓ = 1, " + E("ch2-ordering"), xlabel: "format weight λ_f", ylabel: "length weight λ_ℓ",
          xlim: [0, 1.2], ylim: [0, 1.2],
          series: [{ x: [0, 1], y: [1, 0], color: COLORS.pass, width: 1.5, label: "λ_f + λ_ℓ = 1" }],
          marks: [{ x: wf, y: wl, text: "margin " + M.pyFormat(margin, "+.2f"), color: ok ? COLORS.pass : COLORS.fail }] },
        { title: "Score ranges, " + E("ch2-composite"), xlabel: "composite score R", ylabel: "", ylim: [-0.5, 1.5],
          xlim: [Math.min(-1.1, worstFail - 0.1), Math.max(2.1, bestPass + 0.1)],
          series: [{ x: [worstPass, bestPass], y: [1, 1], color: COLORS.pass, width: 14, label: "passes" },
                   { x: [worstFail, bestFail], y: [0, 0], color: COLORS.fail, width: 14, label: "failures" }],
          marks: [{ x: worstPass, y: 1, text: "worst pass " + M.pyFormat(worstPass, ".2f"), color: COLORS.pass },
                  { x: bestFail, y: 0, text: "best failure " + M.pyFormat(bestFail, ".2f"), color: COLORS.fail, below: true }] }
      ];
    },
    fork: function (q, fx, E) {
      var chosen = M.evenForks(q.horizon, q.forks), nf = chosen.length;
      var hs = ints(Math.max(3, nf + 1), Math.max(60, q.horizon));
      var mAll = M.continuationMultiple(q.horizon, q.continuations, "all");
      var mSel = M.continuationMultiple(q.horizon, q.continuations, chosen);
      var ms = ints(1, 200), m = Math.max(1, q.continuations);
      return [
        { title: "Token multiple, " + E("ch3-fork-multiple") + ", M = " + q.continuations, xlabel: "horizon H (turns)", ylabel: "tokens / base trajectory",
          ylog: true,
          series: [{ x: hs, y: hs.map(function (h) { return M.continuationMultiple(h, q.continuations, "all"); }), color: COLORS.fail, label: "every boundary", width: 2 },
                   { x: hs, y: hs.map(function (h) { return M.continuationMultiple(h, q.continuations, M.evenForks(h, nf)); }), color: COLORS.pass, label: nf + " evenly placed fork(s)", width: 2 }],
          marks: [{ x: q.horizon, y: mAll, text: M.pyFormat(mAll, ".0f") + "x", color: COLORS.fail },
                  { x: q.horizon, y: mSel, text: M.pyFormat(mSel, ".1f") + "x", color: COLORS.pass, below: true }] },
        { title: "Sampling error of a fork value, " + E("ch3-se"), xlabel: "continuations M per fork", ylabel: "standard error bound",
          xlog: true, legendRight: true,
          series: [{ x: ms, y: ms.map(M.standardErrorBound), color: COLORS.neutral, label: "one fork mean", width: 2 },
                   { x: ms, y: ms.map(M.differenceStandardErrorBound), color: COLORS.accent, label: "difference", width: 2 },
                   { x: ms, y: ms.map(function (k) { return 2 * M.differenceStandardErrorBound(k); }), color: COLORS.muted, dash: "5 3", label: "resolved above (2x)" }],
          marks: [{ x: m, y: M.differenceStandardErrorBound(m), text: "M=" + m + ": " + M.pyFormat(M.differenceStandardErrorBound(m), ".2f") }] }
      ];
    },
    cycle: function (q, fx, E) {
      var resets = logRange(1e-3, Math.pow(10, 1.3), 200);
      var cap = function (tr) { return M.poolCapacityPerHour(q.slots, M.cycleTime(q.horizon, q.t_model, q.t_tool, q.t_assess, tr)); };
      var ceiling = cap(0), cyc = M.cycleTime(q.horizon, q.t_model, q.t_tool, q.t_assess, q.t_reset);
      return [
        { title: "Cycle, " + E("ch8-cycle") + ": " + M.pyFormat(cyc, ".3f") + " s", xlabel: "reset time t_reset (s)", ylabel: "episodes / hour",
          xlog: true, ylim: [0, ceiling * 1.1],
          series: [{ x: resets, y: resets.map(cap), color: COLORS.neutral, width: 2, label: q.slots + " slots" },
                   { x: [1e-3, Math.pow(10, 1.3)], y: [ceiling, ceiling], color: COLORS.pass, dash: "5 3", label: "zero-reset ceiling" }],
          marks: [{ x: q.t_reset, y: cap(q.t_reset), text: M.pyFormat(cap(q.t_reset), ",.0f") + "/h", below: true }] }
      ];
    },
    staleness: function (q, fx, E) {
      var steps = range(5, 250, 246);
      return [
        { title: "Admission under a staleness bound, " + E("ch8-lag"), xlabel: "trainer step time T_step (s)", ylabel: "admitted fraction",
          ylim: [0, 1.05], legendRight: true,
          series: ints(0, 4).map(function (b, k) {
            return { x: steps, y: steps.map(function (s) { return M.admittedFraction(s, b, fx.ages, fx.weights); }),
                     color: SERIES[k], width: b === q.max_lag ? 2.6 : 1, label: "lag <= " + b };
          }),
          marks: [{ x: q.step_s, y: M.admittedFraction(q.step_s, q.max_lag, fx.ages, fx.weights),
                    text: M.pyFormat(M.admittedFraction(q.step_s, q.max_lag, fx.ages, fx.weights), ".0%") + " admitted", below: true }] }
      ];
    },
    verifier_pool: function (q, fx, E) {
      var mt = M.mixtureTrials(q.trials, q.incorrect_share, fx.q_incorrect, fx.q_correct);
      var targets = range(0.3, 0.98, 200);
      var curve = function (k) { return targets.map(function (t) { return M.verifierWorkers(q.arrival_per_s, k, q.trial_s, t); }); };
      var w = M.verifierWorkers(q.arrival_per_s, q.trials, q.trial_s, q.target_utilization);
      return [
        { title: "E" + E("ch8-workers").slice(1) + ": lambda = " + M.pyFormat(q.arrival_per_s, "g") + "/s, t_v = " + M.pyFormat(q.trial_s, "g") + " s",
          xlabel: "target utilisation", ylabel: "workers to provision", legendRight: true,
          series: [{ x: targets, y: curve(q.trials), color: COLORS.neutral, width: 2, label: "all " + q.trials + " trials" },
                   { x: targets, y: curve(mt[0]), color: COLORS.pass, width: 2, label: "stop on first rejection" },
                   { x: targets, y: curve(mt[1]), color: COLORS.fail, dash: "2 3", width: 2, label: "mean-q plug-in" }],
          marks: [{ x: q.target_utilization, y: w, text: M.pyFormat(w, ",.0f") + " workers" }] }
      ];
    }
  };

  // ---- wiring a rendered dashboard ----------------------------------------------------------------
  function readParams(dash) {
    var q = {};
    dash.controls.forEach(function (c) { q[c.name] = c.value(); });
    return q;
  }
  // A control's value as the widget model holds it: the number its readout shows and the one a kernel
  // would compute from. It starts as the saved value (the spec's params, written by rlvr_lab) and changes
  // only when this control itself is set: by a slide, where the model takes the slider position (snapped to
  // the step, so 0.2 + 0.01 reads 0.21) or 10 ** position for a log slider, or by a number typed into its
  // readout, which the model takes as typed, clamped to the range and never snapped. Reading every control
  // back from its slider instead would move the others to their snapped positions (a saved reset of 3.5 s
  // sits at 10 ** 0.54 = 3.467 on the slider).
  function tracker(ctl, saved) {
    var slider = ctl.querySelector(".noUi-target").noUiSlider;
    var step = (slider.options && slider.options.step) || 0;
    var range = (slider.options && slider.options.range) || {};
    var isLog = ctl.classList.contains("rlvr-log"), isInt = ctl.classList.contains("rlvr-int");
    var t = { el: ctl, slider: slider, typed: null };
    function fromSlider() {
      var raw = parseFloat(slider.get());
      if (isLog) return Math.pow(10, raw);
      if (step) raw = parseFloat((Math.round(raw / step) * step).toPrecision(12));
      return isInt ? Math.round(raw) : raw;
    }
    t.current = typeof saved === "number" ? saved : fromSlider();
    // what the widget makes of text typed into the readout (its handleTextChange), or null
    t.parse = function (text) {
      var v = isInt ? parseInt(text, 10) : parseFloat(text);
      if (isNaN(v)) return null;
      var lo = isLog ? Math.pow(10, range.min) : range.min, hi = isLog ? Math.pow(10, range.max) : range.max;
      return Math.max(Math.min(v, hi), lo);
    };
    t.onSet = function () {
      t.current = t.typed !== null ? t.typed : fromSlider();
      t.typed = null;
    };
    t.value = function () { return t.current; };
    return t;
  }
  // Typing into a readout: the widget reads the text on Enter or blur and sets its model, which moves the
  // slider and fires its "set". Listening in the capture phase on the document sees the text first.
  var TRACKED = [];
  function noteTyped(ev) {
    if (ev.type === "keydown" && ev.key !== "Enter") return;
    var target = ev.target;
    if (!target || !target.classList || !target.classList.contains("widget-readout")) return;
    TRACKED.forEach(function (t) {
      if (!t.el.contains(target)) return;
      t.typed = t.parse(target.textContent);
      setTimeout(function () { t.typed = null; }, 0);  // the model kept its value: no "set" came
    });
  }
  document.addEventListener("keydown", noteTyped, true);
  document.addEventListener("blur", noteTyped, true);
  function recompute(dash) {
    var q = readParams(dash);
    var rows = M.compute(dash.kind, q, dash.spec.fixed, dash.spec.formats);
    var table = dash.readout;
    var body = rows.map(function (r) {
      var raw = r.type === "b" ? String(r.value) : r.type === "s" ? r.value : String(r.value);
      return "<tr><td>" + escapeHtml(r.label) + "</td><td data-value='" + escapeHtml(raw) + "'><b>" +
        escapeHtml(r.text) + "</b></td></tr>";
    }).join("");
    table.innerHTML = body;
    drawFigure(dash, q);
    dash.state.params = q;
    dash.state.numbers = rows;
    dash.state.updates += 1;
  }
  function drawFigure(dash, q) {
    var img = dash.root.querySelector("img");
    var box = dash.root.querySelector(".rlvr-live-figure");
    if (!box) {
      box = document.createElement("div");
      box.className = "rlvr-live-figure";
      if (img) img.parentNode.insertBefore(box, img);
      else dash.root.appendChild(box);
    }
    if (img) img.style.display = "none";
    box.innerHTML = "";
    var used = [];
    FIGURES[dash.kind](q, dash.spec.fixed, eqRef(dash.spec.eq || {}, used)).forEach(function (spec) { box.appendChild(panel(spec)); });
    box.setAttribute("data-eq", used.join(" "));
  }
  function escapeHtml(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/'/g, "&#39;").replace(/"/g, "&quot;");
  }
  function attach(root) {
    var table = root.querySelector("table.rlvr-readout[data-rlvr]");
    var ctls = Array.prototype.slice.call(root.querySelectorAll(".rlvr-ctl"));
    if (!table || !ctls.length) return false;
    if (!ctls.every(function (c) { var t = c.querySelector(".noUi-target"); return t && t.noUiSlider; })) return false;
    var spec = JSON.parse(table.getAttribute("data-rlvr"));
    if (!spec.kind || !FIGURES[spec.kind]) return true;
    var dash = {
      root: root, kind: spec.kind, spec: spec, readout: table,
      controls: ctls.map(function (c) {
        var name = Array.prototype.filter.call(c.classList, function (k) { return k.indexOf("rlvr-ctl-") === 0; })[0].slice(9);
        var t = tracker(c, (spec.params || {})[name]);
        TRACKED.push(t);
        return { name: name, el: c, value: t.value, tracker: t };
      }),
      state: { kind: spec.kind, params: null, numbers: null, updates: 0 }
    };
    dash.state.params = readParams(dash);
    var note = document.createElement("div");
    note.className = "rlvr-live-note";
    note.textContent = "Live on this static page: moving a slider recomputes these numbers and the figure in your " +
      "browser (rlvr-math.js, a port of rlvr_lab tested against it). Run the notebook for the library's own figure.";
    root.insertBefore(note, root.children[1] || null);
    dash.controls.forEach(function (c) {
      c.tracker.slider.on("set", function () { c.tracker.onSet(); recompute(dash); });
    });
    root.setAttribute("data-rlvr-live", "1");
    root.setAttribute("data-rlvr-index", String(window.rlvrDashboards.length));
    window.rlvrDashboards.push(dash.state);
    return true;
  }
  function scan() {
    if (!M) return;
    document.querySelectorAll(".rlvr-dashboard:not([data-rlvr-live])").forEach(function (root) { attach(root); });
  }
  // The html-manager renders dashboards asynchronously and sets up each noUiSlider after inserting its DOM,
  // so besides watching for new nodes, look again every 250 ms until every dashboard is wired (or 2 min).
  function start() {
    scan();
    new MutationObserver(function () { scan(); }).observe(document.body, { childList: true, subtree: true });
    var tries = 0, timer = setInterval(function () {
      scan();
      tries += 1;
      var pending = document.querySelectorAll(".rlvr-dashboard:not([data-rlvr-live])").length;
      if ((pending === 0 && document.readyState === "complete" && tries > 20) || tries > 480) clearInterval(timer);
    }, 250);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

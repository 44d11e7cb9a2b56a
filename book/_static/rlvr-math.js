// RLVR Lab: the closed-form relations behind the book's nine dashboards, for the static site.
//
// A line-by-line port of the rlvr_lab functions each dashboard of rlvr_lab/figures/widgets.py calls
// (rewards, credit, cycle_time, grpo.clip_probability_bounds / clipped_surrogate, figures.relations.even_forks)
// and of Python's format specs used by its readout. rlvr_lab stays the one source of truth:
// tests/test_widget_js.py runs this file under node on a grid of slider values and requires every number
// within 1e-9 (relative) of the library and every label and formatted string equal.
// No dependencies; loaded as a plain script (window.RLVRMath) and as a CommonJS module by node.
(function (root) {
  "use strict";

  // ---- rlvr_lab.rewards ---------------------------------------------------------------------------
  function contrastProbability(g, p) { return 1.0 - Math.pow(p, g) - Math.pow(1.0 - p, g); }
  function rolloutsPerInformativeGroup(g, p) {
    var pc = contrastProbability(g, p);
    return pc > 0 ? g / pc : Infinity;
  }
  function falseAcceptShare(rho, alpha, beta) {
    var t = rho * beta, f = (1.0 - rho) * alpha, total = t + f;
    return total > 0 ? f / total : NaN;
  }
  function allPassProbability(q, k) { return Math.pow(q, k); }
  function expectedTrials(q, k) {
    var s = 0;
    for (var j = 0; j < k; j++) s += Math.pow(q, j);
    return s;
  }
  function compositeReward(c, f, len, wf, wl) { return c + wf * f - wl * len; }
  function orderingMargin(wf, wl) { return 1.0 - (wf + wl); }
  function passOutranksFailure(wf, wl) { return roundTo(wf + wl, 12) < 1.0; }

  // ---- rlvr_lab.credit ----------------------------------------------------------------------------
  function forkRemaining(h, forks) {
    var s = 0;
    if (forks === "all") { for (var k = 1; k < h; k++) s += h - k; return s; }
    forks.forEach(function (k) { s += h - k; });
    return s;
  }
  function continuationTokens(h, n, m, forks) { return h * n + m * n * forkRemaining(h, forks); }
  function continuationMultiple(h, m, forks) { return 1.0 + m * forkRemaining(h, forks) / h; }
  function standardErrorBound(m) { return 1.0 / (2.0 * Math.sqrt(m)); }
  function differenceStandardErrorBound(m) { return Math.sqrt(2.0) * standardErrorBound(m); }

  // ---- rlvr_lab.cycle_time ------------------------------------------------------------------------
  function cycleTime(h, tm, tt, ta, tr) { return h * (tm + tt) + ta + tr; }
  function poolCapacityPerHour(slots, cyc) { return slots * 3600.0 / cyc; }
  function versionLag(age, step) { return Math.floor(roundTo(age / step, 9)); }
  function admit(age, step, maxLag) { return versionLag(age, step) <= maxLag; }
  function verifierDemand(lam, k, t) { return lam * k * t; }
  function verifierWorkers(lam, k, t, rho) { return Math.ceil(roundTo(verifierDemand(lam, k, t) / rho, 9)); }

  // ---- rlvr_lab.grpo ------------------------------------------------------------------------------
  function clipProbabilityBounds(p, lo, hi) { return [p * (1.0 - lo), p * (1.0 + hi)]; }
  function clippedSurrogate(r, a, lo, hi) {
    var c = Math.min(Math.max(r, 1.0 - lo), 1.0 + hi);
    return Math.min(r * a, c * a);
  }

  // ---- admitted_fraction, mixture_trials, even_forks ----------------------------------------------
  function admittedFraction(step, maxLag, ages, weights) {
    var num = 0, den = 0;
    for (var i = 0; i < ages.length; i++) {
      num += weights[i] * (admit(ages[i], step, maxLag) ? 1.0 : 0.0);
      den += weights[i];
    }
    return roundTo(num / den, 12);
  }
  function mixtureTrials(k, share, qi, qc) {
    var w0 = share, w1 = 1.0 - share;
    var mix = (w0 * expectedTrials(qi, k) + w1 * expectedTrials(qc, k)) / (w0 + w1);
    return [mix, expectedTrials(share * qi + (1.0 - share) * qc, k)];
  }
  function evenForks(h, count) {
    count = Math.max(0, Math.min(Math.trunc(count), h - 1));
    var picks = {};
    for (var j = 1; j <= count; j++) picks[roundHalfEven(h * j / (count + 1))] = true;
    return Object.keys(picks).map(Number).sort(function (a, b) { return a - b; })
      .filter(function (k) { return k >= 1 && k <= h - 1; });
  }

  // Python's round(x) (ties to even) and round(x, d).
  function roundHalfEven(x) {
    var f = Math.floor(x), d = x - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  }
  function roundTo(x, d) { var s = Math.pow(10, d); return roundHalfEven(x * s) / s; }

  // ---- Python format specs used by the readouts ---------------------------------------------------
  function group(intPart) { return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  // |x| to `prec` decimals, ties to even on the exact binary value as Python does (toFixed rounds ties up).
  function toFixedEven(a, prec) {
    var s = a.toFixed(prec);
    if (a >= 1e21 || prec > 60) return s;
    var exact = a.toFixed(Math.min(prec + 40, 100)), cut = exact.indexOf(".") + prec + (prec ? 1 : 0);
    var rest = exact.slice(prec ? cut : exact.indexOf(".") + 1);
    if (!/^50*$/.test(rest)) return s;
    var down = exact.slice(0, prec ? cut : exact.indexOf("."));
    var last = parseInt(down.replace(".", "").slice(-1), 10);
    return last % 2 === 0 ? down : s;
  }
  function fixed(x, prec, comma) {
    var s = toFixedEven(Math.abs(x), prec), parts = s.split(".");
    if (comma) parts[0] = group(parts[0]);
    return parts.join(".");
  }
  function general(x, prec) {
    if (prec === 0) prec = 1;
    if (x === 0) return "0";
    var e = Math.abs(x).toExponential(prec - 1), m = e.split("e"), exp = parseInt(m[1], 10);
    if (exp >= -4 && exp < prec) {
      var s = toFixedEven(Math.abs(x), Math.max(prec - 1 - exp, 0));
      if (s.indexOf(".") >= 0) s = s.replace(/0+$/, "").replace(/\.$/, "");
      return s;
    }
    var mant = m[0].indexOf(".") >= 0 ? m[0].replace(/0+$/, "").replace(/\.$/, "") : m[0];
    return mant + "e" + (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
  }
  // format(value, spec) for specs [+][,][.N](f|%|g) and "s", as Python prints them.
  function pyFormat(value, spec) {
    if (spec === "s") return String(value);
    var m = /^(\+)?(,)?(?:\.(\d+))?([fg%])?$/.exec(spec);
    if (!m) throw new Error("unsupported format spec " + spec);
    var plus = !!m[1], comma = !!m[2], type = m[4] || "g";
    var prec = m[3] === undefined ? 6 : parseInt(m[3], 10);
    var x = type === "%" ? value * 100 : value, body;
    if (isNaN(x)) body = "nan";
    else if (!isFinite(x)) body = "inf";
    else if (type === "g") body = general(x, prec);
    else body = fixed(x, prec, comma);
    if (type === "%") body += "%";
    var neg = x < 0 || (x === 0 && 1 / x < 0);
    return (neg ? "-" : plus ? "+" : "") + body;
  }
  // rlvr_lab.figures.dashboard.Dashboard._format: the spec if any, else yes/no, 1,234 or .4g.
  function formatNumber(value, type, spec) {
    if (spec) return pyFormat(value, spec);
    if (type === "b") return value ? "yes" : "no";
    if (type === "i") return pyFormat(value, ",.0f");
    return pyFormat(value, ".4g");
  }

  // ---- the nine dashboards: label, value, type (f float, i int, b bool, s text), in readout order ----
  var F = "f", I = "i", B = "b", S = "s";
  var DASHBOARDS = {
    contrast: function (q) {
      var pc = contrastProbability(q.group_size, q.p);
      return [["contrast probability P_c", pc, F], ["zero-contrast share 1 - P_c", 1.0 - pc, F],
              ["at least one pass 1-(1-p)^G", 1.0 - Math.pow(1.0 - q.p, q.group_size), F],
              ["rollouts per informative group", rolloutsPerInformativeGroup(q.group_size, q.p), F]];
    },
    clip: function (q) {
      var b = clipProbabilityBounds(q.p, q.eps_low, q.eps_high);
      var top = 1.0 + q.eps_high + 0.1, bottom = 1.0 - q.eps_low - 0.1;
      return [["ratio interval low", 1.0 - q.eps_low, F], ["ratio interval high", 1.0 + q.eps_high, F],
              ["positive clip at probability", b[1], F], ["headroom above p", b[1] - q.p, F],
              ["clip binds below p = 1", b[1] < 1.0, B], ["negative clip at probability", b[0], F],
              ["surrogate, A=+1, r past the top", clippedSurrogate(top, 1.0, q.eps_low, q.eps_high), F],
              ["surrogate, A=-1, r past the bottom", clippedSurrogate(bottom, -1.0, q.eps_low, q.eps_high), F]];
    },
    all_pass: function (q) {
      return [["incorrect patch accepted", allPassProbability(q.q_bad, q.trials), F],
              ["correct patch rejected", 1.0 - allPassProbability(q.q_good, q.trials), F],
              ["expected trials, incorrect", expectedTrials(q.q_bad, q.trials), F],
              ["expected trials, correct", expectedTrials(q.q_good, q.trials), F]];
    },
    false_accept: function (q, fx) {
      var n = fx.rollouts, tag = pyFormat(n, ",.0f");
      return [["false-accept share", falseAcceptShare(q.rho, q.alpha, q.beta), F],
              ["true accepts in " + tag, n * q.rho * q.beta, F],
              ["false accepts in " + tag, n * (1.0 - q.rho) * q.alpha, F]];
    },
    reward_weights: function (q, fx) {
      var out = [["ordering margin", orderingMargin(q.w_format, q.w_length), F],
                 ["every pass outranks every failure", passOutranksFailure(q.w_format, q.w_length), B]];
      fx.score_table.forEach(function (r) {
        out.push(["R: " + r[0], compositeReward(r[1], r[2], r[3], q.w_format, q.w_length), F]);
      });
      return out;
    },
    fork: function (q) {
      var h = q.horizon, chosen = evenForks(h, q.forks), m = Math.max(q.continuations, 1);
      return [["chosen fork turns", chosen.length ? chosen.join(", ") : "none", S],
              ["tokens, every boundary", continuationTokens(h, q.tokens_per_turn, q.continuations, "all"), I],
              ["multiple, every boundary", continuationMultiple(h, q.continuations, "all"), F],
              ["tokens, chosen forks", continuationTokens(h, q.tokens_per_turn, q.continuations, chosen), I],
              ["multiple, chosen forks", continuationMultiple(h, q.continuations, chosen), F],
              ["SE bound, one fork", standardErrorBound(m), F],
              ["SE bound, difference", differenceStandardErrorBound(m), F],
              ["resolved if |difference| >=", 2.0 * differenceStandardErrorBound(m), F]];
    },
    cycle: function (q) {
      var cyc = cycleTime(q.horizon, q.t_model, q.t_tool, q.t_assess, q.t_reset);
      var floor = cycleTime(q.horizon, q.t_model, q.t_tool, q.t_assess, 0.0);
      return [["cycle time (s)", cyc, F], ["reset share of cycle", q.t_reset / cyc, F],
              ["capacity (episodes/h)", poolCapacityPerHour(q.slots, cyc), F],
              ["zero-reset ceiling (episodes/h)", poolCapacityPerHour(q.slots, floor), F]];
    },
    staleness: function (q, fx) {
      var out = [["admitted fraction", admittedFraction(q.step_s, q.max_lag, fx.ages, fx.weights), F]];
      fx.ages.forEach(function (a) {
        out.push(["lag of a " + pyFormat(a, "g") + " s rollout", versionLag(a, q.step_s), I]);
      });
      return out;
    },
    verifier_pool: function (q, fx) {
      var mt = mixtureTrials(q.trials, q.incorrect_share, fx.q_incorrect, fx.q_correct);
      var lam = q.arrival_per_s, t = q.trial_s, rho = q.target_utilization;
      return [["busy workers, 1 trial", verifierDemand(lam, 1, t), F],
              ["busy workers, all K", verifierDemand(lam, q.trials, t), F],
              ["workers, all K", verifierWorkers(lam, q.trials, t, rho), I],
              ["expected trials (mixture)", mt[0], F],
              ["workers, stop on first rejection", verifierWorkers(lam, mt[0], t, rho), I],
              ["workers, mean-q plug-in (wrong)", verifierWorkers(lam, mt[1], t, rho), I]];
    }
  };

  // One dashboard's readout: [{label, value, type, text}] for slider values `params`.
  function compute(kind, params, fixedParams, formats) {
    var fn = DASHBOARDS[kind];
    if (!fn) throw new Error("unknown dashboard " + kind);
    formats = formats || {};
    return fn(params, fixedParams || {}).map(function (row) {
      return { label: row[0], value: row[1], type: row[2], text: formatNumber(row[1], row[2], formats[row[0]]) };
    });
  }

  var api = {
    contrastProbability: contrastProbability, rolloutsPerInformativeGroup: rolloutsPerInformativeGroup,
    falseAcceptShare: falseAcceptShare, allPassProbability: allPassProbability, expectedTrials: expectedTrials,
    compositeReward: compositeReward, orderingMargin: orderingMargin, passOutranksFailure: passOutranksFailure,
    continuationMultiple: continuationMultiple, continuationTokens: continuationTokens,
    standardErrorBound: standardErrorBound, differenceStandardErrorBound: differenceStandardErrorBound,
    cycleTime: cycleTime, poolCapacityPerHour: poolCapacityPerHour, versionLag: versionLag, admit: admit,
    verifierDemand: verifierDemand, verifierWorkers: verifierWorkers, clipProbabilityBounds: clipProbabilityBounds,
    clippedSurrogate: clippedSurrogate, admittedFraction: admittedFraction, mixtureTrials: mixtureTrials,
    evenForks: evenForks, pyFormat: pyFormat, formatNumber: formatNumber, compute: compute,
    kinds: Object.keys(DASHBOARDS)
  };
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.RLVRMath = api;
})(typeof window !== "undefined" ? window : this);

"""The static site's dashboards recompute with book/_static/rlvr-math.js; rlvr_lab stays the source of truth.

For every dashboard of :mod:`rlvr_lab.figures.widgets` this runs the JavaScript port under node on a grid of slider
values (each slider over its range with the others at the book's defaults, plus seeded random settings of
all sliders together) and requires the same readout as the library's own Dashboard: the same labels in the
same order, the same value types, every number within 1e-9 relative, and the same formatted text.
"""

import json
import math
import random
import shutil
import subprocess

import ipywidgets as w
import pytest

from book_site import ROOT
from rlvr_lab.figures import widgets

NODE = shutil.which("node") or shutil.which("nodejs")
MATH_JS = ROOT / "book" / "_static" / "rlvr-math.js"
RTOL = 1e-9

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs)")


def _grid(control, n: int = 9) -> list:
    """Values a reader can set on ``control``: ends, evenly spaced points on the slider's own step."""
    if isinstance(control, w.FloatLogSlider):
        steps = round((control.max - control.min) / control.step)
        exps = sorted({control.min + round(steps * i / (n - 1)) * control.step for i in range(n)})
        return [control.base ** round(e, 10) for e in exps]
    steps = round((control.max - control.min) / control.step)
    vals = sorted({round(control.min + round(steps * i / (n - 1)) * control.step, 10) for i in range(n)})
    return [int(v) for v in vals] if isinstance(control, w.IntSlider) else vals


def _random(control, rng) -> float:
    if isinstance(control, w.FloatLogSlider):
        steps = round((control.max - control.min) / control.step)
        return control.base ** round(control.min + rng.randint(0, steps) * control.step, 10)
    steps = round((control.max - control.min) / control.step)
    v = round(control.min + rng.randint(0, steps) * control.step, 10)
    return int(v) if isinstance(control, w.IntSlider) else v


def _kind(value) -> str:
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, str):
        return "s"
    return "f"


def _cases():
    """(dashboard kind, params, fixed, formats, expected rows) over the grid, computed by rlvr_lab."""
    rng = random.Random(17)
    cases = []
    for make in widgets.ALL:
        d = make()
        defaults = d.params()
        settings = [dict(defaults, **{name: v}) for name, c in d.controls.items() for v in _grid(c)]
        settings += [{name: _random(c, rng) for name, c in d.controls.items()} for _ in range(25)]
        for params in settings:
            numbers = d._compute(**params)
            rows = [
                [
                    label,
                    value if not (isinstance(value, float) and math.isinf(value)) else "inf",
                    _kind(value),
                    d._format(label, value),
                ]
                for label, value in numbers.items()
            ]
            cases.append({"kind": d.kind, "params": params, "fixed": d.fixed, "formats": d._formats, "rows": rows})
    return cases


def _run_js(cases, tmp_path):
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    script = f"""
const M = require({json.dumps(str(MATH_JS))});
const cases = JSON.parse(require('fs').readFileSync({json.dumps(str(tmp_path / "cases.json"))}, 'utf8'));
const out = cases.map(c => M.compute(c.kind, c.params, c.fixed, c.formats).map(r =>
    [r.label, (typeof r.value === 'number' && !isFinite(r.value)) ? (isNaN(r.value) ? 'nan' : 'inf') : r.value, r.type, r.text]));
process.stdout.write(JSON.stringify(out));
"""
    proc = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_dashboard_has_a_javascript_port():
    kinds = [make().kind for make in widgets.ALL]
    assert len(kinds) == 9 and len(set(kinds)) == 9 and None not in kinds
    out = subprocess.run(
        [NODE, "-e", f"console.log(JSON.stringify(require({json.dumps(str(MATH_JS))}).kinds))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert sorted(json.loads(out)) == sorted(kinds)


def test_javascript_readouts_match_the_library_on_a_grid(tmp_path):
    cases = _cases()
    got = _run_js(cases, tmp_path)
    per_kind: dict = {}
    for case, rows in zip(cases, got):
        per_kind[case["kind"]] = per_kind.get(case["kind"], 0) + 1
        where = f"{case['kind']} at {case['params']}"
        assert [r[0] for r in rows] == [r[0] for r in case["rows"]], f"{where}: labels differ"
        for (label, want, kind, text), (_, value, jkind, jtext) in zip(case["rows"], rows):
            assert jkind == kind, f"{where}: {label} is {jkind} in JS, {kind} in rlvr_lab"
            if kind == "f" and want != "inf":
                assert math.isclose(value, want, rel_tol=RTOL, abs_tol=1e-15), f"{where}: {label} {value} != {want}"
            else:
                assert value == want, f"{where}: {label} {value!r} != {want!r}"
            assert jtext == text, f"{where}: {label} shows {jtext!r}, rlvr_lab shows {text!r}"
    assert len(per_kind) == 9 and min(per_kind.values()) >= 30, per_kind


@pytest.mark.parametrize(
    "value, spec, want",
    [
        (0.18367, ".1%", "18.4%"),
        (0.008, ".3%", "0.800%"),
        (115200.0, ",.0f", "115,200"),
        (-0.1, "+.2f", "-0.10"),
        (0.5, "+.2f", "+0.50"),
        (1e-05, ".4g", "1e-05"),
        (123456.0, ".4g", "1.235e+05"),
        (9.0, ".4g", "9"),
        (0.33662, ".4g", "0.3366"),
        (float("inf"), ".1f", "inf"),
        (2.5, ".0f", "2"),
        (20.0, "g", "20"),
    ],
)
def test_python_format_specs_are_reproduced(value, spec, want):
    assert format(value, spec) == want  # the expectation is Python's own
    out = subprocess.run(
        [
            NODE,
            "-e",
            f"process.stdout.write(require({json.dumps(str(MATH_JS))})"
            f".pyFormat({json.dumps(value) if math.isfinite(value) else 'Infinity'}, {json.dumps(spec)}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == want


def test_dashboards_carry_what_the_static_page_needs():
    """Each dashboard names its JS port, tags its sliders by keyword, and writes its spec and full-precision
    values into the readout, which is all the static page's rlvr-live.js reads."""
    import html as html_lib
    import re

    for make in widgets.ALL:
        d = make()
        assert f"rlvr-kind-{d.kind}" in d._dom_classes and "rlvr-dashboard" in d._dom_classes
        for name, control in d.controls.items():
            assert {"rlvr-ctl", f"rlvr-ctl-{name}"} <= set(control._dom_classes), name
            assert ("rlvr-log" in control._dom_classes) == isinstance(control, w.FloatLogSlider), name
        spec = json.loads(html_lib.unescape(re.search(r"data-rlvr='([^']*)'", d.readout.value).group(1)))
        assert spec["kind"] == d.kind and spec["fixed"] == d.fixed and spec["formats"] == d._formats
        raws = re.findall(r"data-value='([^']*)'", d.readout.value)
        assert len(raws) == len(d.numbers)
        for raw, value in zip(raws, d.numbers.values()):
            if isinstance(value, float) and math.isfinite(value):
                assert float(raw) == value

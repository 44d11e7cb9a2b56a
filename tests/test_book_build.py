"""The course book builds with ``jupyter-book build . -W -n --keep-going``: every chapter is executed,
no warning is raised, every page of the table of contents exists with its outputs, the widget state is
saved into the page, and the widget JavaScript is served from the site itself."""

import re

import nbformat
import pytest

from rlvr_lab.colab import install_cell

from book_site import ROOT, build_book, sent_bytes, shared_dir, source_of, toc_files

pytestmark = [pytest.mark.slow, pytest.mark.book]


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    # Shared by this run's xdist workers (and only by them), so the book is built once per run.
    return build_book(shared_dir(tmp_path_factory))


def _page(book, doc):
    return book.html / f"{doc}.html"


def test_book_builds_without_warnings(book):
    tail = "\n".join(book.log.splitlines()[-60:])
    assert book.returncode == 0, f"jupyter-book build failed:\n{tail}"
    sphinx_warnings = [
        ln
        for ln in book.log.splitlines()
        if re.search(r"(WARNING|ERROR):", ln) and "Kernel is running over TCP" not in ln
    ]
    assert not sphinx_warnings, "\n".join(sphinx_warnings[:20])
    assert "build succeeded" in book.log
    print(f"book built in {book.seconds:.0f} s")


def test_every_toc_page_exists_and_notebooks_have_executed_outputs(book):
    for doc in toc_files():
        page = _page(book, doc)
        assert page.exists(), f"{doc} was not built"
        html = page.read_text()
        src = source_of(doc)
        if src.suffix != ".ipynb":
            continue
        nb = nbformat.read(src, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
            f"{src.name} is committed with outputs; the build must produce them"
        )
        visible_code = [
            c
            for c in nb.cells
            if c.cell_type == "code"
            and "remove-cell" not in c.metadata.get("tags", [])
            and "remove-output" not in c.metadata.get("tags", [])
        ]
        if visible_code:
            assert html.count('class="cell_output') >= 1, f"{doc} shows no executed output"
        assert "Traceback (most recent call last)" not in html, f"{doc} shows a traceback"
        if _is_student_exercise(nb):
            continue  # its unanswered check cells show their hint, CheckFailed: ... (rlvr_lab.checks)
        assert 'class="output traceback' not in html and "output error" not in html, f"{doc} shows an error"


def _is_student_exercise(nb) -> bool:
    return nb.metadata.get("rlvr_lab", {}).get("version") == "student"


def _chapters():
    """The chapters and the landing and instructors' pages (the book's own prose pages)."""
    return [doc for doc in toc_files() if doc.startswith("book/")]


def _pages():
    """Every page of the site: the chapters, the labs and the student exercises. The equation and figure
    tests below hold all of them (a lab is a page a reader sees like any other)."""
    return toc_files()


def test_chapter_notebooks_start_with_a_colab_only_install_cell():
    for doc in toc_files():
        src = source_of(doc)
        if src.suffix != ".ipynb":
            continue
        nb = nbformat.read(src, as_version=4)
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert first_code.source == install_cell() and "import google.colab" in first_code.source, (
            f"{src.name}: the first code cell must be the Colab-only install cell of rlvr_lab.colab"
        )


def test_widget_state_is_saved_and_widget_js_is_local(book):
    pages_with_widgets = 0
    for doc in toc_files():
        html = _page(book, doc).read_text()
        views = html.count("application/vnd.jupyter.widget-view+json")
        if not views:
            continue
        pages_with_widgets += 1
        assert "application/vnd.jupyter.widget-state+json" in html, f"{doc}: widget views without saved state"
        scripts = re.findall(r'<script[^>]+src="([^"]+)"', html)
        assert any("_static/widgets-js/embed-amd.js" in s for s in scripts), f"{doc}: widget JS not local"
        assert any("_static/widgets-js/require.min.js" in s for s in scripts), f"{doc}: require.js not local"
        assert not any(re.match(r"https?://", s) for s in scripts), f"{doc}: a script is loaded from a CDN"
        if doc.startswith("book/"):
            assert '"ImageModel"' in html or "ImageModel" in html, f"{doc}: the dashboard figure is not saved"
    assert pages_with_widgets >= 5
    assert (book.html / "_static" / "widgets-js" / "embed-amd.js").exists()


def test_launch_buttons_repository_button_and_bibliography(book):
    for doc in toc_files():
        if source_of(doc).suffix != ".ipynb":
            continue
        html = _page(book, doc).read_text()
        assert f"colab.research.google.com/github/rlvr-lab/rlvr-lab/blob/main/{doc}.ipynb" in html, doc
        assert 'href="https://github.com/rlvr-lab/rlvr-lab"' in html, doc
    cited = [
        doc
        for doc in toc_files()
        if 'class="reference internal" href="' in _page(book, doc).read_text()
        and "bibtex" in _page(book, doc).read_text()
    ]
    assert cited, "no page cites the bibliography"


# A cell draws a figure when it calls a figure function of rlvr_lab.figures (relations.contrast_figure(...))
# or matplotlib directly.
_DRAWS = re.compile(r"\b\w+\.\w+_figure\(|\bplt\.|\.subplots\(|\.savefig\(")


def test_every_figure_reaches_the_page(book):
    """Each cell that draws a figure has a PNG output in the executed notebook, and the page shows as many
    notebook figures as the notebook holds (pyplot under Agg would leave the output empty)."""
    executed = book.html.parent / "jupyter_execute"
    total = 0
    for doc in toc_files():
        if source_of(doc).suffix != ".ipynb":
            continue
        nb = nbformat.read(executed / f"{doc}.ipynb", as_version=4)
        pngs = 0
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            images = sum("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
            if _DRAWS.search(cell.source) and "remove-output" not in cell.metadata.get("tags", []):
                assert images >= 1, f"{doc}, cell {i} ({cell.get('id')}) draws a figure but has no image output"
            pngs += images
        shown = re.findall(r'<img[^>]+src="\.\./_images/[^"]+\.png"', _page(book, doc).read_text())
        assert len(shown) == pngs, f"{doc}: the notebook has {pngs} figure(s), the page shows {len(shown)}"
        total += pngs
    assert total >= 14, f"only {total} figures in the whole book"


def test_notebooks_validate_with_stable_cell_ids():
    """nbformat.validate passes without a warning (cell ids present) for the book, the labs and the exercises."""
    import warnings

    paths = [source_of(doc) for doc in toc_files() if source_of(doc).suffix == ".ipynb"]
    paths += sorted((ROOT / "labs").rglob("*.ipynb"))
    assert len(paths) >= 10 + 5 + 16
    for path in paths:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nb = nbformat.read(path, as_version=4)
            nbformat.validate(nb)
        ids = [c.get("id") for c in nb.cells]
        assert all(ids) and len(set(ids)) == len(ids), f"{path.name}: missing or repeated cell ids"
        assert not any(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids), (
            f"{path.name}: random cell ids (write stable ones, e.g. c00, c01, ...)"
        )


def test_exercise_generator_writes_stable_valid_ids(tmp_path):
    """The generator of the exercise notebooks writes valid notebooks with the same ids every run (the labs
    are jupytext pairs, not generated: the test above checks their committed ids)."""
    import importlib.util
    import warnings

    def load(path):
        spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    built = []
    exercises = load(ROOT / "labs" / "exercises" / "build_notebooks.py")
    first = exercises.write_all(str(tmp_path / "a"))
    second = exercises.write_all(str(tmp_path / "b"))
    assert len(first) == len(second) >= 16
    for a, b in zip(first, second):
        ids_a = [c["id"] for c in nbformat.read(a, as_version=4).cells]
        assert ids_a == [c["id"] for c in nbformat.read(b, as_version=4).cells], f"{a}: ids change between runs"
        built.append(nbformat.read(a, as_version=4))
    for nb in built:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            nbformat.validate(nb)
        ids = [c["id"] for c in nb.cells]
        assert all(ids) and len(set(ids)) == len(ids)


def test_one_citation_style_author_year(book):
    """The text cites author-year, and the bibliography is labelled the same way (not [1], [2], ...)."""
    html = _page(book, "book/10_fallacies_summary_reading").read_text()
    labels = re.findall(r'<span class="label"><span class="fn-bracket">\[</span>(?:<a[^>]*>)?([^<]+)', html)
    assert len(labels) >= 20, f"bibliography not found ({len(labels)} labels)"
    assert all(re.fullmatch(r".+, (\d{4}[a-z]?|n\.d\.)", label) for label in labels), labels[:5]
    cited = re.findall(r'class="reference internal" href="[^"]*#id\d+"><span>([^<]+)</span>', html)
    assert all(not c.strip("[]").isdigit() for c in cited), cited[:5]


# Equation numbers on the built site. The build numbers each labelled equation (span.eqno beside it, with a
# link to #equation-LABEL); the text cites it with {eq}`LABEL` (a link whose text is the number); the
# dashboards' titles wrap each number in span.rlvr-eq naming its label and hand the static panels a spec
# {"eq": {LABEL: N}}. In the widget state those strings are JSON, so quotes may come escaped (\").
_EQNO = re.compile(r'<span class="eqno">\((\d+)\)<a class="headerlink" href="#equation-([\w-]+)"')
_EQ_LINK = re.compile(r'<a class="reference internal" href="[^"]*#equation-([\w-]+)">\((\d+)\)</a>')
_EQ_SPAN = re.compile(r'<span class=\\?"rlvr-eq\\?" data-eq=\\?"([\w-]+)\\?">\((\d+)\)</span>')
_EQ_SPEC = re.compile(r"&quot;eq&quot;: \{([^}]*)\}")
_EQ_SPEC_ITEM = re.compile(r"&quot;([\w-]+)&quot;: (\d+)")
_SHOWN_NUMBER = re.compile(r"\b(?:eqs?|equations?)\.?\s*\(?\s*\d+", re.IGNORECASE)
_BASE64 = re.compile(r"[A-Za-z0-9+/=]{200,}")


def shown_equation_numbers(html: str):
    """(label, number shown) for every labelled citation on a page, and the text of unlabelled ones."""
    cited = [(label, int(n)) for label, n in _EQ_LINK.findall(html)]
    cited += [(label, int(n)) for label, n in _EQ_SPAN.findall(html)]
    for spec in _EQ_SPEC.findall(html):
        cited += [(label, int(n)) for label, n in _EQ_SPEC_ITEM.findall(spec)]
    rest = _BASE64.sub("", html)
    for pattern in (_EQNO, _EQ_LINK, _EQ_SPAN, _EQ_SPEC):
        rest = pattern.sub("", rest)
    rest = re.sub(r"<[^>]+>", " ", rest)
    loose = [rest[max(0, m.start() - 40) : m.end() + 20] for m in _SHOWN_NUMBER.finditer(rest)]
    return cited, loose


def test_every_shown_equation_number_is_the_rendered_number_of_its_label(book):
    """Numbers come from the labels (rlvr_lab.equations): the registry matches what the build rendered, every
    citation shows its label's rendered number, and no page shows a number that names no label."""
    from rlvr_lab import equations

    rendered, wrong, loose, checked = {}, [], [], 0
    pages = {doc: _page(book, doc).read_text() for doc in _pages()}
    for html in pages.values():
        for n, label in _EQNO.findall(html):
            assert label not in rendered, f"equation {label} is rendered twice"
            rendered[label] = int(n)
    assert rendered == equations.NUMBERS, "rlvr_lab.equations differs from the numbers the build gave"
    for doc, html in pages.items():
        cited, unlabelled = shown_equation_numbers(html)
        checked += len(cited)
        wrong += [
            f"{doc}: {label} shown as ({n}), rendered ({rendered.get(label)})"
            for label, n in cited
            if rendered.get(label) != n
        ]
        loose += [f"{doc}: ...{text}..." for text in unlabelled]
    assert not wrong, "\n".join(wrong)
    assert not loose, "equation numbers that name no label (cite with {eq}`label` or rlvr_lab.equations):\n" + (
        "\n".join(loose)
    )
    assert checked >= 100, f"only {checked} equation citations found on the site"
    print(f"{checked} equation citations checked against {len(rendered)} rendered equations")


# Figures (issue 25): every figure on the site (chapters and labs) is a numbered <figure> with a caption and real alt text, and
# its PNG (rlvr_lab.figures.style.png_bytes) records its smallest text and legend sizes. At 1280 px the
# narrowest output column of a chapter measures 658 px (tests/test_browser.py checks the real widths), so a
# figure up to that wide is shown at its natural size.
DESKTOP_COLUMN_PX = 658
MIN_LEGEND_PX = 11.0
_FIGURE = re.compile(r"<figure[^>]*\bid=\"([^\"]+)\"[^>]*>\s*(<img[^>]*>)\s*<figcaption>(.*?)</figcaption>", re.S)
_IMG = re.compile(r'<img[^>]+src="\.\./_images/[^"]+\.png"[^>]*>')


def _words(html: str) -> int:
    return len(re.sub(r"<[^>]+>", " ", html).split())


def test_every_figure_is_numbered_captioned_and_has_alt_text(book):
    from PIL import Image

    total = 0
    for doc in _pages():
        html = _page(book, doc).read_text()
        imgs = _IMG.findall(html)
        figures = _FIGURE.findall(html)
        assert len(figures) == len(imgs), f"{doc}: {len(imgs)} images but {len(figures)} numbered figures"
        for name, img, caption in figures:
            where = f"{doc}#{name}"
            assert re.search(r'class="caption-number">Fig\. \d+', caption), f"{where}: no figure number"
            assert _words(caption) >= 12, f"{where}: the caption is too short to say what the figure shows"
            alt = re.search(r'alt="([^"]*)"', img).group(1)
            assert _words(alt) >= 12 and not re.search(r"[0-9a-f]{16}|\.png", alt), f"{where}: alt text {alt!r}"
            src = re.search(r'src="\.\./([^"]+)"', img).group(1)
            png = Image.open(book.html / src)
            width, dpi = png.size[0], float(png.text.get("rlvr-dpi", 0))
            assert dpi, f"{where}: the PNG records no text sizes (draw it with rlvr_lab.figures.style.png_bytes)"
            scale = min(1.0, DESKTOP_COLUMN_PX / width)
            for kind in ("legend", "text"):
                pt = float(png.text[f"rlvr-min-{kind}-pt"])
                px = pt * dpi / 72 * scale
                assert px >= MIN_LEGEND_PX, f"{where}: {kind} shown at {px:.1f} px on a desktop (< {MIN_LEGEND_PX})"
            total += 1
    assert total >= 18, f"only {total} numbered figures on the site"
    print(f"{total} figures numbered, captioned and with alt text")


def test_figure_only_cells_hide_their_code():
    """A code cell whose only job is to draw a figure (its last line calls a *_figure function and it prints
    or displays nothing else) is folded behind a toggle (tag hide-input)."""
    for doc in _chapters():
        src = source_of(doc)
        if src.suffix != ".ipynb":
            continue
        for cell in nbformat.read(src, as_version=4).cells:
            if cell.cell_type != "code" or not cell.metadata.get("mystnb", {}).get("figure"):
                continue
            if not re.search(r"print\(|display\(", cell.source):
                assert "hide-input" in cell.metadata.get("tags", []), (
                    f"{src.name}, {cell.id}: show the figure, fold the code"
                )


# Page weight: what a reader's browser downloads for a page as a static host such as GitHub Pages serves it
# (HTML, scripts and style sheets gzip-compressed; PNGs and web fonts as they are): the page, its images and
# every local script and style sheet it names. Raw, a chapter page with dashboards is about 6 MB, 3.6 MB of
# it the widget bundle (embed-amd.js, already minified) and 1.2 MB MathJax; the limit holds for the bytes
# sent. tests/test_browser.py measures the same from what Chromium actually fetched (fonts and lazily loaded
# pieces included).
MAX_PAGE_BYTES = 3_000_000


def page_weight(page) -> tuple[int, int]:
    """(bytes as stored, bytes a compressing server sends) for a built page and what it links."""
    import gzip

    html = page.read_text()
    raw, sent = len(html.encode()), len(gzip.compress(html.encode(), 6))
    for ref in set(re.findall(r'(?:src|href)="([^"#?]+)', html)):
        if re.match(r"[a-z]+:", ref) or ref.endswith((".html", ".ipynb", ".py", ".md")):
            continue
        path = (page.parent / ref).resolve()
        if path.is_file():
            raw += path.stat().st_size
            sent += sent_bytes(path)
    return raw, sent


def test_every_page_weighs_at_most_3_mb(book):
    heavy = []
    for doc in toc_files():
        raw, sent = page_weight(_page(book, doc))
        print(f"{doc}: {raw / 1e6:.2f} MB stored, {sent / 1e6:.2f} MB sent")
        if sent > MAX_PAGE_BYTES:
            heavy.append(f"{doc}: {sent / 1e6:.2f} MB")
    assert not heavy, "pages over 3 MB: " + ", ".join(heavy)
    assert not (book.html / "_static" / "scripts" / "fontawesome.js").exists(), "fontawesome.js is back"
    assert "fontawesome.js" not in _page(book, "book/04_grpo").read_text()


# Labs and exercises (issue 25): the five labs and the student exercise notebooks are pages of the book,
# executed by the build (labs on their ci preset), each with a download of the executed notebook; the
# reference solutions are nowhere on the site.
def _labs_and_exercises():
    labs = sorted(p.with_suffix("").relative_to(ROOT).as_posix() for p in (ROOT / "labs").glob("lab[0-9]_*.ipynb"))
    student = sorted(
        p.with_suffix("").relative_to(ROOT).as_posix() for p in (ROOT / "labs/exercises/student").glob("*.ipynb")
    )
    return labs, student


def test_labs_and_student_exercises_are_executed_pages_with_executed_downloads(book):
    labs, student = _labs_and_exercises()
    assert len(labs) == 5 and len(student) >= 9
    assert set(labs + student) <= set(toc_files()), "a lab or exercise is missing from _toc.yml"
    for doc in labs + student:
        html = _page(book, doc).read_text()
        assert html.count('class="cell_output') >= 1, f"{doc} shows no executed output"
        download = book.html / "_sources" / f"{doc}.ipynb"
        assert download.is_file() and f"_sources/{doc}.ipynb" in html, f"{doc}: no notebook download"
        nb = nbformat.read(download, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.get("execution_count") for c in code) and any(c.get("outputs") for c in code), (
            f"{doc}: the download is not the executed notebook"
        )
        errors = [(c, o) for c in code for o in c.get("outputs", []) if o.output_type == "error"]
        if doc in labs:
            assert not errors, f"{doc}: errors {[o.ename for _, o in errors]}"
            assert "preset ci" in html, f"{doc}: not run on the ci preset"
        else:
            # The only errors are the unanswered checks' hints, in the cells tagged to raise them.
            assert errors, f"{doc}: an unanswered check cell raised nothing"
            for cell, out in errors:
                assert out.ename == "CheckFailed" and "raises-exception" in cell.metadata.get("tags", []), (
                    f"{doc}, {cell.id}: {out.ename}: {out.evalue[:200]}"
                )
    # Chapter downloads are executed too.
    nb = nbformat.read(book.html / "_sources" / "book" / "04_grpo.ipynb", as_version=4)
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "chapter download without outputs"


def test_no_solution_notebook_is_on_the_site(book):
    from rlvr_lab.exercises import EXERCISES

    leaked = [p for p in book.html.rglob("*") if "solutions" in p.parts or p.name == "exercise_key.py"]
    assert not leaked, f"solutions on the site: {leaked[:5]}"
    for path in book.html.rglob("*.ipynb"):
        meta = nbformat.read(path, as_version=4).metadata.get("rlvr_lab", {})
        assert meta.get("version") != "solution", f"{path}: a solution notebook"
    pages = "".join(p.read_text(errors="replace") for p in book.html.rglob("*.html"))
    # A solution notebook is marked *reference solution* under its title and holds the rubrics.
    assert "<em>reference solution</em>" not in pages and "Rubric (part" not in pages, "solution text on the site"
    assert len(EXERCISES) >= 9

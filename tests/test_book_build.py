"""The course book builds with ``jupyter-book build . -W -n --keep-going``: every chapter is executed,
no warning is raised, every page of the table of contents exists with its outputs, the widget state is
saved into the page, and the widget JavaScript is served from the site itself."""

import re

import nbformat
import pytest

from book_site import ROOT, build_book, shared_dir, source_of, toc_files

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
    sphinx_warnings = [ln for ln in book.log.splitlines() if re.search(r"(WARNING|ERROR):", ln)
                       and "Kernel is running over TCP" not in ln]
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
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
            f"{src.name} is committed with outputs; the build must produce them"
        visible_code = [c for c in nb.cells if c.cell_type == "code"
                        and "remove-cell" not in c.metadata.get("tags", [])
                        and "remove-output" not in c.metadata.get("tags", [])]
        if visible_code:
            assert html.count('class="cell_output') >= 1, f"{doc} shows no executed output"
        assert "Traceback (most recent call last)" not in html, f"{doc} shows a traceback"
        assert 'class="output traceback' not in html and "output error" not in html, f"{doc} shows an error"


def test_chapter_notebooks_start_with_a_colab_only_install_cell():
    for doc in toc_files():
        src = source_of(doc)
        if src.suffix != ".ipynb":
            continue
        nb = nbformat.read(src, as_version=4)
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert '"google.colab" in sys.modules' in first_code.source and "%pip install" in first_code.source, \
            f"{src.name}: the first code cell must install rlvr_lab only in Colab"


def test_widget_state_is_saved_and_widget_js_is_local(book):
    pages_with_widgets = 0
    for doc in toc_files():
        html = _page(book, doc).read_text()
        views = html.count('application/vnd.jupyter.widget-view+json')
        if not views:
            continue
        pages_with_widgets += 1
        assert 'application/vnd.jupyter.widget-state+json' in html, f"{doc}: widget views without saved state"
        scripts = re.findall(r'<script[^>]+src="([^"]+)"', html)
        assert any("_static/widgets-js/embed-amd.js" in s for s in scripts), f"{doc}: widget JS not local"
        assert any("_static/widgets-js/require.min.js" in s for s in scripts), f"{doc}: require.js not local"
        assert not any(re.match(r"https?://", s) for s in scripts), f"{doc}: a script is loaded from a CDN"
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
    cited = [doc for doc in toc_files() if 'class="reference internal" href="' in _page(book, doc).read_text()
             and "bibtex" in _page(book, doc).read_text()]
    assert cited, "no page cites the bibliography"

"""The book's figures and dashboards; import the module you need (``from rlvr_lab.figures import fleet``).

- :mod:`~rlvr_lab.figures.style`: the one palette, :class:`BookFigure` (shows itself in Jupyter), PNG bytes.
- :mod:`~rlvr_lab.figures.relations`: one figure per closed-form relation (17.2-17.8).
- :mod:`~rlvr_lab.figures.fleet`: the rollout fleet's relations (17.9, eqs 6-9).
- :mod:`~rlvr_lab.figures.chapter`: what a chapter measured, and its key numbers side by side.
- :mod:`~rlvr_lab.figures.experiments`: the stored results of the claim experiments (:mod:`rlvr_lab.claims`).
- :mod:`~rlvr_lab.figures.dashboard` and :mod:`~rlvr_lab.figures.widgets`: sliders, readout and figure
  (ipywidgets), and the book's explorers built from them.
"""

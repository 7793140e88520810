"""docs/python.md's walk-through, run as written (doctest) against the live server: each
example's output is what the page shows."""

from __future__ import annotations

import doctest
import os

import pytest

from .conftest import REPO, Served


def test_the_python_page_runs_as_written(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pandas", reason="the page's tables need pandas: pip install './clients/python[dev]'")
    monkeypatch.setenv("RUNLOG_URL", served.socket)
    monkeypatch.delenv("RUNLOG_TOKEN", raising=False)
    # The page's connecting example names a server that is not there: it is shown, not run.
    results = doctest.testfile(
        os.fspath(REPO / "docs" / "python.md"),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
    )
    assert results.attempted >= 30
    assert results.failed == 0, "docs/python.md: an example's output differs (doctest printed which)"

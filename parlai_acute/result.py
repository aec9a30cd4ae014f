"""The one shape of every protocol's analysis result, and the one set of names it is written under.

Five protocols grew five result classes with different members (``meta()`` on two, ``summary()``
on one, as a dict) and different file names for the same kind of output, so code over several
protocols branched on the protocol's name. Now every result class derives from :class:`Result`
and has the same four members:

* ``summary()``: the protocol's reported estimates, one row per (group, comparison, measure) with
  its headline interval, or in words why there is none -- the protocol's
  ``estimands.headline(result)`` (columns :data:`parlai_acute.stats.estimand.HEADLINE`);
* ``meta()``: what made the numbers -- the protocol, its configuration, seed, package version, the
  definitions of its estimands, and what the protocol records besides (ACUTE: the per-worker cap);
* ``tables()``: every table the outputs write, keyed by file stem (``summary`` first);
* ``warnings()``: what a reader must know before trusting a number, one sentence each.

:func:`write_result` writes any of them the same way: each table as ``STEM.csv`` (so
``summary.csv`` is the estimands table everywhere), ``results.json`` (meta, estimand definitions,
summary rows and the protocol's own statistics), ``report.html`` and ``run.json``.

A result finds its protocol's estimands module by name through :mod:`parlai_acute.registry`, as
every other surface does: that module reads the analysis (its exclusions and configuration), so
the analysis must not import it.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, ClassVar

import pandas as pd

import parlai_acute
from parlai_acute.files import output_dir, table_records, write_csv, write_json
from parlai_acute.registry import protocol as lookup
from parlai_acute.stats.estimand import Estimand, describe

__all__ = ["Result", "write_result", "MEMBERS"]

#: the members every protocol's result has (``tests/test_result_shape.py`` holds all five to them)
MEMBERS = ("summary", "meta", "tables", "warnings")


class Result:
    """The shared members of a protocol's result (a dataclass with a ``config``). A subclass names
    its ``protocol`` (the registry name) and gives :meth:`own_tables`, and where it has them
    :meth:`provenance` and :meth:`warnings`."""

    protocol: ClassVar[str] = ""

    def estimands_module(self):
        return lookup(self.protocol).estimands_module()

    def estimands(self) -> list[Estimand]:
        """The definitions of what the protocol reports (its ``ESTIMANDS``)."""
        return list(self.estimands_module().ESTIMANDS.values())

    def summary(self) -> pd.DataFrame:
        """The reported estimates with their headline intervals (the estimands table)."""
        return self.estimands_module().headline(self)

    def meta(self) -> dict:
        """Provenance: every JSON output and the report's configuration block carry it."""
        config = self.config
        settings = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config)
        return {"analysis": self.protocol, "config": settings, "seed": settings.get("seed"),
                "parlai_acute_version": parlai_acute.__version__, **self.provenance(),
                "estimands": describe(self.estimands_module().ESTIMANDS)}

    def provenance(self) -> dict:
        """What the protocol records beside its configuration (none by default)."""
        return {}

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table the outputs write, by file stem: the summary, then the protocol's own."""
        return {"summary": self.summary(), **self.own_tables()}

    def own_tables(self) -> dict[str, pd.DataFrame]:
        raise NotImplementedError(f"{type(self).__name__} must list its tables")

    def warnings(self) -> list[str]:
        """One sentence per thing a reader must know before trusting a number (none by default)."""
        return []


def write_result(result: Result, outdir: str | Path, *, report: Callable | None = None, results: dict | None = None,
                 files: dict | None = None, writers: dict | None = None, run: dict | None = None) -> dict[str, Path]:
    """Write ``result`` into ``outdir``, all or nothing (:func:`parlai_acute.files.output_dir`): every
    table of ``result.tables()`` as ``STEM.csv`` (``writers``: stem -> ``(path, table)`` writer of a
    table with its own file format), the JSON ``files`` (name -> data), ``results.json`` (``meta``,
    ``estimands``, the ``summary`` rows and the protocol's ``results``), the report (``report``:
    ``outdir -> {name: path}``, None for no report) and ``run.json`` last (meta, every output, and
    ``run``). Returns {file name: path}."""
    paths: dict[str, Path] = {}
    with output_dir(outdir) as out:
        meta = result.meta()
        tables = result.tables()
        for stem, table in tables.items():
            path = out / f"{stem}.csv"
            (writers or {}).get(stem, write_csv)(path, table)
            paths[path.name] = path
        for name, data in (files or {}).items():
            write_json(out / name, data)
            paths[name] = out / name
        write_json(out / "results.json", {"meta": meta, "estimands": meta["estimands"],
                                          "summary": table_records(tables["summary"]), **(results or {})})
        paths["results.json"] = out / "results.json"
        if report is not None:
            paths.update(report(out))
        paths["run.json"] = out / "run.json"
        write_json(paths["run.json"], {**meta, "outputs": sorted(paths), **(run or {})})
    return paths

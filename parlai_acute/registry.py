"""The protocols, each in one entry: where its table, estimands, analysis and live task live.

Adding a protocol is one package (``parlai_acute/<name>/``), its live task
(``parlai_acute/mephisto_tasks/<name>/``) and one entry here. Entries name modules rather than
import them, so that ``parlai-acute --help`` stays fast and reading a table never imports
Mephisto; ``tests/test_registry.py`` resolves every reference of every entry and checks what it
finds (a callable, a dataclass, a column list), so a broken entry fails the suite, not a user.

Every surface that reports a protocol's numbers goes through :meth:`Protocol.estimands`: the
protocol's one definition of what it measures (:mod:`parlai_acute.stats.estimand`).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from parlai_acute.errors import UserError

__all__ = ["Protocol", "PROTOCOLS", "ALIASES", "protocol", "resolve"]


def resolve(ref: str):
    """``"module:attribute"`` -> the attribute; ``"module"`` -> the module."""
    module, _, name = ref.partition(":")
    found = importlib.import_module(module)
    return getattr(found, name) if name else found


@dataclass(frozen=True)
class Protocol:
    """One protocol. ``name`` is the CLI name; ``package`` the analysis package (its name is the CLI
    name with "-" as "_"). The table module defines ``COLUMNS`` and ``REQUIRED`` and the functions
    named here; ``task_records`` read the rows a Mephisto run stored, without the blueprint."""

    name: str
    package: str
    row: str                      # what one row of the table is, in words
    table: str                    # module of the table: COLUMNS, REQUIRED and the three functions below
    from_records: str             # (records or DataFrame, **checks) -> validated table
    read: str                     # (path, **checks) -> validated table
    write: str                    # (path, table) -> None
    config: str                   # "Config" class of the analysis, in the analysis module
    analysis: str = "analysis"    # module (in the package) with analyze(table, config)
    outputs: str = "outputs"      # module (in the package) with write_outputs(result, outdir, report=)
    estimands: str | None = None  # module (in the package) defining what the protocol measures
    task_records: tuple = field(default_factory=tuple)  # "module:function"(db, task_name) -> records
    # review (parlai_acute.review): the live task's blueprint type, "module:function"(db, task_name) -> the
    # stored units (or (units, settings)), and the package's module whose evidence(units, **settings) gives
    # the evidence rows; None: the protocol's work is reviewed with the task that collects it
    blueprint_type: str | None = None
    review_units: str | None = None
    review: str = "review"
    judge: str | None = None      # module (in the package) of the judge adapter and its ``agreement`` with people

    def ref(self, module: str, attr: str = "") -> str:
        return f"{self.package}.{module}" + (f":{attr}" if attr else "")

    def get(self, what: str):
        """The object behind one field: ``columns``, ``required``, ``from_records``, ``read``,
        ``write``, ``config``, ``analyze``, ``write_outputs``, and for a protocol with a judge
        ``agreement`` (judge vs people)."""
        refs = {"columns": self.ref(self.table, "COLUMNS"), "required": self.ref(self.table, "REQUIRED"),
                "from_records": self.ref(self.table, self.from_records), "read": self.ref(self.table, self.read),
                "write": self.ref(self.table, self.write), "config": self.ref(self.analysis, self.config),
                "analyze": self.ref(self.analysis, "analyze"), "write_outputs": self.ref(self.outputs, "write_outputs")}
        if self.judge:
            refs["agreement"] = self.ref(self.judge, "agreement")
        return resolve(refs[what])

    def estimands_module(self, *needs: str):
        """The module that defines what the protocol measures (``ESTIMANDS`` and ``headline`` in every
        protocol; ``observe`` and ``estimates`` where the estimates come cheaply from the table, item by
        item); every surface asks it rather than computing a number of its own. ``needs``: the
        functions the caller uses; a protocol without them is a one-line error, not an AttributeError."""
        if self.estimands is None:
            raise UserError(f"the {self.name} protocol defines no estimands")
        module = resolve(self.ref(self.estimands))
        missing = [name for name in needs if not hasattr(module, name)]
        if missing:
            watched = ", ".join(p.name for p in PROTOCOLS.values() if p.estimands and
                                all(hasattr(resolve(p.ref(p.estimands)), n) for n in needs))
            raise UserError(f"the {self.name} protocol's estimands are not read row by row from its table "
                            f"({', '.join(missing)} is defined for {watched} only); its analysis reports them all: "
                            f"api.analyze({self.name!r}, table).summary()")
        return module


PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    Protocol("acute", "parlai_acute.acute", "judgment", "judgments", "judgments_table", "read_judgments",
             "write_judgments", "AnalysisConfig", outputs="analysis", estimands="estimands",
             task_records=("parlai_acute.mephisto_tasks.acute.store:judgment_records",),
             judge="judge", blueprint_type="parlai_acute_eval", review_units="parlai_acute.mephisto_tasks.acute.store:review_units"),
    Protocol("per-turn", "parlai_acute.per_turn", "turn row", "turns", "turns_table", "read_turns", "write_turns",
             "AnalysisConfig", estimands="estimands", judge="judge",
             task_records=("parlai_acute.mephisto_tasks.per_turn.store:turns_for_task",),
             blueprint_type="parlai_acute_per_turn",
             review_units="parlai_acute.mephisto_tasks.per_turn.store:unit_data_for_task"),
    # static labelling runs, and interactive SSA inside per-turn runs (label_mode=ssa)
    Protocol("ssa", "parlai_acute.ssa", "label", "labels", "labels_table", "read_labels", "write_labels", "SSAConfig",
             estimands="estimands", judge="judge",
             task_records=("parlai_acute.mephisto_tasks.ssa.store:labels_for_task",
                           "parlai_acute.mephisto_tasks.per_turn.store:labels_for_task"),
             blueprint_type="parlai_acute_ssa_label",
             review_units="parlai_acute.mephisto_tasks.ssa.store:unit_data_for_task"),
    # the ConvAI2 survey at the end of per-turn chats (survey=convai2)
    Protocol("convai2", "parlai_acute.convai2", "rating", "ratings", "ratings_table", "read_ratings", "write_ratings",
             "ConvAI2Config", estimands="estimands",
             task_records=("parlai_acute.mephisto_tasks.per_turn.store:ratings_for_task",)),
    Protocol("multiref", "parlai_acute.multiref", "collected reply", "references", "references_table",
             "read_references", "write_references", "MultirefConfig", estimands="estimands",
             task_records=("parlai_acute.mephisto_tasks.multiref.store:references_for_task",),
             blueprint_type="parlai_acute_multiref",
             review_units="parlai_acute.mephisto_tasks.multiref.store:unit_data_for_task"),
)}
#: other spellings users type for a protocol
ALIASES = {"perturn": "per-turn", "per_turn": "per-turn", "acute-eval": "acute", "acute_eval": "acute"}


def protocol(name: str) -> Protocol:
    """The protocol called ``name`` (``acute``, ``per-turn``, ``ssa``, ``convai2``, ``multiref``)."""
    found = PROTOCOLS.get(ALIASES.get(name, name))
    if found is None:
        raise UserError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}")
    return found

"""Data flows one way (task -> stored data -> tidy table -> statistics -> report): the protocols'
definitions (questions, items, onboarding, design rules), the tidy tables, the statistics, the
analyses, their outputs and the reports import without Mephisto or ParlAI, and none of their code
(nor code it imports from this package, at the top or inside a function) reaches for either; and
the package's import graph has no circles."""
import ast
import importlib.util
import pkgutil
import subprocess
import sys

from pathlib import Path

import parlai_acute
import parlai_acute.report
import parlai_acute.stats

#: A protocol package's modules that drive models or tasks, so may reach ParlAI or Mephisto (with why);
#: every other module of a protocol package is a definition, table, analysis, output or report.
DRIVERS = {
    "parlai_acute.acute.fast": "runs self-chat and a simulated ACUTE-Eval task end to end",
    "parlai_acute.acute.pairings": "reads ParlAI self-chat logs with ParlAI's own reply normaliser",
    "parlai_acute.acute.pairings_file": "builds pairings from those logs",
    "parlai_acute.ssa.generate": "runs models on ParlAI's static contexts",
    "parlai_acute.acute.judge": "a model judges a pairings file, read with acute.pairings (ParlAI's reply normaliser)",
}
PROTOCOL_PACKAGES = ("acute", "per_turn", "ssa", "convai2", "multiref")
DEFINITIONS = ["parlai_acute.acute.questions", "parlai_acute.per_turn.onboarding", "parlai_acute.per_turn.design",
               "parlai_acute.ssa.items", "parlai_acute.ssa.questions", "parlai_acute.convai2.questions",
               "parlai_acute.multiref.contexts"]
TIDY_AND_STATISTICS = [
    *DEFINITIONS, "parlai_acute.table_files", "parlai_acute.files", "parlai_acute.jsonl", "parlai_acute.api",
    "parlai_acute.acute.judgments", "parlai_acute.acute.analysis", "parlai_acute.acute.report",
    "parlai_acute.acute.summary", "parlai_acute.acute.simulate", "parlai_acute.acute.power",
    "parlai_acute.per_turn.turns", "parlai_acute.per_turn.analysis", "parlai_acute.per_turn.report",
    "parlai_acute.per_turn.outputs", "parlai_acute.per_turn.simulate", "parlai_acute.per_turn.power",
    "parlai_acute.ssa.labels", "parlai_acute.ssa.analysis", "parlai_acute.ssa.report", "parlai_acute.ssa.outputs",
    "parlai_acute.ssa.simulate", "parlai_acute.ssa.power", "parlai_acute.per_turn.judge", "parlai_acute.ssa.judge",
    "parlai_acute.convai2.ratings", "parlai_acute.convai2.analysis", "parlai_acute.convai2.report",
    "parlai_acute.convai2.outputs", "parlai_acute.convai2.simulate", "parlai_acute.multiref.analysis",
    "parlai_acute.multiref.references", "parlai_acute.multiref.outputs", "parlai_acute.multiref.report",
    "parlai_acute.monitoring.status", "parlai_acute.monitoring.stopping", "parlai_acute.registry",
    "parlai_acute.acute.estimands", "parlai_acute.per_turn.estimands", "parlai_acute.ssa.estimands",
    "parlai_acute.convai2.estimands", "parlai_acute.multiref.estimands", "parlai_acute.result",
    "parlai_acute.acute.imports",
    "parlai_acute.acute.replies",
    "parlai_acute.judges.ppi", "parlai_acute.monitoring.report", "parlai_acute.judges.ppi_report",
    "parlai_acute.review.evidence", "parlai_acute.review.messages",
    "parlai_acute.review.rules", "parlai_acute.review.plan", "parlai_acute.acute.review", "parlai_acute.per_turn.review",
    "parlai_acute.ssa.review", "parlai_acute.multiref.review", "parlai_acute.release.pseudonyms",
    "parlai_acute.release.pii", "parlai_acute.release.datasheet",
    *(f"parlai_acute.stats.{m.name}" for m in pkgutil.iter_modules(parlai_acute.stats.__path__)),
    *(f"parlai_acute.report.{m.name}" for m in pkgutil.iter_modules(parlai_acute.report.__path__)),
]
CHECK = (
    "import importlib, sys\n"
    "for name in sys.argv[1:]:\n"
    "    importlib.import_module(name)\n"
    "    found = sorted(m for m in sys.modules if m.split('.')[0] in ('mephisto', 'parlai'))\n"
    "    if found:\n"
    "        print(name, 'imported', found[0]); sys.exit(1)\n"
    "print('ok', len(sys.argv) - 1)\n"
)


def imports_mephisto(*modules: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHECK, *modules], capture_output=True, text=True, timeout=300)


def test_tidy_tables_statistics_and_reports_never_import_mephisto():
    assert len(TIDY_AND_STATISTICS) > 10  # the packages were found
    done = imports_mephisto(*TIDY_AND_STATISTICS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"ok {len(TIDY_AND_STATISTICS)}"


def protocol_modules() -> list[str]:
    """Every module of the protocol packages but their ``cli`` subpackages: those are the command line
    (like ``parlai_acute.scripts``), which launches tasks and runs models by design."""
    names = []
    for package in PROTOCOL_PACKAGES:
        path = importlib.util.find_spec(f"parlai_acute.{package}").submodule_search_locations
        names += [m.name for m in pkgutil.walk_packages(path, f"parlai_acute.{package}.")
                  if not m.name.startswith(f"parlai_acute.{package}.cli")]
    return names


def test_every_protocol_module_is_checked_or_named_as_a_driver():
    """A new module in a protocol package is a definition, table, analysis, output or report (so
    checked here) unless it is named in DRIVERS with the reason it may reach ParlAI or Mephisto."""
    modules = protocol_modules()
    assert set(DEFINITIONS) <= set(modules) and set(DRIVERS) <= set(modules)
    unchecked = sorted(set(modules) - set(TIDY_AND_STATISTICS) - set(DRIVERS))
    assert unchecked == [], f"add these to TIDY_AND_STATISTICS (or DRIVERS, with why): {unchecked}"


def test_the_check_sees_a_mephisto_import():
    done = imports_mephisto("parlai_acute.mephisto_tasks.acute.blueprint")
    assert done.returncode == 1 and "imported mephisto" in done.stdout, done.stdout + done.stderr


def imported_names(module: str) -> set[str]:
    """Every module ``module``'s source imports, wherever the import statement is."""
    spec = importlib.util.find_spec(module)
    tree = ast.parse(open(spec.origin, encoding="utf-8").read())
    package = module if spec.submodule_search_locations else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a name imported from a module, not a module
        return False


#: ``parlai_acute.api`` opens a Mephisto run (lazily, only when given a task name): the one allowed door.
DOOR = "parlai_acute.api"


def forbidden(name: str) -> bool:
    return name.split(".")[0] in ("mephisto", "parlai") or name.startswith(("parlai_acute.mephisto_tasks",
                                                                           "parlai_acute.worlds",
                                                                           "parlai_acute.agents"))


def reaches_mephisto(start: str) -> list[str] | None:
    """The import chain from ``start`` to Mephisto, ParlAI or this package's Mephisto tasks, worlds
    and agents, following every import of parlai_acute modules (lazy ones too); None when there is none."""
    seen, stack = {start}, [[start]]
    while stack:
        chain = stack.pop()
        for name in sorted(imported_names(chain[-1])):
            if chain[-1] == DOOR and name.startswith("parlai_acute.mephisto_tasks."):
                continue
            if forbidden(name):
                return chain + [name]
            if name.startswith("parlai_acute") and name not in seen and is_module(name):
                seen.add(name)
                stack.append(chain + [name])
    return None


def test_no_code_path_of_the_statistics_reaches_mephisto():
    chains = {module: reaches_mephisto(module) for module in TIDY_AND_STATISTICS}
    assert {m: c for m, c in chains.items() if c} == {}


def test_the_code_path_check_sees_a_lazy_import():
    chain = reaches_mephisto("parlai_acute.acute.cli.analyze")  # opens the database inside load()
    assert chain and chain[-1].startswith(("mephisto", "parlai_acute.mephisto_tasks")), chain


def import_graph() -> dict[str, set[str]]:
    """module -> the parlai_acute modules it imports (at the top or inside a function)."""
    root = Path(parlai_acute.__file__).parent
    modules = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for module in modules:
        targets = set()
        for name in imported_names(module):
            while name and name not in modules:  # "pkg.mod.function" -> "pkg.mod"
                name = name.rpartition(".")[0]
            if name and name != module and name != "parlai_acute":
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_import_graph_has_no_circles():
    graph = import_graph()
    assert len(graph) > 100 and "parlai_acute.per_turn.outputs" in graph["parlai_acute.per_turn.cli.analyze"] | \
        graph["parlai_acute.api"] | {"parlai_acute.per_turn.outputs"}
    assert cycles(graph) == []


def test_the_circle_check_sees_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def is_cli(module: str) -> bool:
    return module.startswith("parlai_acute.scripts") or any(
        module == f"parlai_acute.{p}.cli" or module.startswith(f"parlai_acute.{p}.cli.") for p in PROTOCOL_PACKAGES)


def test_the_library_never_imports_a_protocol_command():
    """A protocol's ``cli`` modules sit beside its library modules; only the command line imports them."""
    graph = import_graph()
    assert "parlai_acute.acute.cli.analyze" in graph
    found = {m: sorted(t for t in targets if is_cli(t) and not t.startswith("parlai_acute.scripts"))
             for m, targets in graph.items() if not is_cli(m)}
    assert {m: t for m, t in found.items() if t} == {}


#: Command-line entry points outside ``parlai_acute/scripts``: a Mephisto task folder's ``run.py`` (run
#: with ``python -m``, as Mephisto's and ParlAI's task folders are; never imported) is ``<group> launch``.
ENTRY_POINTS = {f"parlai_acute.mephisto_tasks.{task}.run" for task in ("acute", "per_turn", "ssa", "multiref")}


def is_command_line(module: str) -> bool:
    parts = module.split(".")
    return module.startswith("parlai_acute.scripts") or "cli" in parts[1:] or module in ENTRY_POINTS


def test_the_library_never_imports_the_command_line():
    """Only the CLI (``parlai_acute/scripts``, a protocol's ``cli/``) imports ``parlai_acute.scripts``, at
    the top or inside a function: the library speaks Python (its errors name parameters, not flags)."""
    graph = import_graph()
    assert ENTRY_POINTS <= set(graph)
    reaching = {module: sorted(t for t in targets if t.startswith("parlai_acute.scripts"))
                for module, targets in graph.items() if not is_command_line(module)}
    assert {m: t for m, t in reaching.items() if t} == {}


def test_the_command_line_check_sees_an_import_of_scripts():
    graph = import_graph()
    assert any(t.startswith("parlai_acute.scripts") for t in graph["parlai_acute.mephisto_tasks.acute.run"])
    assert is_command_line("parlai_acute.acute.cli.analyze") and not is_command_line("parlai_acute.acute.analysis")

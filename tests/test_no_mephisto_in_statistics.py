"""Data flows one way (task -> stored data -> tidy table -> statistics -> report): the tidy
tables, the statistics and the reports import without Mephisto, and none of their code
(nor code it imports from this package, at the top or inside a function) reaches for it."""
import ast
import importlib.util
import pkgutil
import subprocess
import sys

import parlai_acute.report
import parlai_acute.stats

TIDY_AND_STATISTICS = [
    "parlai_acute.acute.judgments", "parlai_acute.acute.analysis", "parlai_acute.acute.report",
    "parlai_acute.perturn.turns", "parlai_acute.perturn.analysis", "parlai_acute.perturn.report",
    "parlai_acute.status",
    *(f"parlai_acute.stats.{m.name}" for m in pkgutil.iter_modules(parlai_acute.stats.__path__)),
    *(f"parlai_acute.report.{m.name}" for m in pkgutil.iter_modules(parlai_acute.report.__path__)),
]
CHECK = (
    "import importlib, sys\n"
    "for name in sys.argv[1:]:\n"
    "    importlib.import_module(name)\n"
    "    found = sorted(m for m in sys.modules if m == 'mephisto' or m.startswith('mephisto.'))\n"
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


def test_the_check_sees_a_mephisto_import():
    done = imports_mephisto("parlai_acute.mephisto_tasks.acute_eval.blueprint")
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


def reaches_mephisto(start: str) -> list[str] | None:
    """The import chain from ``start`` to Mephisto or this package's Mephisto tasks, following
    every import of parlai_acute modules (lazy ones too); None when there is none."""
    seen, stack = {start}, [[start]]
    while stack:
        chain = stack.pop()
        for name in sorted(imported_names(chain[-1])):
            if name.split(".")[0] == "mephisto" or name.startswith("parlai_acute.mephisto_tasks"):
                return chain + [name]
            if name.startswith("parlai_acute") and name not in seen and is_module(name):
                seen.add(name)
                stack.append(chain + [name])
    return None


def test_no_code_path_of_the_statistics_reaches_mephisto():
    chains = {module: reaches_mephisto(module) for module in TIDY_AND_STATISTICS}
    assert {m: c for m, c in chains.items() if c} == {}


def test_the_code_path_check_sees_a_lazy_import():
    chain = reaches_mephisto("parlai_acute.scripts.acute_analyze")  # opens the database inside load()
    assert chain and chain[-1].startswith(("mephisto", "parlai_acute.mephisto_tasks")), chain

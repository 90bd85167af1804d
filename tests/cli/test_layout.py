"""The package layout's contract: data flows one way (cli → ci → review → participant →
coordination → verify → record → turns → the top-level modules), as the package docstring
says, the vocabulary imports nothing, and no module imports itself back through a cycle,
not even through an import deferred into a function; an import from another subpackage
names its face; and a record of four fields or more is keyword-only, as few calls pass five
arguments or more by position."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):  # as rp1_duel.configuration reads TOML
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rp1_duel"
# Higher layers may import lower ones, never the reverse.
LAYERS = {
    "cli": 10,
    "ci": 9,
    "mcp_server": 8,
    "benchmark": 7,
    "review": 6,
    "participant": 5,
    "coordination": 4,
    "verify": 3,
    "record": 2,
    "turns": 1,
}
BASE = {"vocabulary", "errors", "clock", "settings", "files", "schedule", "printable", "audience", "confinement"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _run_time_nodes(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` but those of ``if TYPE_CHECKING:`` blocks (never run)."""
    found: list[ast.AST] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
            for orelse in child.orelse:
                found += [orelse, *_run_time_nodes(orelse)]
            continue
        found += [child, *_run_time_nodes(child)]
    return found


def imports(path: Path, *, top_level_only: bool = False, run_time_only: bool = False) -> set[str]:
    """The rp1_duel modules ``path`` imports (relative imports resolved); ``run_time_only``
    leaves out the imports of ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    if top_level_only:
        nodes: list[ast.AST] = list(tree.body)
    else:
        nodes = _run_time_nodes(tree) if run_time_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found |= {target} if node.module else {f"{target}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name == "rp1_duel" or name.startswith("rp1_duel.")}


def layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return max(LAYERS.values())  # rp1_duel/__init__.py: the library surface re-exports every layer
    return LAYERS.get(parts[1], 0)


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")
# Subpackages whose __init__ is a face: another package imports from the face only, and only the
# names its __all__ lists (the modules behind it stay free to move).
FACED = ("turns", "record", "verify", "coordination", "participant", "review", "benchmark", "mcp_server", "ci", "cli")


def imported_names(path: Path) -> list[tuple[str, str]]:
    """Each (module, name) ``path`` imports from rp1_duel, as ``imports`` resolves modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            found += [(target, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
    return [(target, name) for target, name in found if target.startswith("rp1_duel.")]


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_modules_import_only_their_own_layer_or_lower_ones(path: Path) -> None:
    own = module_name(path)
    for target in imports(path):
        assert layer(target) <= layer(own) or target == "rp1_duel", f"{own} imports {target}, a higher layer"
        if layer(own) == 0 and own != "rp1_duel":
            assert target.split(".")[1] in BASE, f"{own} (a base module) imports {target}"


def test_the_vocabulary_imports_nothing_from_the_project() -> None:
    assert imports(PACKAGE / "vocabulary.py") == set()


def test_no_import_cycles_at_module_level() -> None:
    known = {module_name(p): p for p in MODULES}
    graph = {
        name: {t for t in imports(p, top_level_only=True) if t in known and t != name} for name, p in known.items()
    }
    visiting: list[str] = []
    done: set[str] = set()

    def visit(name: str) -> None:
        if name in done:
            return
        assert name not in visiting, "import cycle: " + " → ".join([*visiting[visiting.index(name) :], name])
        visiting.append(name)
        for target in graph[name]:
            visit(target)
        visiting.pop()
        done.add(name)

    for name in graph:
        visit(name)


def run_time_graph() -> dict[str, set[str]]:
    """Who imports whom when the code runs, deferred imports included: ``from . import name``
    counts as an import of the package when ``name`` is not a module of its own."""
    known = {module_name(p): p for p in MODULES}

    def owner(target: str) -> str:
        while target not in known and "." in target:
            target = target.rpartition(".")[0]
        return target

    return {name: {owner(t) for t in imports(p, run_time_only=True)} - {name} for name, p in known.items()}


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for target in graph.get(name, set()):
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            group: set[str] = set()
            while not group or name not in group:
                group.add(stack.pop())
            if len(group) > 1:
                found.append(group)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_no_module_imports_itself_back_even_through_a_deferred_import() -> None:
    """A deferred import that closes a circle only hides it: the shared names belong in a leaf
    module both sides import (the CLI's argument helpers, the providers' base types, the watch model)."""
    assert circles(run_time_graph()) == []


def test_the_circle_finder_finds_a_circle_closed_by_a_deferred_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [{"a", "b", "c"}]


def test_the_package_docstring_lists_the_layers_in_their_order() -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))) or ""
    chain = re.search(r"\((cli(?: → \w+)+)", " ".join(doc.split()))
    assert chain is not None, "the package docstring has no chain of layers (cli → …)"
    assert chain.group(1).split(" → ") == sorted(LAYERS, key=LAYERS.__getitem__, reverse=True)
    listed = re.findall(r"^- :mod:`rp1_duel\.(\w+)`", doc, re.MULTILINE)
    assert sorted(listed) == sorted(LAYERS), "every layer has its line in the package docstring"


def test_every_package_says_what_it_owns_and_may_import() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc, f"{init} has no docstring saying what it may import"


def test_every_test_and_bench_module_is_listed_for_mypy() -> None:
    """As mypy has no glob for top-level modules, the override that type-checks the bodies of
    tests/ and bench/ names each module: a new file missing from it would escape the check."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert {"tests", "bench"} <= set(mypy["files"]), f"[tool.mypy] files = {mypy['files']} skips tests/ or bench/"
    [override] = [o for o in mypy["overrides"] if o.get("check_untyped_defs")]
    listed = [override["module"]] if isinstance(override["module"], str) else override["module"]
    on_disk = {
        path.stem
        for folder in ("tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if "data" not in path.relative_to(ROOT).parts  # fixtures' own scripts, not tests
    }
    twice = sorted({name for name in listed if listed.count(name) > 1})
    missing, extra = sorted(on_disk - set(listed)), sorted(set(listed) - on_disk)
    assert not (missing or extra or twice), (
        "pyproject.toml [[tool.mypy.overrides]] (check_untyped_defs) must list every tests/*.py and bench/*.py"
        f" module once: missing {missing}, no such file {extra}, listed twice {twice}"
    )


def test_the_root_lists_exactly_its_documented_exports_and_each_resolves() -> None:
    import rp1_duel

    documented = {"PROTOCOL_VERSION", "__version__", *rp1_duel._EXPORTS}
    assert dir(rp1_duel) == sorted(documented)
    assert sorted(rp1_duel.__all__) == sorted(documented)
    for name in rp1_duel.__all__:
        assert getattr(rp1_duel, name) is not None, name
    for name, module in rp1_duel._EXPORTS.items():
        assert getattr(rp1_duel, name) is getattr(importlib.import_module(module), name), name


@pytest.mark.parametrize("path", MODULES, ids=module_name)
def test_an_import_from_another_subpackage_names_its_face(path: Path) -> None:
    own = module_name(path).split(".")
    for target, name in imported_names(path):
        parts = target.split(".")
        if parts[1] not in FACED or own[1:2] == parts[1:2]:
            continue
        assert len(parts) == 2, f"{'.'.join(own)} imports {target}: import {name} from rp1_duel.{parts[1]}, the face"
        face = importlib.import_module(target)
        assert name in face.__all__, f"{'.'.join(own)} imports {name} from {target}, whose __all__ does not name it"


@pytest.mark.parametrize("subpackage", FACED)
def test_a_face_loads_every_name_it_lists_and_lists_every_name_it_loads(subpackage: str) -> None:
    face = importlib.import_module(f"rp1_duel.{subpackage}")
    exports = getattr(face, "_EXPORTS", {})  # the CLI's face defines its one name itself
    defined = {name for name, value in vars(face).items() if getattr(value, "__module__", None) == face.__name__}
    submodules = sorted(set(face.__all__) - set(exports) - defined)  # modules named whole (record.artifact)
    assert all((PACKAGE / subpackage / f"{name}.py").is_file() for name in submodules), submodules
    for name in exports:
        assert getattr(face, name) is getattr(importlib.import_module(f"{face.__name__}{face._EXPORTS[name]}"), name)


# Builders of a command line taking ``*parts``: their arguments are the command's words.
COMMAND_BUILDERS = frozenset({"_git", "tools_command"})
MOST_CALLS_OF_FIVE_POSITIONAL_ARGUMENTS = 10


def _dataclass_decorator(node: ast.ClassDef) -> ast.expr | None:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Name) and target.id == "dataclass") or (
            isinstance(target, ast.Attribute) and target.attr == "dataclass"
        ):
            return decorator
    return None


def _instance_fields(node: ast.ClassDef) -> list[str]:
    """The names a record's own annotated fields give its constructor (``ClassVar`` ones are not fields)."""
    return [
        statement.target.id
        for statement in node.body
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and not re.match(r"(typing\.)?ClassVar\b", ast.unparse(statement.annotation))
    ]


def _is_keyword_only(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and any(
        keyword.arg == "kw_only" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        for keyword in decorator.keywords
    )


def positional_records() -> list[str]:
    """Every dataclass of four or more fields a caller may build positionally, as module.Class."""
    found: list[str] = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or (decorator := _dataclass_decorator(node)) is None:
                continue
            if len(_instance_fields(node)) >= 4 and not _is_keyword_only(decorator):
                found.append(f"{module_name(path)}.{node.name}")
    return sorted(found)


def test_records_of_four_fields_or_more_are_keyword_only() -> None:
    """A record of four fields or more is built by naming them (issue 36): ``Alert(kind=…, seat=…)``
    stays right when a field is added or two of one type swap places; ``Alert(a, b, c, d)`` does not."""
    positional = positional_records()
    assert not positional, f"records of four fields or more must be @dataclass(kw_only=True): {positional}"


def _callee(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def calls_of_five_positional_arguments() -> list[str]:
    """Each call in the package passing five or more positional arguments, as path:line callee;
    but the command builders'."""
    found: list[str] = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or _callee(node) in COMMAND_BUILDERS:
                continue
            if sum(not isinstance(argument, ast.Starred) for argument in node.args) >= 5:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node.func)}")
    return sorted(found)


def test_few_calls_pass_five_positional_arguments() -> None:
    """Five arguments or more are passed by name (issue 36): at most ten calls in the package pass
    them by position, such as a library's API that takes them so (``redirect_request``, ``add_row``)."""
    found = calls_of_five_positional_arguments()
    assert len(found) <= MOST_CALLS_OF_FIVE_POSITIONAL_ARGUMENTS, (
        f"{len(found)} calls pass five positional arguments or more (at most"
        f" {MOST_CALLS_OF_FIVE_POSITIONAL_ARGUMENTS}); pass them by name:\n" + "\n".join(found)
    )

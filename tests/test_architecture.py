"""The house rules of docs/architecture.md, checked over the source (AST, no imports).

1. Floors: no module imports from a floor above its own, lazy imports inside
   functions included (they count the same: a lazy upward import is still
   an upward dependency). The app (the CLI) sits above the rest, so its lazy imports of
   agents and train are allowed; its module level stays light.
2. One description per game: no module outside the game descriptions
   branches on a game's name (``== "bobs_hat"``, ``in ("bobs_hat", ...)``, a
   dict keyed by game names, ``HELP["oh_hell"]``, ``isinstance(cfg,
   BobsHatConfig)``); it asks the :class:`~bobshat_env.games.Game`.
3. Private names stay in their module: no ``from M import _name`` where M is
   a module of ours (a shared helper is made public where it lives: expert
   imported imitate's ``_write_checkpoint``, now
   ``agents.checkpoint.write_checkpoint``).

Each checker is first shown to catch what it forbids on a small synthetic
module, so a green run means something.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bobshat_env.games import DESCRIPTIONS, GAMES, make_game

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bobshat_env", "agents", "train", "benchmarks", "examples", "bobshat")  # every module of ours, scripts too
# The floors, bottom up, each a set of folders (docs/architecture.md). A module's floor is that of the deepest
# folder holding it: train/runtime/ sits below train/evaluate/, which sits below the rest of train/.
FLOORS = ("core", "engine", "agents", "runtime", "evaluation", "learning", "scripts", "app", "examples")
FOLDERS = {
    "bobshat_env/core": 0,
    "bobshat_env": 1,
    "agents": 2,
    "train/runtime": 3,
    "train/evaluate": 4,
    "train/bids": 4,
    "train": 5,
    "benchmarks": 6,
    "bobshat": 7,
    "examples": 8,  # users' code: the RLlib and MaskablePPO examples use the app's Gymnasium env
}
FRAMEWORKS = ("gymnasium", "pettingzoo", "torch", "ray", "tensorboard", "matplotlib", "openskill", "yaml")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def floor_of(module: str) -> int | None:
    """The floor (index into FLOORS) of a module of ours, from the deepest folder of FOLDERS holding it; None for
    anything else (stdlib, third party)."""
    held = [f for f in FOLDERS if _within(module, f.removesuffix(".py").replace("/", "."))]
    return FOLDERS[max(held, key=len)] if held else None


def _modules() -> list[tuple[str, Path]]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out.append((name, path))
    return out


def _imports(module: str, source: str, is_package: bool = False) -> list[tuple[int, str, bool]]:
    """(line, imported module, at module level) for every import statement, relative ones resolved."""
    tree = ast.parse(source)
    top_level = {id(n) for n in tree.body}
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, id(node) in top_level) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = ".".join(base[: len(base) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
                targets = [base] if node.module else [f"{base}.{a.name}" for a in node.names]
            else:
                targets = [node.module]
            out += [(node.lineno, t, id(node) in top_level) for t in targets]
    return out


def floor_violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """Imports of ``module`` from a floor above its own, and frameworks imported by the core."""
    mine = floor_of(module)
    bad = []
    for line, target, _ in _imports(module, source, is_package):
        theirs = floor_of(target)
        if theirs is not None and mine is not None and theirs > mine:
            bad.append(f"{module}:{line} ({FLOORS[mine]}) imports {target} ({FLOORS[theirs]})")
        if mine == 0 and target.split(".")[0] in FRAMEWORKS:
            bad.append(f"{module}:{line} (core) imports the framework {target}")
    return bad


def test_floor_checker_catches_upward_imports():
    assert floor_violations("bobshat_env.core.x", "def f():\n    from agents import make_agent\n")
    assert floor_violations("bobshat_env.core.x", "from ..records import Recorder\n")
    assert floor_violations("bobshat_env.core.x", "import torch\n")
    assert floor_violations("bobshat_env.vector", "from agents.arena import play_games\n")
    assert floor_violations("bobshat_env.records", "from bobshat import cli\n")
    assert floor_violations("bobshat_env.text", "from bobshat.terminal import TerminalGame\n")
    assert floor_violations("bobshat_env.records.recorder", "def f():\n    from bobshat.cli import main\n")
    # the floors inside train/: runtime below evaluation below learning
    assert floor_violations("train.runtime.pool", "from train.evaluate.statistics import clean\n")
    assert floor_violations("train.evaluate.tournament", "def f():\n    from train.exploit import x\n")
    assert floor_violations("train.bids.oracle", "from train.ppo.config import Args\n")
    assert not floor_violations("train.exploit", "from train.evaluate import x\nfrom train.runtime import y\n")
    assert floor_violations("agents.pimc", "from train.evaluate import evaluate\n")
    assert floor_violations("train.ppo", "from bobshat.cli import main\n")
    assert floor_violations("agents.registry", "from bobshat.web.session import GameSession\n")
    # what is allowed: downward, sideways, third party above the core, the CLI's lazy imports
    assert not floor_violations("bobshat_env.core.symmetry", "from . import game_module\nfrom .observe import x\n")
    assert not floor_violations("agents.features", "import torch\nfrom bobshat_env.core import game_module\n")
    assert not floor_violations("bobshat.cli", "def f():\n    from train.evaluate import cli_eval\n")
    assert not floor_violations("bobshat_env.core", "from .bobs_hat import NAME\n", is_package=True)
    assert not floor_violations("bobshat.web.session", "from agents import make_agent\nfrom ..play import x\n")


@pytest.mark.parametrize("module, path", _modules(), ids=lambda x: str(x) if isinstance(x, str) else "")
def test_no_module_imports_from_a_floor_above(module, path):
    assert floor_of(module) is not None, f"{module} has no floor: add it to floor_of and docs/architecture.md"
    assert floor_violations(module, path.read_text(), path.name == "__init__.py") == []


def private_imports(module: str, source: str, is_package: bool = False) -> list[str]:
    """``from M import _name`` (one leading underscore) in ``module``, where M is a module of ours."""
    package = module if is_package else module.rpartition(".")[0]
    bad = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        target = node.module or ""
        if node.level:
            base = package.split(".")
            base = ".".join(base[: len(base) - node.level + 1])
            target = f"{base}.{node.module}" if node.module else base
        if floor_of(target) is None:
            continue
        for alias in node.names:
            if alias.name.startswith("_") and not alias.name.startswith("__"):
                bad.append(f"{module}:{node.lineno} imports {target}.{alias.name}, a private name of another module")
    return bad


def test_private_import_checker_catches_them():
    assert private_imports("train.expert", "from train.imitate import ImitateOptions, _write_checkpoint, fit\n")
    assert private_imports("train.ppo.run", "def f():\n    from .config import _check\n")
    assert private_imports("bobshat_env.core", "from .observe import _x\n", is_package=True)
    assert not private_imports("train.expert", "from agents.checkpoint import write_checkpoint\n")
    assert not private_imports("train.x", "from numba.core import _helperlib\nfrom __future__ import annotations\n")


@pytest.mark.parametrize("module, path", _modules(), ids=lambda x: str(x) if isinstance(x, str) else "")
def test_no_module_imports_a_private_name_of_another(module, path):
    assert private_imports(module, path.read_text(), path.name == "__init__.py") == []


def test_cli_module_level_stays_light():
    """`bobshat --help` must not load torch, the agents or the trainer: the CLI imports them inside commands."""
    source = (ROOT / "bobshat" / "cli.py").read_text()
    heavy = ("agents", "train", "benchmarks", "torch", "numba", "bobshat_env.core")
    at_top = [t for _, t, top in _imports("bobshat.cli", source) if top]
    light = ("bobshat_env.core.config",)  # the games' options: NumPy only (core/__init__ loads game modules lazily)
    assert at_top and not [t for t in at_top if any(_within(t, h) for h in heavy) and t not in light]


# --------------------------------------------------------------------------
# One description per game
CONFIG_CLASSES = tuple(d.config_cls.__name__ for d in DESCRIPTIONS)


def _is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in GAMES


def _holds_name(node: ast.AST) -> bool:
    return _is_name(node) or (isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(map(_is_name, node.elts)))


def name_branches(source: str) -> list[str]:
    """Places that decide by a game's name or config class instead of asking the game."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        why = None
        if isinstance(node, ast.Compare) and any(map(_holds_name, [node.left, *node.comparators])):
            why = "compares with a game name"
        elif isinstance(node, ast.Dict) and any(k is not None and _is_name(k) for k in node.keys):
            why = "a dict keyed by game names"
        elif isinstance(node, ast.Subscript) and _is_name(node.slice):
            why = "looks up by a game name"
        elif isinstance(node, ast.MatchValue) and _is_name(node.value):
            why = "matches a game name"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
            and any(isinstance(n, ast.Name) and n.id in CONFIG_CLASSES for n in ast.walk(node.args[1]))
        ):
            why = "tests for a game's config class"
        if why:
            bad.append(f"line {node.lineno}: {why}")
    return bad


def _is_description_module(path: Path) -> bool:
    """games.py, and modules that are one game's own (named after it: core/bobs_hat.py, heuristic_oh_hell.py)."""
    return path.name == "games.py" or any(re.search(rf"(^|_){g}(_|$)", path.stem) for g in GAMES)


def test_name_checker_catches_branches():
    for snippet in (
        'if game.name == "bobs_hat": pass',
        'x = 1 if "oh_hell" != name else 2',
        'ok = name in ("bobs_hat", "oh_hell")',
        'HELP = {"bobs_hat": "...", "oh_hell": "..."}',
        'text = HELP["oh_hell"]',
        'match name:\n    case "bobs_hat":\n        pass',
        "if isinstance(cfg, (BobsHatConfig, OhHellConfig)): pass",
    ):
        assert name_branches(snippet), snippet
    allowed = (
        'def f(game="bobs_hat"):\n    """Only ``"bobs_hat"`` or ``"oh_hell"``."""\n    return make_game("oh_hell")\n'
        'NAME = "bobs_hat"\nif game.name == other.name: pass\nif isinstance(cfg, dict): pass\n'
    )
    assert name_branches(allowed) == []
    assert _is_description_module(Path("core/bobs_hat.py")) and _is_description_module(Path("heuristic_oh_hell.py"))
    assert not _is_description_module(Path("text/__init__.py")) and not _is_description_module(Path("records.py"))


def test_no_module_outside_the_descriptions_branches_on_a_game_name():
    found = {
        str(path.relative_to(ROOT)): bad
        for _, path in _modules()
        if not _is_description_module(path) and (bad := name_branches(path.read_text()))
    }
    assert found == {}, "ask the Game (bobshat_env/games.py) instead: " + repr(found)


def test_every_description_entry_point_loads():
    """Each piece a description names exists (an entry point typo would otherwise surface only when used)."""
    from bobshat_env.games import load, make_game

    for d in DESCRIPTIONS:
        game = make_game(d.name)
        for part in ("render", "play_text", "record_rules", "heuristics", "bid_report", "bid_oracle"):
            assert game.load(part) is not None, (d.name, part)
        for name, entry in d.agents:
            assert callable(load(entry)), (d.name, name)
        assert game.module.NAME == d.name and game.deck.n_cards > 0
        assert set(d.cli_options) <= set(d.config_cls.__dataclass_fields__)


# --------------------------------------------------------------------------
# Short functions everywhere
def long_functions(source: str, limit: int = 100) -> list[str]:
    """Functions (methods, nested ones) longer than ``limit`` lines, with their length."""
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > limit
    ]


def test_functions_stay_short():
    """No function over 100 lines in any module of ours (issue 27: handlers, parsers, the trainer and the
    replay one job per function). Compiled kernels are no exception today; none needs to be."""
    assert long_functions("def f():\n" + "    x = 1\n" * 100) == ["f (101 lines, line 1)"]
    assert long_functions("def f():\n" + "    x = 1\n" * 99) == []
    found = {str(path.relative_to(ROOT)): bad for _, path in _modules() if (bad := long_functions(path.read_text()))}
    assert found == {}


# --------------------------------------------------------------------------
# No probing of a game's facts with getattr / hasattr
def _game_fact_names() -> set[str]:
    """Names a game answers for itself: its core module's attributes, its State's and config's fields, and
    the StepResult's. Probing one of them with ``getattr(x, "name", default)`` or ``hasattr`` branches on
    which game it is without saying so; the Game (``game.renege_mode``, ``game.secret_bids``, ...) or
    the closing facts of the step answer instead."""
    import dataclasses

    from bobshat_env.core.tricks import StepResult

    names = {f.name for f in dataclasses.fields(StepResult)}
    for d in DESCRIPTIONS:
        module = make_game(d.name).module
        names |= {n for n in vars(module) if not n.startswith("_") and n.isupper()}
        names |= {f.name for f in dataclasses.fields(d.config_cls)}
        names |= set(getattr(module.State, "__dataclass_fields__", {})) | set(getattr(module.State, "_fields", ()))
    return names


def attribute_probes(source: str, names: set[str]) -> list[str]:
    """``getattr(x, "name", ...)`` / ``hasattr(x, "name")`` calls whose literal name is one of ``names``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in names
        ):
            found.append(f"line {node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def test_probe_checker_catches_getattr_on_a_game_fact():
    names = {"renege_mode", "hat_holder", "HAT"}
    assert attribute_probes('x = getattr(cfg, "renege_mode", False)\n', names)
    assert attribute_probes('if hasattr(state, "hat_holder"): pass\n', names)
    assert attribute_probes('p = getattr(mod, "HAT", -99)\n', names)
    assert not attribute_probes('x = getattr(self, name)\ny = getattr(obj, "other", 0)\n', names)
    assert {"renege_mode", "renege", "hat_holder", "attempt", "secret_bidding"} <= _game_fact_names()


def test_no_module_probes_a_game_fact_with_getattr():
    names = _game_fact_names()
    generic = {"bobshat_env/core/__init__.py", "bobshat_env/core/contract.py"}  # find / check any game module
    found = {
        rel: bad
        for _, path in _modules()
        if not _is_description_module(path)
        and (rel := str(path.relative_to(ROOT))) not in generic
        and (bad := attribute_probes(path.read_text(), names))
    }
    assert found == {}, "ask the Game or read the step's closing facts instead: " + repr(found)


# No import circles
CYCLE_ROOTS = PACKAGES


def _our_sources() -> dict[str, tuple[str, bool]]:
    """Every module of ours: name -> (source, is a package's ``__init__``)."""
    out = {}
    for root in CYCLE_ROOTS:
        for path in sorted((ROOT / root).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = (path.read_text(), path.name == "__init__.py")
    return out


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports, at module level or inside functions (a lazy import only
    defers a circle; the two modules still cannot be read, tested or changed apart).

    ``from a.b import c`` is an edge to ``a.b.c`` where that is a module, else to ``a.b``; ``import a.b.c``
    to the longest of ``a.b.c``, ``a.b``, ``a`` that is one. Importing ``a.b.c`` also runs the package
    ``a.b``'s ``__init__``, but that is Python's order of loading, not a dependency: a package whose
    ``__init__`` re-exports its modules would otherwise be a circle with each of them."""
    graph: dict[str, set[str]] = {name: set() for name in sources}

    def ours(name: str) -> str | None:
        while name and name not in sources:
            name = name.rpartition(".")[0]
        return name or None

    for module, (source, is_package) in sources.items():
        package = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(source)):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [ours(a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    base = ".".join([*up[: len(up) - node.level + 1], *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in sources else ours(base) for a in node.names]
            graph[module] |= {t for t in targets if t is not None and t != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: one per strongly connected group of modules (Tarjan), each shown as a
    path ``a -> b -> ... -> a`` through the group."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_path_through(graph, group) for group in groups]


def _path_through(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A circle inside ``group`` (strongly connected): from its first module, breadth-first back to it."""
    start = min(group)
    came: dict[str, str] = {}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v] & group):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return [*reversed(path), start]
            if w not in came:
                came[w] = v
                todo.append(w)
    raise AssertionError(f"{sorted(group)} is not strongly connected")


def test_cycle_checker_catches_circles():
    def cycles(**modules: str) -> list[list[str]]:
        sources = {name.replace("__", "."): (text, False) for name, text in modules.items()}
        return import_cycles(import_graph(sources))

    # a lazy import closing the circle counts; so do `from package import module` and relative imports
    found = cycles(train__a="from train.b import x\n", train__b="def f():\n    from train.a import y\n")
    assert found == [["train.a", "train.b", "train.a"]]
    assert cycles(train__a="from train import b\n", train__b="from . import a\n", train="")
    assert cycles(train__a="import train.b.c\n", train__b__c="from ..a import f\n", train__b="")
    # the old trainer's two circles, as they were: ppo <-> exploit and ppo <-> rollout_workers (lazy)
    old = cycles(
        train__ppo="def f():\n    from train.exploit import add_exploiter\n"
        "def g():\n    from train.rollout_workers import RolloutWorkers\n",
        train__exploit="from train.ppo import Args, train\n",
        train__rollout_workers="from train.ppo import Args, Rollout\n",
    )
    assert old == [["train.exploit", "train.ppo", "train.exploit"]]  # one group of three modules, shown by a path
    assert set(import_graph({"train.a": ("import train.b\n", False), "train.b": ("", False)})["train.a"]) == {"train.b"}
    # not circles: one direction only; a package's __init__ re-exporting its modules; outside modules
    assert not cycles(train__a="from train.b import x\n", train__b="import numpy\nfrom bobshat_env import y\n")
    assert not cycles(train__p="from train.p.m import f\n", train__p__m="import os\n")


# Circles left to their owners' change, each named by its modules: only ever removed from.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def test_no_import_cycles_among_our_modules():
    """No two modules of ours import each other, directly or around a circle, lazily or not (issue 27:
    train.ppo <-> train.exploit and train.ppo <-> train.rollout_workers were)."""
    found = import_cycles(import_graph(_our_sources()))
    assert [c for c in found if frozenset(c) not in KNOWN_CIRCLES] == []


def folder_of(module: str) -> str | None:
    """The deepest folder (or module) of FOLDERS holding ``module``: the unit the floors are drawn in."""
    held = [f for f in FOLDERS if _within(module, f.removesuffix(".py").replace("/", "."))]
    return max(held, key=len) if held else None


def folder_ties(graph: dict[str, set[str]]) -> list[str]:
    """Pairs of folders that import each other (either way round, any of their modules): a two-way tie."""
    edges = {(folder_of(a), folder_of(b)) for a, targets in graph.items() for b in targets}
    return sorted(f"{a} <-> {b}" for a, b in edges if a and b and a < b and (b, a) in edges)


def test_folder_tie_checker_catches_two_way_ties():
    graph = {"train.evaluate.report": {"train.bids.report"}, "train.bids.report": {"train.evaluate.plots"}}
    assert folder_ties(graph) == ["train/bids <-> train/evaluate"]
    assert folder_ties({"train.bids.report": {"train.evaluate.plots"}, "train.evaluate.plots": set()}) == []


def test_no_two_folders_import_each_other():
    """Floors keep imports pointing down; this also keeps folders on one floor (train/evaluate and train/bids)
    from leaning on each other both ways."""
    assert folder_ties(import_graph(_our_sources())) == []

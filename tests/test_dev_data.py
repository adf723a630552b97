"""The development data (``../shared/data``) is not part of the repository: a test reads it only
through the ``dev_data`` fixture (``tests/conftest.py``), which skips where it is absent, so the
suite passes on a clean clone. A static check over every test module keeps it that way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PACKAGES = ("editor", "retrieval", "serve", "training")
FIXTURE = "dev_data"
FOLDER = "shared"  # the development data's folder, beside the repository
PATH_CALLS = {"Path", "PurePath", "PosixPath", "join", "joinpath"}


def _path_with_folder(value: str) -> bool:
    """One word, a path with the folder as a component: ``../shared``, ``/x/shared/data``."""
    words = value.split()
    return (
        len(words) == 1
        and bool(re.search(rf"(^|[/\\]){FOLDER}([/\\]|$)", value))
        and ("/" in value or "\\" in value)
    )


def _is_path_to_folder(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """A string that names the development data's folder as a path: one word (``"../shared"``,
    ``"shared/data"``, an f-string part ``"/shared/data"``) with it as a component, or the bare
    folder name as a path step (``root / "shared"``, ``Path("..", "shared")``). The word alone
    elsewhere (the ``shared`` NLI alias, a config field, a dict key) is not a path."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return False
    if node.value != FOLDER:
        return _path_with_folder(node.value)
    parent = parents.get(node)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div):
        return True
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in PATH_CALLS
    return False


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _docstrings(tree: ast.AST) -> set[ast.AST]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(body[0].value)
    return found


def _paths_to_folder(tree: ast.AST) -> list[ast.AST]:
    parents, docs = _parents(tree), _docstrings(tree)
    return [n for n in ast.walk(tree) if n not in docs and _is_path_to_folder(n, parents)]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_aliases(root: Path = ROOT) -> set[tuple[str, str]]:
    """``(module, name)`` of the package's own ways to the development data: a module-level
    name set to a path into it (``training.data.cited.DATA``) or a function that returns one
    (``training.data.nli.default_data_dir``). A test that uses one reads the data without
    the fixture."""
    found = set()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text("utf-8"))
            for node in tree.body:
                if isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    if node.value is not None and _paths_to_folder(node.value):
                        for t in targets:
                            if isinstance(t, ast.Name):
                                found.add((_module_name(path, root), t.id))
                elif isinstance(node, ast.FunctionDef):
                    returns = [r for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
                    if any(_paths_to_folder(r.value) for r in returns):
                        found.add((_module_name(path, root), node.name))
    return found


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def cli_data_options() -> dict[tuple[str, ...], list[tuple[str, ...]]]:
    """For each ``purr`` command, its options whose default is in the development data (a
    default path into it, or one its help gives as ``../shared/data...``): a test that runs the
    command without them reads the data without the fixture."""
    import argparse

    from serve.cli import build_parser

    found: dict[tuple[str, ...], list[tuple[str, ...]]] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*path, name))
            elif action.option_strings:
                said = re.search(rf"\.\./{FOLDER}\b|\b{FOLDER}/data\b", action.help or "")
                if said or _path_with_folder(str(action.default)):
                    found.setdefault(path, []).append(tuple(action.option_strings))

    walk(build_parser(), ())
    return found


def _cli_words(call: ast.Call) -> list[ast.AST] | None:
    """The argument nodes of a ``purr`` command a test runs: ``run_purr(*words)`` or
    ``main([words])``; None where the words are not written out."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name == "run_purr":
        words = list(call.args)
    elif name == "main" and len(call.args) == 1 and isinstance(call.args[0], ast.List):
        words = list(call.args[0].elts)
    else:
        return None
    return None if any(isinstance(w, ast.Starred) for w in words) else words


def _cli_offence(call: ast.Call, commands: dict) -> str | None:
    words = _cli_words(call)
    if not words:
        return None
    texts = [
        w.value if isinstance(w, ast.Constant) and isinstance(w.value, str) else None for w in words
    ]
    for path, options in commands.items():
        if path and tuple(texts[: len(path)]) == path:
            given = {t.split("=")[0] for t in texts if t}
            missing = [o[-1] for o in options if not given & set(o)]
            if missing:
                return f"`purr {' '.join(path)}` without {', '.join(missing)}"
    return None


def offences(
    source: str,
    aliases: set[tuple[str, str]],
    commands: dict[tuple[str, ...], list[tuple[str, ...]]] | None = None,
    exempt: str | None = None,
) -> list[tuple[int, str]]:
    """``(line, what)`` of each way ``source`` reaches the development data other than the
    fixture: a path to its folder, a package name for it (``aliases``), a ``purr`` command
    run without the options that would point it elsewhere (``commands``). The body of the
    function named ``exempt`` (the fixture itself) may name the folder."""
    tree = ast.parse(source)
    allowed: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == exempt:
            allowed |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    found = [(n.lineno, f"the path {n.value!r}") for n in _paths_to_folder(tree)]
    names = {name: module for module, name in aliases}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (node.module, a.name) in aliases:
                    found.append((node.lineno, f"{node.module}.{a.name}"))
        elif isinstance(node, ast.Attribute) and node.attr in names:
            module = names[node.attr]
            if _dotted(node.value).split(".")[-1] == module.split(".")[-1]:
                found.append((node.lineno, f"{module}.{node.attr}"))
        elif isinstance(node, ast.Call) and commands:
            what = _cli_offence(node, commands)
            if what:
                found.append((node.lineno, what))
    return sorted((line, what) for line, what in set(found) if line not in allowed)


def test_tests_reach_the_development_data_only_through_the_dev_data_fixture():
    aliases, commands = package_aliases(), cli_data_options()
    problems = []
    for path in sorted(TESTS.rglob("*.py")):
        exempt = FIXTURE if path == TESTS / "conftest.py" else None
        for line, what in offences(path.read_text("utf-8"), aliases, commands, exempt):
            problems.append(
                f"{path.relative_to(ROOT)}:{line}: reads the development data through {what}; "
                f"take the `{FIXTURE}` fixture instead (it skips where ../{FOLDER}/data is "
                "absent, as on a clean clone), or write the rows the test needs into tmp_path"
            )
    assert not problems, "\n".join(problems)


def test_the_check_finds_the_ways_to_the_data_and_leaves_the_word_alone():
    aliases = {("training.data.cited", "DATA"), ("training.data.nli", "default_data_dir")}
    bad = """
from pathlib import Path
from training.data.cited import DATA
from training.data import nli
ROOT = Path(__file__).resolve().parents[4] / "shared" / "data"
OTHER = Path("..", "shared")
TEXT = "../shared/data/raw/wice/nst_dev.jsonl"
LATER = f"{ROOT}/shared/data"
def test_x(tmp_path):
    return nli.default_data_dir()
"""
    assert [line for line, _ in offences(bad, aliases)] == [3, 5, 6, 7, 8, 10]
    fine = '''
"""Loading the shared sets from ../shared/data, in the docstring."""
from training.data.nli_sources import expand
def test_y(dev_data, tmp_path):
    """The word in a docstring: shared/data."""
    names = expand(["scifact", "shared", "extra"])
    report = {"shared": 1}["shared"]
    rows = dev_data / "raw" / "wice"
    message = "pass --data-dir pointing at shared/data"
    return names, report, rows, message
'''
    assert offences(fine, aliases) == []
    fixture = """
def dev_data():
    return Path(__file__).resolve().parents[2] / "shared" / "data"
ELSEWHERE = Path("../shared/data")
"""
    assert [line for line, _ in offences(fixture, aliases, exempt="dev_data")] == [4]


def test_the_check_finds_commands_run_without_their_data_options():
    commands = {
        ("data", "real-claims"): [("--data",)],
        ("bench", "milvus"): [("--corpus",), ("--qrels",)],
    }
    source = """
def test_z(dev_data, tmp_path, args, parser):
    run_purr("data", "real-claims", "--out", str(tmp_path))
    main(["bench", "milvus", "--corpus", str(dev_data)])
    run_purr("data", "real-claims", "--out", str(tmp_path), "--data", str(dev_data))
    main(["bench", "milvus", "--corpus=c", "--qrels", str(dev_data)])
    run_purr("data", "make", "--out", str(tmp_path))
    run_purr(*args)
    parser.parse_args(["data", "real-claims"])
"""
    assert offences(source, set(), commands) == [
        (3, "`purr data real-claims` without --data"),
        (4, "`purr bench milvus` without --qrels"),
    ]


def test_the_package_names_for_the_data_folder_are_found(tmp_path):
    files = {
        "training/data/cited.py": 'DATA = Path(__file__).resolve().parents[3] / "shared" / "data"',
        "training/data/nli.py": (
            "def default_data_dir():\n"
            '    return Path(__file__).resolve().parents[2].parent / "shared" / "data"\n'
            'SOURCES = {"shared": ["scifact"]}'
        ),
        "serve/web/__init__.py": 'PAGES: Path = ROOT / "shared" / "data" / "web" / "pages"',
        "training/fit/prepare.py": (  # a default in a parser is not a name a test imports
            "def add_args(p):\n"
            '    p.add_argument("--data-dir", default=Path("../shared/data"))\n'
            "    return p"
        ),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text + "\n")
    assert package_aliases(tmp_path) == {
        ("training.data.cited", "DATA"),
        ("training.data.nli", "default_data_dir"),
        ("serve.web", "PAGES"),
    }

"""The architecture checks that import-linter contracts (``pyproject.toml``) cannot express.

No import cycle among the modules of the four packages, and few function-local imports, each
saying why it is not at the top of its module. Imports under ``TYPE_CHECKING`` and inside
functions count as dependencies: hiding an import does not remove the dependency.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from collections.abc import Iterator, Mapping, Set
from dataclasses import dataclass
from pathlib import Path

import grimp

PACKAGES = ("accounts", "cosmos_backend", "hisadmin", "operations", "patients", "testkit",
            "worklists")
ROOT = Path(__file__).resolve().parents[2]
# Three of them keep django-ninja, qrcode and python-barcode out of processes that never
# use them (the Celery worker: docs/performance.md, "The worker's memory").
MAX_FUNCTION_LOCAL_IMPORTS = 11
# A directive to a tool explains nothing to a reader; text after it may ("noqa: F401 - why").
_DIRECTIVE = re.compile(r"^(noqa(:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*)?|type:\s*ignore(\[[^]]*])?"
                        r"|pragma:\s*no\s+(cover|branch)|fmt:\s*(on|off|skip))", re.IGNORECASE)


# --------------------------------------------------------------------------- import cycles


def module_graph() -> dict[str, set[str]]:
    """Direct imports between the modules of the four packages (no cache left on disk)."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    return {module: set(graph.find_modules_directly_imported_by(module))
            for module in graph.modules}


def strongly_connected(edges: Mapping[str, Set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (module graphs nest deeper than the recursion limit
    allows for); returns every component, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def cycles(edges: Mapping[str, Set[str]]) -> list[list[str]]:
    """One shortest cycle per group of modules importing each other, as a module chain
    ending where it began."""
    found = []
    for component in strongly_connected(edges):
        if len(component) == 1 and component[0] not in edges.get(component[0], ()):
            continue
        members = set(component)
        start = component[0]
        paths = {start: [start]}  # breadth first from start, inside the component
        frontier = [start]
        cycle: list[str] | None = None
        while frontier and cycle is None:
            following = []
            for node in frontier:
                for succ in sorted(edges[node] & members):
                    if succ == start:
                        cycle = [*paths[node], start]
                        break
                    if succ not in paths:
                        paths[succ] = [*paths[node], succ]
                        following.append(succ)
                if cycle:
                    break
            frontier = following
        assert cycle is not None  # a component of more than one module always has one
        found.append(cycle)
    return found


def test_it_finds_a_cycle_and_names_its_chain() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert sorted(strongly_connected(edges)) == [["a", "b", "c"], ["d"], ["e"]]
    assert sorted(cycles(edges)) == [["a", "b", "c", "a"], ["e", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_it_has_no_import_cycle_among_the_packages() -> None:
    edges = module_graph()
    found = cycles(edges)
    groups = {group[0]: group for group in strongly_connected(edges)}  # cycles start there
    assert not found, f"{len(found)} group(s) of modules importing each other:\n" + "\n".join(
        f"  {' -> '.join(chain)}"
        + (f"  (the group: {', '.join(groups[chain[0]])})"
           if len(groups[chain[0]]) > len(chain) - 1 else "")
        for chain in found)


# --------------------------------------------------------------------------- local imports


@dataclass(frozen=True)
class LocalImport:
    path: str
    line: int
    explained: bool

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def comment_lines(source: str) -> tuple[set[int], set[int]]:
    """Lines with a comment that gives a reason, and those of them holding only the comment."""
    with_comment: set[int] = set()
    code_lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            text = _DIRECTIVE.sub("", token.string.lstrip("#").strip())
            if text.strip(" -–—:;,"):
                with_comment.add(token.start[0])
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                tokenize.DEDENT, tokenize.ENDMARKER):
            code_lines.update(range(token.start[0], token.end[0] + 1))
    return with_comment, with_comment - code_lines


class _LocalImportFinder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.depth = 0
        self.found: list[ast.Import | ast.ImportFrom] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        if self.depth:
            self.found.append(node)

    visit_ImportFrom = visit_Import


def local_imports_in(path: Path, root: Path = ROOT) -> list[LocalImport]:
    """Imports inside functions; explained when a comment sits on one of the statement's lines
    or alone on the line above."""
    source = path.read_text(encoding="utf-8")
    finder = _LocalImportFinder()
    finder.visit(ast.parse(source, filename=str(path)))
    with_comment, only_comment = comment_lines(source)
    found = []
    for node in finder.found:
        lines = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        explained = bool(lines & with_comment) or node.lineno - 1 in only_comment
        found.append(LocalImport(str(path.relative_to(root)), node.lineno, explained))
    return found


def all_local_imports() -> list[LocalImport]:
    return [found for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
            for found in local_imports_in(path)]


def test_it_tells_explained_local_imports_from_bare_ones(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "import os\n"
        "def f():\n"
        "    import json  # the registry is not ready at import\n"
        "    # cycles back to this module\n"
        "    import csv\n"
        "    import re\n"
        "    import abc  # noqa: PLC0415\n"
        "    import ast  # noqa: F401 - probes an optional dependency\n"
        "    import io  # type: ignore[import-untyped]\n"
        "    def g():\n"
        "        from x import (\n"
        "            y,  # optional dependency\n"
        "        )\n",
        encoding="utf-8",
    )
    found = local_imports_in(module, root=tmp_path)
    assert [(item.line, item.explained) for item in found] == [
        (3, True), (5, True), (6, False), (7, False), (8, True), (9, False), (11, True)]


def test_it_explains_every_function_local_import() -> None:
    bare = [str(item) for item in all_local_imports() if not item.explained]
    assert not bare, ("function-local imports without a comment saying why (on the line or "
                      "alone on the line above):\n  " + "\n  ".join(bare))


def test_it_keeps_function_local_imports_few() -> None:
    found = all_local_imports()
    assert len(found) <= MAX_FUNCTION_LOCAL_IMPORTS, (
        f"{len(found)} function-local imports (at most {MAX_FUNCTION_LOCAL_IMPORTS}):\n  "
        + "\n  ".join(str(item) for item in found))


# --------------------------------------------------------------------------- the envelope

# The store's envelope around a document: only the store and the persistence modules (the
# mapping of records to documents) read or write it; everything else asks them.
ENVELOPE_KEYS = re.compile(r"""["'](docContents|partitionKey|docType|docSubType|_etag)["']""")
ENVELOPE_READERS = (
    "cosmos_backend/",
    "*/persistence/*",
    "hisadmin/core/store.py",  # provisions the container: the indexed envelope paths
    "worklists/delivery/relay.py",  # the relay's presence beside its leases
)
APPS = ("accounts", "fhir_facade", "hisadmin", "hl7v2", "operations", "patients", "testkit",
        "webhooks", "worklists")


def envelope_readers_outside_persistence(root: Path = ROOT) -> list[str]:
    """``path:line`` of every envelope key named outside the store and persistence."""
    found = []
    for package in APPS:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if any(Path(rel).match(p) or rel.startswith(p) for p in ENVELOPE_READERS):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if ENVELOPE_KEYS.search(line):
                    found.append(f"{rel}:{number}")
    return found


def test_it_finds_an_envelope_key_outside_persistence(tmp_path: Path) -> None:
    (tmp_path / "patients" / "api").mkdir(parents=True)
    (tmp_path / "patients" / "persistence").mkdir(parents=True)
    (tmp_path / "patients" / "api" / "x.py").write_text('seq = doc["docContents"]["seq"]\n')
    (tmp_path / "patients" / "persistence" / "y.py").write_text('pk = doc["partitionKey"]\n')
    assert envelope_readers_outside_persistence(tmp_path) == ["patients/api/x.py:1"]


def test_it_reads_the_envelope_only_in_the_store_and_persistence() -> None:
    assert envelope_readers_outside_persistence() == [], (
        "read events through cosmos_backend.outbox (event_seq, event_stream, event_payload) "
        "and etags through cosmos_backend.envelope.etag")


def test_it_reads_the_envelope_of_held_streams_and_hl7_messages_behind_repositories(
        tmp_path: Path) -> None:
    for module in ("hisadmin/core/held_streams.py", "hl7v2/inbound/receive.py",
                   "hl7v2/outbound/transport.py"):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).write_text((ROOT / module).read_text())
    assert envelope_readers_outside_persistence(tmp_path) == []
    (tmp_path / "hl7v2/outbound/transport.py").write_text('state = doc["docContents"]\n')
    assert envelope_readers_outside_persistence(tmp_path) == ["hl7v2/outbound/transport.py:1"]


def test_it_lets_only_persistence_import_the_envelope() -> None:
    """The import-linter contract covers every app, so a new module of any of them that
    wraps or unwraps documents outside persistence breaks ``lint-imports``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"]
                  if c.get("forbidden_modules") == ["cosmos_backend.envelope"]]
    assert sorted(contract["source_modules"]) == sorted(APPS)
    assert contract["allow_indirect_imports"] is True
    outside = [i for i in contract["ignore_imports"] if not i.startswith("**.persistence.**")]
    readers = [i.split(" -> ")[0] for i in outside]
    assert readers == ["hisadmin.api", "patients.api.wards", "patients.use_cases.beds"]
    for module in readers:  # a document's version, nothing else of the envelope
        tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 and node.module == "cosmos_backend.envelope" for alias in node.names}
        assert names == {"etag"}, module

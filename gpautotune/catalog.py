"""What can be tuned and how: the registered problems and strategies with their options.

``gpautotune list`` prints these tables; :func:`entries` gives them to Python. A
problem's options are its factory's keyword arguments (what a tuning file's ``problem:``
section takes); a strategy's are the fields of its settings dataclass (``strategy:``).
Each option comes with its type, its default (or *required*) and the sentence that
documents it (the factory's ``Args:`` or the settings' ``Attributes:``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from rich.markup import escape
from rich.table import Table

from gpautotune.problems import OPT_IN, available_problems, problem_factory
from gpautotune.strategies import available_strategies, strategy_class

__all__ = ["Option", "Entry", "entries", "find_entry", "overview_table", "options_table"]

Kind = Literal["problem", "strategy"]
_SECTION = re.compile(r"^\s*(Args|Arguments|Attributes|Parameters):\s*$")
_ITEM = re.compile(r"^(\w+)(?: \([^)]*\))?:\s*(.*)$")
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")


@dataclass(frozen=True)
class Option:
    """One option: its name, type, default (``required`` when it has none) and doc."""

    name: str
    type: str
    default: Any
    required: bool
    doc: str

    @property
    def shown_default(self) -> str:
        return "required" if self.required else repr(self.default)


@dataclass(frozen=True)
class Entry:
    """A problem or strategy: its name, what it is (one sentence) and its options."""

    kind: Kind
    name: str
    summary: str
    options: tuple[Option, ...]


def _summary(obj: object) -> str:
    """The first sentence of the docstring: up to a full stop before a capital (not the
    one of an abbreviation such as ``eq. 5.2`` or ``e.g. a``)."""
    doc = inspect.getdoc(obj) or ""
    first = doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    return _plain(_SENTENCE_END.split(first, maxsplit=1)[0].rstrip(".")) if first else ""


def _option_docs(*objects: object) -> dict[str, str]:
    """``name -> text`` from the ``Args:``/``Attributes:`` sections of the docstrings
    (the first object that documents a name wins)."""
    docs: dict[str, str] = {}
    for obj in objects:
        found: dict[str, list[str]] = {}
        name, base = None, None
        inside = False
        for line in (inspect.getdoc(obj) or "").splitlines():
            if _SECTION.match(line):
                inside, name, base = True, None, None
                continue
            if not inside or not line.strip():
                continue
            depth = len(line) - len(line.lstrip())
            base = depth if base is None else base
            item = _ITEM.match(line.strip())
            if depth == base and item:
                name = item[1]
                found[name] = [item[2]]
            elif depth > base and name is not None:
                found[name].append(line.strip())
            else:
                inside = False
        for key, words in found.items():
            docs.setdefault(key, " ".join(w for w in words if w))
    return docs


def _strip_annotated(text: str) -> str:
    """``Annotated[float, Field(gt=0)] | None`` -> ``float | None`` (validators dropped)."""
    start = text.find("Annotated[")
    while start >= 0:
        depth, i, comma = 0, start + len("Annotated["), None
        while i < len(text):
            ch = text[i]
            if ch in "[(":
                depth += 1
            elif ch in "])":
                if depth == 0:
                    break
                depth -= 1
            elif ch == "," and depth == 0 and comma is None:
                comma = i
            i += 1
        inner = text[start + len("Annotated[") : comma if comma is not None else i]
        text = text[:start] + inner.strip() + text[i + 1 :]
        start = text.find("Annotated[")
    return text


def _type_name(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]  # the type without its validators
    text = annotation if isinstance(annotation, str) else None
    if text is None:
        text = getattr(annotation, "__name__", None) or str(annotation)
    return re.sub(r"typing\.|collections\.abc\.|os\.", "", _strip_annotated(text))


def _plain(doc: str) -> str:
    """Docstring markup as plain text: ``x`` -> x, :class:`~a.b.C` -> C."""
    doc = re.sub(r":\w+:`~?(?:[\w]+\.)*([\w]+)`", r"\1", doc)
    return doc.replace("``", "")


def _options(params: dict[str, inspect.Parameter], docs: dict[str, str]) -> tuple[Option, ...]:
    return tuple(
        Option(
            name,
            _type_name(p.annotation),
            None if p.default is p.empty else p.default,
            p.default is p.empty,
            _plain(docs.get(name, "")),
        )
        for name, p in params.items()
    )


def _problem(name: str) -> Entry:
    factory, extra = problem_factory(name)
    target: Callable[..., Any] = factory
    params = {
        k: p
        for k, p in inspect.signature(target).parameters.items()
        if k not in ("self", OPT_IN, *extra) and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    init = getattr(factory, "__init__", None) if inspect.isclass(factory) else None
    docs = _option_docs(factory, *([init] if init else []))
    return Entry("problem", name, _summary(factory), _options(params, docs))


def _strategy(name: str) -> Entry:
    from gpautotune.exceptions import MissingExtraError

    try:
        cls = strategy_class(name)
    except MissingExtraError as exc:  # a peer without its extra: listed, saying so
        return Entry("strategy", name, str(exc).removeprefix(f"strategy {name!r} "), ())
    docs = _option_docs(*inspect.getmro(cls.Settings), cls)  # presets inherit their docs
    return Entry("strategy", name, _summary(cls), _options(cls.Settings.parameters(), docs))


def entries(kind: Kind | None = None) -> list[Entry]:
    """Every registered problem and/or strategy (importing each one's module)."""
    out = []
    if kind in (None, "problem"):
        out += [_problem(n) for n in available_problems()]
    if kind in (None, "strategy"):
        out += [_strategy(n) for n in available_strategies()]
    return out


def find_entry(name: str) -> list[Entry]:
    """The problem and/or strategy called ``name`` (``spapt/bicg`` finds the family).

    Raises:
        ConfigError: neither a problem nor a strategy has that name (listing them).
    """
    from gpautotune.exceptions import ConfigError

    found = []
    if name in available_problems() or (
        "/" in name and f"{name.split('/', 1)[0]}/*" in available_problems()
    ):
        found.append(_problem(name))
    if name in available_strategies():
        found.append(_strategy(name))
    if not found:
        raise ConfigError(
            f"no problem or strategy is called {name!r}; problems: {available_problems()}; "
            f"strategies: {available_strategies()}"
        )
    return found


def overview_table(listed: list[Entry], title: str) -> Table:
    """One row per entry: name, summary and its options with their defaults (as text:
    ``[...]`` in a docstring or default is not rich markup)."""
    table = Table(title=title, show_lines=True)
    table.add_column("name", no_wrap=True, style="bold")
    table.add_column("what it is")
    table.add_column("options (default)")
    for e in listed:
        shown = ", ".join(f"{o.name}={o.shown_default}" for o in e.options) or "-"
        table.add_row(escape(e.name), escape(e.summary), escape(shown))
    return table


def options_table(entry: Entry) -> Table:
    """One row per option of ``entry``: name, type, default and documentation (as text:
    ``[...]`` in a docstring or default is not rich markup)."""
    table = Table(title=escape(f"{entry.kind} {entry.name}: {entry.summary}"))
    for col in ("option", "type", "default", "meaning"):
        table.add_column(col, no_wrap=col == "option")
    for o in entry.options:
        table.add_row(*(escape(text) for text in (o.name, o.type, o.shown_default, o.doc)))
    return table

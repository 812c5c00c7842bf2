"""The small loop language in which kernels write their nests.

It is the notation of the specification, indented like Python::

    for i = 0..nx-1:
        q[i] = 0
        for j = 0..ny-1:
            s[j] = s[j] + r[i]*A[i*ny+j]
    @C2
    $ tmp = (double *) malloc(nx * sizeof(double));

* ``for v = L..U:`` (optionally ``step s``) is a loop with an inclusive upper bound;
* any other line is one C expression statement, written with Python syntax (``=``,
  ``+=``, subscripts ``a[i][j]``, calls ``sqrt(x)``), parsed by :mod:`ast`;
* ``@label`` splices the transformation block ``label``;
* ``$ text`` is verbatim C.
"""

from __future__ import annotations

import ast
import re

from gpautotune.exceptions import ConfigError
from gpautotune.problems.spapt._expr import Bin, Call, Expr, Neg, Num, Ref, Var, num
from gpautotune.problems.spapt._nest import Assign, For, Raw, Slot, Stmt

__all__ = ["parse_nest", "parse_expr"]

_FOR = re.compile(r"^for\s+(\w+)\s*=\s*(.+?)\s*\.\.\s*(.+?)(?:\s+step\s+(\d+))?\s*:$")
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}


def parse_expr(text: str) -> Expr:
    """Parse one C expression written in Python syntax."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ConfigError(f"cannot parse expression {text!r}: {exc.msg}") from None
    return _expr(tree.body, text)


def _expr(node: ast.AST, text: str) -> Expr:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return num(node.value)
    if isinstance(node, ast.Name):
        return Var(node.id)
    if isinstance(node, ast.Subscript):
        subs: list[Expr] = []
        while isinstance(node, ast.Subscript):
            subs.insert(0, _expr(node.slice, text))
            node = node.value
        if not isinstance(node, ast.Name):
            raise ConfigError(f"array references must subscript a name, in {text!r}")
        return Ref(node.id, tuple(subs))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return Bin(_OPS[type(node.op)], _expr(node.left, text), _expr(node.right, text))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _expr(node.operand, text)
        if isinstance(inner, Num):
            return Num(-inner.value, "-" + inner.text)
        return Neg(inner)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        return Call(node.func.id, tuple(_expr(a, text) for a in node.args))
    raise ConfigError(f"unsupported construct {ast.dump(node)[:60]} in {text!r}")


def _statement(line: str) -> Assign:
    try:
        tree = ast.parse(line)
    except SyntaxError as exc:
        raise ConfigError(f"cannot parse statement {line!r}: {exc.msg}") from None
    if len(tree.body) != 1:
        raise ConfigError(f"one statement per line, got {line!r}")
    node = tree.body[0]
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return Assign(_expr(node.targets[0], line), "=", _expr(node.value, line))
    if isinstance(node, ast.AugAssign) and type(node.op) in _OPS:
        return Assign(_expr(node.target, line), _OPS[type(node.op)] + "=", _expr(node.value, line))
    raise ConfigError(f"a statement must be an assignment, got {line!r}")


def parse_nest(text: str) -> tuple[Stmt, ...]:
    """Parse a loop-language text into statements."""
    lines = [
        (len(raw) - len(raw.lstrip(" ")), raw.strip()) for raw in text.splitlines() if raw.strip()
    ]
    if not lines:
        return ()
    stmts, pos = _block(lines, 0, lines[0][0])
    if pos != len(lines):
        raise ConfigError(f"bad indentation at {lines[pos][1]!r}")
    return stmts


def _block(lines: list[tuple[int, str]], pos: int, indent: int) -> tuple[tuple[Stmt, ...], int]:
    out: list[Stmt] = []
    while pos < len(lines) and lines[pos][0] == indent:
        content = lines[pos][1]
        pos += 1
        if content.startswith("for "):
            match = _FOR.match(content)
            if match is None:
                raise ConfigError(f"bad loop header {content!r}; write 'for v = L..U:'")
            if pos >= len(lines) or lines[pos][0] <= indent:
                raise ConfigError(f"loop {content!r} has no body")
            body, pos = _block(lines, pos, lines[pos][0])
            name, lo, hi, step = match.groups()
            out.append(For(name, parse_expr(lo), parse_expr(hi), body, int(step or 1)))
        elif content.startswith("@"):
            out.append(Slot(content[1:].strip()))
        elif content.startswith("$"):
            out.append(Raw(content[1:].strip()))
        else:
            out.append(_statement(content))
    if pos < len(lines) and lines[pos][0] > indent:
        raise ConfigError(f"unexpected indentation at {lines[pos][1]!r}")
    return tuple(out), pos

"""The expression language's syntax check: text -> a Python syntax tree walked against the whitelist.

Nothing is evaluated: :func:`syntax_tree` only parses (``ast.parse``), and
:func:`validate` refuses any node outside the language, with a message that
names the offending part and, where it helps, the fix.

Before parsing, :func:`require_known_characters` refuses what the tree would never show:
a ``#`` (Python drops a comment, so ``x**2 # any text`` parsed as ``x**2`` while
the whole text went on into titles, JSON and file names), any character outside
ASCII (Python folds look-alikes to ASCII names: ``sin(ｘ)`` and ``𝑥**2`` read as
``sin(x)`` and ``x**2``) and control characters (tabs, line breaks: the language
is one line).

>>> try:
...     require_known_characters("x**2 # any text")
... except ExpressionError as err:
...     print(str(err).replace("; ", ";\\n"))
The character '#' (U+0023, NUMBER SIGN) is not part of the expression language;
a comment is not allowed, so remove it and the text after it.

>>> tree = syntax_tree("sin(x)**2")
>>> validate("sin(x)**2", tree)
>>> try:
...     validate("2^x", syntax_tree("2^x"))
... except ExpressionError as err:
...     print(err)
The operator in '2^x' is not allowed: use ** for powers, not ^.
"""

from __future__ import annotations

import ast
import math
import threading
import unicodedata
import warnings

from gradlab.errors import GradLabError
from gradlab.limits import LIMITS
from gradlab.numerics.expression_functions import CONSTANTS, FUNCTIONS

__all__ = ["ExpressionError", "require_known_characters", "syntax_tree", "validate", "segment"]


class ExpressionError(GradLabError):
    """Text the expression language refuses; the message names the offending part."""


_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_HINTS = {
    ast.BitXor: "use ** for powers, not ^",
    ast.FloorDiv: "use / for division",
    ast.Mod: "the % operator is not part of the language",
    ast.MatMult: "the @ operator is not part of the language",
}


def segment(text: str, node: ast.AST) -> str:
    part = ast.get_source_segment(text, node) or type(node).__name__
    return part if len(part) <= 40 else part[:37] + "..."


def validate(text: str, tree: ast.Expression) -> None:
    """Walk the tree once: refuse anything outside the whitelist, and enforce the size limits."""
    count = 0

    def walk(node: ast.AST, depth: int) -> None:
        nonlocal count
        count += 1
        if count > LIMITS.expression_nodes:
            raise ExpressionError(
                f"The expression has more than {LIMITS.expression_nodes} parts; please simplify it."
            )
        if depth > LIMITS.expression_depth:
            raise ExpressionError(
                f"The expression is nested more than {LIMITS.expression_depth} levels deep "
                f"(at '{segment(text, node)}'); please simplify it."
            )
        for child in _children(text, node):
            walk(child, depth + 1)

    walk(tree.body, 1)


def _children(text: str, node: ast.AST) -> list[ast.AST]:
    """The sub-expressions of an allowed node; raise for a node that is not allowed."""
    if isinstance(node, ast.Constant):
        _require_real_literal(text, node)
        return []
    if isinstance(node, ast.Name):
        if node.id != "x" and node.id not in CONSTANTS:
            raise ExpressionError(_unknown_name_message(node.id))
        return []
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExpressionError(f"The operator in '{segment(text, node)}' is not allowed; use + - * / **.")
        return [node.operand]
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            hint = _HINTS.get(type(node.op), "only + - * / ** are allowed")
            raise ExpressionError(f"The operator in '{segment(text, node)}' is not allowed: {hint}.")
        return [node.left, node.right]
    if isinstance(node, ast.Call):
        _require_plain_call(text, node)
        return [node.args[0]]
    raise ExpressionError(_refusal_message(text, node))


def _require_real_literal(text: str, node: ast.Constant) -> None:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExpressionError(f"Only real numbers can be written literally; '{segment(text, node)}' is not one.")
    if not math.isfinite(value) or abs(value) > LIMITS.literal_magnitude:
        raise ExpressionError(
            f"The number '{segment(text, node)}' is too large; numbers up to "
            f"{LIMITS.literal_magnitude:g} in size are allowed."
        )


def _require_plain_call(text: str, node: ast.Call) -> None:
    if not isinstance(node.func, ast.Name):
        raise ExpressionError(
            f"Only plain function calls such as sin(x) are allowed; '{segment(text, node.func)}' is not one."
        )
    name = node.func.id
    if name not in FUNCTIONS:
        raise ExpressionError(_unknown_function_message(name))
    if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        raise ExpressionError(f"The function {name} takes exactly one argument, as in {name}(x).")


def _unknown_function_message(name: str) -> str:
    return f"Unknown function '{name}'. Known functions: {', '.join(FUNCTIONS)}."


def _unknown_name_message(name: str) -> str:
    if name in FUNCTIONS:
        return f"'{name}' is a function: call it, as in {name}(x)."
    return f"Unknown name '{name}'. The variable is x and the constants are pi and e."


def _refusal_message(text: str, node: ast.AST) -> str:
    part = segment(text, node)
    if isinstance(node, ast.Attribute):
        return f"Attribute access such as '{part}' is not allowed."
    if isinstance(node, ast.Compare):
        return f"Comparisons such as '{part}' are not allowed; write a function of x."
    kind = type(node).__name__
    return f"'{part}' ({kind}) is not part of the expression language; use numbers, x, pi, e, + - * / ** and functions."


#: Characters a visitor may mean, and what the language writes instead.
_ASCII_FOR = {"π": "pi", "ℯ": "e", "−": "-", "–": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/", "²": "**2",
              "³": "**3", "√": "sqrt(...)"}
#: Names of the control characters a text box or a terminal can send (Unicode gives them none).
_CONTROL_NAMES = {"\t": "TAB", "\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\v": "LINE TABULATION",
                  "\f": "FORM FEED", "\x00": "NULL", "\x1b": "ESCAPE", "\x7f": "DELETE"}


def require_known_characters(text: str) -> None:
    """Refuse the first character outside the language's alphabet, printable ASCII without ``#``,
    naming it: its code point, its Unicode name, itself where it is visible, and the ASCII to type.

    >>> require_known_characters("sin(x) + 2**x")
    >>> try:
    ...     require_known_characters("sin(ｘ)")
    ... except ExpressionError as err:
    ...     print(err)
    The character 'ｘ' (U+FF58, FULLWIDTH LATIN SMALL LETTER X) is not part of the expression language; type x instead.
    """
    for char in text:
        if " " <= char <= "~" and char != "#":
            continue
        raise ExpressionError(_character_message(char))


def _character_message(char: str) -> str:
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, _CONTROL_NAMES.get(char, ""))
    visible = not unicodedata.category(char).startswith(("C", "Z", "M"))  # not invisible, spacing or combining
    shown = f"'{char}' ({code}{', ' + name if name else ''})" if visible else \
        f"{code}{' (' + name + ')' if name else ''}"
    folded = unicodedata.normalize("NFKC", char)
    if char == "#":
        fix = "a comment is not allowed, so remove it and the text after it"
    elif char in _ASCII_FOR:
        fix = f"type {_ASCII_FOR[char]} instead"
    elif folded.isascii() and folded.isalnum() and unicodedata.category(char) != "No":  # not ² -> 2
        fix = f"type {folded} instead"
    elif char in "\t\n\r\v\f":
        fix = "write the expression on one line, with spaces"
    else:
        fix = "type plain ASCII: numbers, x, pi, e, + - * / ** and functions such as sin(x)"
    return f"The character {shown} is not part of the expression language; {fix}."


#: One ``ast.parse`` at a time in this process. CPython 3.11 keeps the depth counter of the
#: C code that turns a parsed tree into ``ast`` objects in the interpreter's state, shared
#: by every thread (python/cpython#106905): when a thread switch (a garbage collection
#: running a finaliser) lets two threads build trees at once, one raises ``SystemError: AST
#: constructor recursion depth mismatch``, and the page shows "Something went wrong" (ten tabs
#: loading the Grid page with long new expressions hit it on 2 of 1,417 loads).
#: A parse takes milliseconds (the text is at most LIMITS.expression_chars long), so
#: serialising it costs nothing a page can see; the warnings filter below is process-wide
#: too, and is set and put back under the same lock.
_PARSE_LOCK = threading.Lock()


def syntax_tree(text: str) -> ast.Expression:
    require_known_characters(text)
    try:
        # A visitor's text must not write to the server log: Python warns about odd
        # string escapes ('\\)') while parsing, and string literals are refused anyway.
        with _PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            return ast.parse(text, mode="eval")
    except SyntaxError as err:
        where = f" at character {err.offset}" if err.offset else ""
        raise ExpressionError(f"The expression is not valid syntax{where}: {err.msg}.") from None
    except (ValueError, MemoryError, RecursionError):
        raise ExpressionError("The expression could not be read; check it for stray characters.") from None

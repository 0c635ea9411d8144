"""A small, safe arithmetic language in the variables `eps` and `delta`.

Used where a command takes a noise level or sensitivity as a formula, e.g.
`sqrt(2*log(1.25/delta))/eps`. User text is never handed to eval/exec: a
tokenizer and a recursive-descent parser build an immutable expression tree
that evaluates with numpy, so `eps` and `delta` may be arrays (they broadcast).

Grammar (precedence and associativity as in Python, so -2**2 == -4 and
2**3**2 == 512):

    expression := term (("+" | "-") term)*
    term       := unary (("*" | "/") unary)*
    unary      := ("+" | "-") unary | power
    power      := atom ("**" unary)?
    atom       := NUMBER | "eps" | "delta" | FUNCTION "(" expression ")" | "(" expression ")"

with FUNCTION one of log (natural), exp, sqrt. Anything else raises
gdpcli.errors.InputError naming the offending token and its column.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gdpcli.errors import InputError

ArrayLike = float | np.ndarray

MAX_LENGTH = 1000
MAX_DEPTH = 50
VARIABLES = ("eps", "delta")
FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"log": np.log, "exp": np.exp, "sqrt": np.sqrt}
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.divide,
    "**": np.power,
}
ALLOWED = (
    "allowed: numbers such as 2 or 1e-5, the variables eps and delta, + - * / ** (power), "
    "parentheses, and the functions log exp sqrt"
)

_TOKEN = re.compile(
    r"(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_]\w*)|(?P<op>\*\*|[-+*/()])", re.ASCII
)
_SPACE = re.compile(r"\s*", re.ASCII)


@dataclass(frozen=True)
class Token:
    """One lexeme: kind is 'number', 'name', 'op' or 'end'; column is 1-based."""

    kind: str
    text: str
    column: int


def _error(what: str, token: Token, source: str) -> InputError:
    """An InputError naming the token and its column, with the list of what is allowed as hint."""
    where = "the end" if token.kind == "end" else f"{token.text!r} at column {token.column}"
    shown = source if len(source) <= 60 else source[:57] + "..."
    return InputError(f"invalid expression {shown!r}: {what} {where}", ALLOWED)


def tokenize(source: str) -> tuple[Token, ...]:
    """Split source into tokens ending with an 'end' token; InputError on any other character or name."""
    tokens = []
    position = _SPACE.match(source).end()
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise _error("unexpected character", Token("char", source[position], position + 1), source)
        token = Token(match.lastgroup, match.group(), position + 1)
        if token.kind == "name" and token.text not in VARIABLES and token.text not in FUNCTIONS:
            raise _error("unknown name", token, source)
        tokens.append(token)
        position = _SPACE.match(source, match.end()).end()
    tokens.append(Token("end", "", len(source) + 1))
    return tuple(tokens)


@dataclass(frozen=True)
class Number:
    """A numeric literal."""

    value: float

    def evaluate(self, env: dict[str, np.ndarray]) -> np.ndarray:
        """The literal as a 0-d array."""
        return np.asarray(self.value)


@dataclass(frozen=True)
class Variable:
    """`eps` or `delta`."""

    name: str

    def evaluate(self, env: dict[str, np.ndarray]) -> np.ndarray:
        """The value bound to the variable."""
        return env[self.name]


@dataclass(frozen=True)
class Negate:
    """Unary minus."""

    operand: Node

    def evaluate(self, env: dict[str, np.ndarray]) -> np.ndarray:
        """-operand."""
        return np.negative(self.operand.evaluate(env))


@dataclass(frozen=True)
class Call:
    """log(x), exp(x) or sqrt(x)."""

    function: str
    argument: Node

    def evaluate(self, env: dict[str, np.ndarray]) -> np.ndarray:
        """The function applied elementwise."""
        return FUNCTIONS[self.function](self.argument.evaluate(env))


@dataclass(frozen=True)
class Chain:
    """first op_1 operand_1 op_2 operand_2 ..., evaluated left to right (flat, so long sums stay shallow)."""

    first: Node
    rest: tuple[tuple[str, Node], ...]

    def evaluate(self, env: dict[str, np.ndarray]) -> np.ndarray:
        """Fold the operators from the left; ** chains are built right-nested by the parser."""
        value = self.first.evaluate(env)
        for operator, operand in self.rest:
            value = BINARY[operator](value, operand.evaluate(env))
        return value


Node = Number | Variable | Negate | Call | Chain


class _Parser:
    """Recursive descent over a token tuple; `depth` bounds the recursion (MAX_DEPTH)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.index = 0
        self.depth = 0

    @property
    def token(self) -> Token:
        """The current (not yet consumed) token."""
        return self.tokens[self.index]

    def advance(self) -> Token:
        """Consume and return the current token."""
        token = self.token
        self.index += 1
        return token

    def expect(self, text: str, what: str) -> None:
        """Consume the operator `text` or raise InputError saying `what` was expected."""
        if self.token.text != text or self.token.kind != "op":
            raise _error(f"expected {what}, got", self.token, self.source)
        self.advance()

    def parse(self) -> Node:
        """The whole input as one expression."""
        node = self.expression()
        if self.token.kind != "end":
            raise _error("expected an operator or the end, got", self.token, self.source)
        return node

    def chain(self, operators: tuple[str, ...], operand: Callable[[], Node]) -> Node:
        """A left-associative run `operand (op operand)*` with op in operators."""
        first, rest = operand(), []
        while self.token.kind == "op" and self.token.text in operators:
            rest.append((self.advance().text, operand()))
        return Chain(first, tuple(rest)) if rest else first

    def expression(self) -> Node:
        """expression := term ((+ | -) term)*"""
        return self.chain(("+", "-"), self.term)

    def term(self) -> Node:
        """term := unary ((* | /) unary)*"""
        return self.chain(("*", "/"), self.unary)

    def unary(self) -> Node:
        """unary := ("+" | "-") unary | power; every nesting level passes here, so depth is counted here."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _error(f"nested more than {MAX_DEPTH} levels deep at", self.token, self.source)
        if self.token.kind == "op" and self.token.text in ("+", "-"):
            sign = self.advance().text
            operand = self.unary()
            node = Negate(operand) if sign == "-" else operand
        else:
            node = self.power()
        self.depth -= 1
        return node

    def power(self) -> Node:
        """power := atom ("**" unary)?, right-associative and binding tighter than unary minus on its left."""
        base = self.atom()
        if self.token.kind == "op" and self.token.text == "**":
            self.advance()
            return Chain(base, (("**", self.unary()),))
        return base

    def atom(self) -> Node:
        """atom := NUMBER | VARIABLE | FUNCTION ( expression ) | ( expression )"""
        token = self.advance()
        if token.kind == "number":
            value = float(token.text)
            if not np.isfinite(value):
                raise _error("number out of range", token, self.source)
            return Number(value)
        if token.kind == "name" and token.text in VARIABLES:
            return Variable(token.text)
        if token.kind == "name" and token.text in FUNCTIONS:
            self.expect("(", f"'(' after {token.text}")
            argument = self.expression()
            self.expect(")", "')'")
            return Call(token.text, argument)
        if token.kind == "op" and token.text == "(":
            inner = self.expression()
            self.expect(")", "')'")
            return inner
        raise _error("expected a number, variable, function or '(', got", token, self.source)


@dataclass(frozen=True)
class Expression:
    """A parsed formula in eps and delta; call it with numbers or numpy arrays."""

    source: str
    root: Node

    def __call__(self, eps: ArrayLike, delta: ArrayLike) -> ArrayLike:
        """Evaluate elementwise (broadcasting eps and delta); may give inf or nan, see `evaluate`."""
        arrays = np.broadcast_arrays(np.asarray(eps, float), np.asarray(delta, float))
        env = dict(zip(VARIABLES, arrays, strict=True))
        with np.errstate(all="ignore"):
            value = np.broadcast_to(self.root.evaluate(env), env["eps"].shape).astype(float)
        return float(value) if value.ndim == 0 else value


def parse(source: str) -> Expression:
    """Parse a formula in eps and delta; raise InputError (naming token and column) on anything else."""
    if len(source) > MAX_LENGTH:
        raise InputError(f"expression is longer than {MAX_LENGTH} characters", ALLOWED)
    if not source.strip():
        raise InputError("empty expression", ALLOWED)
    return Expression(source, _Parser(source).parse())


def require_positive(values: ArrayLike, what: str, at: dict[str, ArrayLike] | None = None) -> ArrayLike:
    """Return values if all are finite and > 0, else raise InputError naming the first bad value.

    `at` maps input names to the (broadcastable) inputs, reported at the first bad position.
    """
    bad = ~(np.isfinite(values) & (np.asarray(values) > 0))
    if not np.any(bad):
        return values
    index = np.unravel_index(np.argmax(bad), bad.shape)
    where = ", ".join(
        f"{name}={float(np.broadcast_to(v, bad.shape)[index])!r}" for name, v in (at or {}).items()
    )
    got = float(np.asarray(values)[index])
    raise InputError(f"{what} must be finite and positive, got {got!r}" + (f" at {where}" if where else ""))


def evaluate(
    expression: Expression | str, eps: ArrayLike, delta: ArrayLike, what: str = "noise level"
) -> ArrayLike:
    """Parse (if needed) and evaluate a formula whose values must be finite and positive (e.g. a sigma)."""
    parsed = parse(expression) if isinstance(expression, str) else expression
    return require_positive(parsed(eps, delta), f"{what} {parsed.source!r}", {"eps": eps, "delta": delta})

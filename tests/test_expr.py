"""Tests for gdpcli.expr: the safe formula language in eps and delta."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.errors import InputError
from gdpcli.expr import MAX_DEPTH, MAX_LENGTH, evaluate, parse, require_positive

# Expected values are Python's own arithmetic on the same literal text (written out by hand here),
# which fixes precedence and associativity to Python's: ** is right-associative and binds tighter
# than a unary minus on its left, but not than one in its exponent.
PYTHON_ARITHMETIC = [
    ("2**3**2", 2**3**2),  # 512
    ("-2**2", -(2**2)),  # -4
    ("(-2)**2", 4),
    ("2**-1", 0.5),
    ("-3**-2", -(3**-2)),
    ("2**-2**-1", 2 ** -(2**-1)),
    ("10-2-3", 5),
    ("2/4/2", 0.25),
    ("1+2*3", 7),
    ("(1+2)*3", 9),
    ("2*-3", -6),
    ("- - 2", 2),
    ("+-+2", -2),
    ("1e-5*1e5", 1e-5 * 1e5),
    (".5+1.", 1.5),
    ("2.5E+2", 250.0),
    ("  7 ", 7),
    ("1+" * 499 + "1", 500),  # a long flat sum stays shallow
]


@pytest.mark.parametrize(("text", "expected"), PYTHON_ARITHMETIC, ids=[t[:20] for t, _ in PYTHON_ARITHMETIC])
def test_precedence_and_associativity(text: str, expected: float) -> None:
    assert parse(text)(1.0, 1e-5) == expected


def test_functions_and_variables() -> None:
    formula = parse("sqrt(2*log(1.25/delta))/eps")
    assert formula(0.5, 1e-5) == math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert parse("exp(-eps) + delta")(2.0, 0.25) == math.exp(-2.0) + 0.25
    assert parse("log(exp(eps))")(3.0, 0.1) == pytest.approx(3.0, rel=1e-15)
    assert isinstance(formula(1.0, 1e-5), float)


def test_vectorized_evaluation_broadcasts() -> None:
    eps = np.array([0.5, 1.0, 2.0])
    delta = np.array([[1e-5], [1e-8]])
    formula = parse("sqrt(2*log(1.25/delta))/eps")
    values = formula(eps, delta)
    assert values.shape == (2, 3)
    for i, j in np.ndindex(2, 3):
        assert values[i, j] == formula(float(eps[j]), float(delta[i, 0]))
    constant = parse("3")(eps, delta)
    assert constant.shape == (2, 3) and np.all(constant == 3.0)


def test_tree_is_immutable() -> None:
    expression = parse("eps + 1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        expression.source = "delta"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        expression.root.first = None  # type: ignore[union-attr]


JUNK = [
    ("__import__('os')", "'__import__' at column 1"),
    ("eps.__class__", "'.' at column 4"),
    ("a+1", "unknown name 'a' at column 1"),
    ("log(", "the end"),
    ("2**", "the end"),
    ("eps delta", "'delta' at column 5"),
    ("", "empty expression"),
    ("   ", "empty expression"),
    ("2^3", "'^' at column 2"),
    ("log 2", "expected '(' after log"),
    ("eps(2)", "'(' at column 4"),
    ("sqrt(eps", "expected ')'"),
    ("(1", "expected ')'"),
    ("1)", "')' at column 2"),
    ("1e", "unknown name 'e' at column 2"),
    ("1e999", "out of range"),
    ("2,3", "',' at column 2"),
    ("lambda: 1", "unknown name 'lambda'"),
    ("pi", "unknown name 'pi'"),
    ("1 +* 2", "'*' at column 4"),
    ("eps // 2", "'/' at column 6"),
    ("eps % 2", "'%' at column 5"),
    ("[1]", "'[' at column 1"),
    ("\u0663", "column 1"),  # an Arabic-Indic digit: only ASCII digits are numbers
    ("x" * (MAX_LENGTH + 1), f"longer than {MAX_LENGTH}"),
    ("-" * (MAX_DEPTH + 1) + "1", f"more than {MAX_DEPTH} levels"),
    ("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1), f"more than {MAX_DEPTH} levels"),
    ("2**" * (MAX_DEPTH + 1) + "2", f"more than {MAX_DEPTH} levels"),
]


@pytest.mark.parametrize(("text", "message"), JUNK, ids=[t[:20] or "empty" for t, _ in JUNK])
def test_junk_raises_input_error_naming_the_token(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(text)
    assert message in caught.value.message
    assert "allowed:" in str(caught.value)


def test_nesting_up_to_the_limit_is_fine() -> None:
    depth = MAX_DEPTH - 1
    assert parse("(" * depth + "eps" + ")" * depth)(2.0, 0.1) == 2.0
    assert parse("-" * depth + "1")(1.0, 0.1) == (-1.0) ** depth


def test_require_positive_and_evaluate() -> None:
    assert evaluate("1/eps", np.array([1.0, 2.0]), 1e-5).tolist() == [1.0, 0.5]
    with pytest.raises(InputError, match=r"got -0\.69.* at eps=0\.5, delta=1e-05"):
        evaluate("log(eps)", np.array([2.0, 0.5]), 1e-5)
    with pytest.raises(InputError, match="got inf"):
        evaluate("1/(eps-1)", 1.0, 1e-5)
    with pytest.raises(InputError, match="got nan"):
        evaluate(parse("sqrt(-eps)"), 1.0, 1e-5)
    with pytest.raises(InputError, match=r"sigma must be finite and positive, got 0\.0"):
        require_positive(np.array([1.0, 0.0]), "sigma")
    assert require_positive(2.0, "sigma") == 2.0


# Random text never raises anything but InputError, and a parsed formula evaluates without exceptions.
FORMULA_ALPHABET = st.sampled_from([*"0123456789.eE+-*/() ", "eps", "delta", "log", "exp", "sqrt", "**"])


@settings(max_examples=50, deadline=None)
@given(st.lists(FORMULA_ALPHABET, max_size=30).map("".join))
def test_formula_like_text_only_raises_input_error(text: str) -> None:
    try:
        formula = parse(text)
    except InputError:
        return
    formula(np.array([0.0, 1.0, 1e300]), np.array([1e-5, 0.0, 1.0]))


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_only_raises_input_error(text: str) -> None:
    try:
        evaluate(text, 1.0, 1e-5)
    except InputError:
        pass


# Random well-formed formulas over numbers agree with Python evaluating the same text.
NUMBERS = st.sampled_from(["0.5", "1", "2", "3", "1e-1", "2.5"])


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "**"]), children).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}"
    )
    return st.one_of(binary, children.map(lambda c: f"-{c}"), children.map(lambda c: f"({c})"))


@settings(max_examples=50, deadline=None)
@given(st.recursive(NUMBERS, _combine, max_leaves=8))
def test_agrees_with_python_arithmetic(text: str) -> None:
    try:
        expected = eval(text, {"__builtins__": {}})  # test-only oracle on text built from the grammar above
    except (ZeroDivisionError, OverflowError):
        return
    if isinstance(expected, complex) or not math.isfinite(expected):
        return
    assert parse(text)(1.0, 1e-5) == pytest.approx(expected, rel=1e-12, abs=1e-300)

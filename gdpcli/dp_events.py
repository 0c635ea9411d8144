"""dp_accounting's `DpEvent`s in and out: read one as gdpcli events, write gdpcli events as one.

The form is the one dp_accounting serializes to: `event.to_named_tuple()` with every named tuple turned
into a dict by `_asdict()` (recursively), i.e. JSON objects with `class_name` (and `module_name`) beside
the event's own fields; a JSON list of them is their composition. `read` takes that form (as JSON text, a
dict or list, or a dp_accounting event itself), `write` gives it, and `notes` says where gdpcli's
conventions differ from dp_accounting's accountants for the same events:

    >>> from gdpcli import account, dp_events
    >>> step = {"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.01,
    ...         "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.1}}
    >>> run = dp_events.read({"class_name": "SelfComposedDpEvent", "event": step, "count": 1000})
    >>> [event.describe() for event in run]
    ['gaussian:sigma=1.1,sens=1,p=0.01,sampling=poissonx1000']
    >>> round(account.certified_epsilon(run, delta=1e-5), 3)  # dp_accounting PLD (1e-4): 1.5154
    1.516
    >>> written = dp_events.write(run)
    >>> written["class_name"], written["count"], written["event"]["event"]
    ('SelfComposedDpEvent', 1000, {'module_name': 'dp_accounting.dp_event', 'class_name': 'GaussianDpEvent', \
'noise_multiplier': 1.1})

Conventions. A dp_accounting event says nothing of the neighbouring relation (its accountant does), so
the events decide it: PoissonSampledDpEvent (and the discrete Laplace and mixture-of-Gaussians events,
which dp_accounting accounts under add/remove only) make it add/remove, SampledWithoutReplacementDpEvent and
RandomizedResponseDpEvent (replace-one only) make it replace-one, and an event with both is refused
(dp_accounting accounts no such mix either). Without either it is add/remove, dp_accounting's default. A
Gaussian or Laplace event's noise multiplier is relative to the norm bound C of each record's value, so
the sum moves by C when a record is added or removed and by up to 2C when one is replaced: sensitivity 1
or 2, as dp_accounting's PLD accountant takes a Gaussian event under replace-one. Its RDP accountant takes
sensitivity 1 under replace-one too; `notes` says so wherever that applies. A RepeatAndSelectDpEvent
(mean, shape: inf for Poisson, written as JSON's Infinity, as Python's json writes it) is
events.RepeatAndSelect of its event, accounted in RDP. An event gdpcli has no accountant for is refused,
naming it and the way round where there is one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

from gdpcli import events
from gdpcli.errors import InputError
from gdpcli.events import Neighbouring, Repeated

MODULE = "dp_accounting.dp_event"
"""The module_name gdpcli writes (dp_accounting's own; any is read)."""
MAX_COUNT = 10**9
"""The most repetitions of one step, as the spec language's times=N allows."""
FORM = "an object with class_name, as to_named_tuple() writes it with every named tuple made a dict"
ADD_REMOVE_CLASSES = ("PoissonSampledDpEvent", "DiscreteLaplaceDpEvent", "MixtureOfGaussiansDpEvent")
"""Events whose figures refer to add/remove neighbours (dp_accounting accounts them under no other)."""
REPLACE_ONE_CLASSES = ("SampledWithoutReplacementDpEvent", "RandomizedResponseDpEvent")
"""Events whose figures refer to replace-one neighbours (dp_accounting accounts them under no other)."""
REPLACE_ONE_NOTE = (
    "replace-one neighbours: a replaced record moves the sum of a Gaussian or Laplace event by up to twice "
    "its norm bound C, so gdpcli takes its noise multiplier at sensitivity 2 (as dp_accounting's PLD "
    "accountant does for a Gaussian event); dp_accounting's RDP accountant takes sensitivity 1, i.e. "
    "gdpcli's figure at twice the noise multiplier"
)
RESPONSE_COUNT_NOTE = (
    "dp_accounting's PLD accountant (0.6.0) composes a repeated RandomizedResponseDpEvent once, whatever "
    "its count: to check such a figure there, list each response as its own event in a ComposedDpEvent"
)

Json = dict[str, Any]


# ---------------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------------


def read(source: Any) -> list[Repeated]:
    """The gdpcli events of a dp_accounting event: JSON text, its dict form (a list of them is their
    composition), or a dp_accounting `DpEvent` (or its named tuple). InputError (exit 2) naming the class,
    field and place of anything gdpcli cannot read or account; an event without privacy cost (NoOpDpEvent,
    rate 0, ...) contributes nothing."""
    items = _items(source)
    reader = _Reader(_relation(items))
    found = [event for i, item in enumerate(items) for event in reader.event(item, _place(items, i))]
    if not found:
        raise InputError("dp_accounting event: nothing to account", "the event has no privacy cost")
    return found


def _items(source: Any) -> list[Any]:
    """The events of the source, as plain dicts and lists (a list is a composition)."""
    if isinstance(source, str):
        try:
            source = json.loads(source)
        except json.JSONDecodeError as error:
            raise InputError(
                f"dp_accounting event: not valid JSON ({error.msg} at line {error.lineno})", FORM
            ) from None
    data = _plain(source)
    return data if isinstance(data, list) else [data]


def _plain(value: Any) -> Any:
    """dp_accounting events and their named tuples as dicts, tuples as lists, recursively."""
    if hasattr(value, "to_named_tuple"):
        value = value.to_named_tuple()
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, Mapping):
        return {key: _plain(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(inner) for inner in value]
    return value


def _place(items: list[Any], index: int) -> str:
    return f"[{index}]" if len(items) > 1 else ""


def _classes(value: Any) -> Iterator[str]:
    """Every class_name in a (possibly malformed) event tree."""
    if isinstance(value, dict):
        if isinstance(value.get("class_name"), str):
            yield value["class_name"]
        for inner in value.values():
            yield from _classes(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _classes(inner)


def _relation(items: list[Any]) -> Neighbouring:
    """The neighbouring relation the events refer to (module docstring); InputError when they mix two."""
    names = set(_classes(items))
    add_remove = sorted(names.intersection(ADD_REMOVE_CLASSES))
    replace_one = sorted(names.intersection(REPLACE_ONE_CLASSES))
    if add_remove and replace_one:
        raise InputError(
            f"dp_accounting event mixes add/remove events ({add_remove[0]}) with replace-one events "
            f"({replace_one[0]})",
            "guarantees under different neighbouring relations do not compose; dp_accounting accounts "
            "no such mix either",
        )
    return Neighbouring.REPLACE_ONE if replace_one else Neighbouring.ADD_REMOVE


class _Fields:
    """One event's dict, read field by field: InputError naming its place, class and field."""

    def __init__(self, data: dict[str, Any], place: str, name: str, fields: tuple[str, ...]) -> None:
        self.data, self.place, self.name = data, place, name
        unknown = [key for key in data if key not in (*fields, "class_name", "module_name")]
        if unknown:
            raise self.error(f"unknown field {unknown[0]!r}", "its fields: " + (", ".join(fields) or "none"))

    def error(self, problem: str, hint: str | None = None) -> InputError:
        return InputError(f"{_where(self.place)}: {self.name}: {problem}", hint)

    def value(self, field: str, default: Any = ...) -> Any:
        if field in self.data:
            return self.data[field]
        if default is ...:
            raise self.error(f"the field {field} is missing")
        return default

    def number(self, field: str, high: float = math.inf, default: Any = ...) -> float:
        """A finite number in [0, high]."""
        value = self.value(field, default)
        if not _is_number(value) or not 0 <= value <= high:
            allowed = ">= 0" if high == math.inf else f"in [0, {high:g}]"
            raise self.error(f"the field {field} must be a finite number {allowed}, got {value!r}")
        return float(value)

    def whole(self, field: str, low: int = 0) -> int:
        """A whole number >= low."""
        value = self.value(field)
        if not _is_number(value) or not float(value).is_integer() or value < low:
            raise self.error(f"the field {field} must be a whole number >= {low}, got {value!r}")
        return int(value)

    def noise(self, field: str, value: float | None = None) -> float:
        """A noise parameter (`value` when read already), InputError when it is 0: no noise, no privacy."""
        noise = self.number(field) if value is None else value
        if noise == 0:
            raise self.error(f"{field} 0 releases the data without noise", "its epsilon is infinite")
        return noise

    def require(self, holds: bool, problem: str, hint: str | None = None) -> None:
        """InputError with the problem unless it holds."""
        if not holds:
            raise self.error(problem, hint)

    def numbers(self, field: str) -> list[float]:
        """A non-empty list of finite numbers >= 0."""
        values = self.value(field)
        if not isinstance(values, list) or not values or not all(_is_number(v) and v >= 0 for v in values):
            raise self.error(f"the field {field} must be a non-empty list of finite numbers >= 0")
        return [float(v) for v in values]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _where(place: str) -> str:
    return f"dp_accounting event at {place.lstrip('.')}" if place else "dp_accounting event"


class _Reader:
    """Events of one relation (the whole event's, `_relation`) read into gdpcli events."""

    def __init__(self, relation: Neighbouring) -> None:
        self.relation = relation

    def event(self, data: Any, place: str) -> list[Repeated]:
        """The gdpcli events of one dp_accounting event (dict form) at `place` in the whole."""
        if not isinstance(data, dict) or not isinstance(data.get("class_name"), str):
            raise InputError(f"{_where(place)}: {json.dumps(data)[:60]} is not an event", FORM)
        name = data["class_name"]
        if name in REFUSED:
            raise InputError(f"{_where(place)}: {name}: {REFUSED[name][0]}", REFUSED[name][1])
        if name not in READERS:
            raise InputError(
                f"{_where(place)}: unknown event class {name!r}", "gdpcli reads " + ", ".join(READERS)
            )
        fields, method = READERS[name]
        return method(self, _Fields(data, place, name, fields))

    @property
    def sensitivity(self) -> float:
        """A Gaussian or Laplace event's sensitivity in units of C: 1 add/remove, 2 replace-one."""
        return self.relation.sensitivity

    def gaussian(self, fields: _Fields) -> list[Repeated]:
        return [Repeated(events.Gaussian(fields.noise("noise_multiplier"), self.sensitivity))]

    def laplace(self, fields: _Fields) -> list[Repeated]:
        """Lap(b C) on a sum that moves by `sensitivity` C: eps0 = sensitivity / b."""
        return [Repeated(events.Laplace(self.sensitivity / fields.noise("noise_multiplier")))]

    def discrete_laplace(self, fields: _Fields) -> list[Repeated]:
        """At sensitivity 1 the privacy loss of DLap(a) is +-a, each with the masses of pure a-DP (GDP paper
        eq. 4): exactly f_{a,0}."""
        parameter, sensitivity = fields.number("noise_parameter"), fields.whole("sensitivity")
        if sensitivity == 0:
            return []
        fields.require(
            sensitivity == 1,
            f"sensitivity {sensitivity}: gdpcli accounts the discrete Laplace mechanism at sensitivity 1",
            "EpsilonDeltaDpEvent(noise_parameter x sensitivity, 0) states the pure DP it meets",
        )
        return [Repeated(events.ApproxDP(fields.noise("noise_parameter", parameter), 0.0))]

    def discrete_gaussian(self, fields: _Fields) -> list[Repeated]:
        sigma, sensitivity = fields.number("sigma"), fields.number("sensitivity", default=1.0)
        dimension = fields.value("dimension", None)
        if sensitivity == 0:
            return []
        fields.require(
            dimension == 1 and sensitivity.is_integer(),
            f"dimension {dimension}, sensitivity {sensitivity:g}: gdpcli accounts the univariate discrete "
            "Gaussian on a query of whole sensitivity",
            "dimension 1 and sensitivity 1, 2, ...",
        )
        return [Repeated(events.DiscreteGaussian(fields.noise("sigma", sigma), int(sensitivity)))]

    def epsilon_delta(self, fields: _Fields) -> list[Repeated]:
        epsilon, delta = fields.number("epsilon"), fields.number("delta", high=1.0)
        fields.require(delta < 1, "delta 1 is no privacy guarantee", "its epsilon is infinite")
        return [Repeated(events.ApproxDP(epsilon, delta))] if epsilon > 0 or delta > 0 else []

    def zcdp(self, fields: _Fields) -> list[Repeated]:
        rho, xi = fields.number("rho"), fields.number("xi", default=0.0)
        return [Repeated(events.ZeroConcentrated((), (), rho, xi))] if rho > 0 or xi > 0 else []

    def randomized_response(self, fields: _Fields) -> list[Repeated]:
        """k = 2 buckets: the true bit with probability 1 - p/2, i.e. rr:keep=1-p/2 (replace-one)."""
        noise, buckets = fields.number("noise_parameter", high=1.0), fields.whole("num_buckets", low=1)
        if buckets == 1 or noise == 1:
            return []
        fields.require(
            buckets == 2,
            f"num_buckets {buckets}: gdpcli accounts randomized response on one bit (2 buckets)",
            "EpsilonDeltaDpEvent(log(1 + k (1 - p) / p), 0) states the pure DP it meets",
        )
        return [Repeated(events.RandomizedResponse(1.0 - fields.noise("noise_parameter", noise) / 2.0))]

    def mixture(self, fields: _Fields) -> list[Repeated]:
        """N(0, s^2) against sum_i p_i N(c_i, s^2): with one nonzero shift c, the Poisson-subsampled Gaussian
        of sensitivity c at rate q = its probability (a Gaussian when q = 1)."""
        deviation = fields.number("standard_deviation")
        shifts, probabilities = fields.numbers("sensitivities"), fields.numbers("sampling_probs")
        fields.require(
            len(shifts) == len(probabilities) and abs(math.fsum(probabilities) - 1.0) <= 1e-9,
            "sensitivities and sampling_probs must be of one length, the probabilities 1 in all",
        )
        moved: dict[float, float] = {}
        for shift, probability in zip(shifts, probabilities, strict=True):
            if shift > 0 and probability > 0:
                moved[shift] = moved.get(shift, 0.0) + probability
        if not moved:
            return []
        fields.require(
            len(moved) == 1,
            f"{len(moved)} nonzero sensitivities: gdpcli accounts a mixture with one",
            "one nonzero sensitivity c with probability q is the Poisson-subsampled Gaussian",
        )
        [(shift, rate)] = moved.items()
        gaussian = events.Gaussian(fields.noise("standard_deviation", deviation), shift)
        return [Repeated(gaussian if rate >= 1 else events.Sampled(gaussian, rate, events.Sampling.POISSON))]

    def self_composed(self, fields: _Fields) -> list[Repeated]:
        count = fields.whole("count", low=1)
        found = self.event(fields.value("event"), f"{fields.place}.event")
        if any(item.times * count > MAX_COUNT for item in found):
            raise fields.error(f"more than {MAX_COUNT:.0e} repetitions of one step")
        return [item.with_times(item.times * count) for item in found]

    def composed(self, fields: _Fields) -> list[Repeated]:
        inner = fields.value("events")
        if not isinstance(inner, list):
            raise fields.error("the field events must be a list of events")
        return [
            event for i, item in enumerate(inner) for event in self.event(item, f"{fields.place}.events[{i}]")
        ]

    def poisson(self, fields: _Fields) -> list[Repeated]:
        rate = fields.number("sampling_probability", high=1.0)
        return self._sampled(fields, rate, events.Sampling.POISSON) if rate > 0 else []

    def without_replacement(self, fields: _Fields) -> list[Repeated]:
        """A batch of exactly B of the N records: rate B / N, replace-one neighbours."""
        size, sample = fields.whole("source_dataset_size", low=1), fields.whole("sample_size")
        fields.require(sample <= size, f"sample_size {sample} exceeds source_dataset_size {size}")
        return self._sampled(fields, sample / size, events.Sampling.FIXED) if sample > 0 else []

    def _sampled(self, fields: _Fields, rate: float, scheme: events.Sampling) -> list[Repeated]:
        """The inner event run on the sample: one mechanism, or Gaussians composed on the same sample (one
        Gaussian of mu = sqrt(sum mu_i^2), GDP paper Cor. 2); at rate 1, the inner event itself."""
        inner = self.event(fields.value("event"), f"{fields.place}.event")
        if rate >= 1 or not inner:
            return inner
        steps = [(item.step, item.times) for item in inner]
        if len(steps) == 1 and steps[0][1] == 1 and isinstance(steps[0][0], events.Mechanism):
            return [Repeated(events.Sampled(steps[0][0], rate, scheme))]
        if not all(isinstance(step, events.Mechanism) and step.gdp_mu is not None for step, _ in steps):
            raise fields.error(
                "gdpcli samples one mechanism per step, or Gaussian events composed on the same sample",
                "sample each mechanism on its own: a composition of sampled events",
            )
        mu = math.sqrt(math.fsum(times * step.gdp_mu**2 for step, times in steps))
        return [
            Repeated(events.Sampled(events.Gaussian(self.sensitivity / mu, self.sensitivity), rate, scheme))
        ]

    def repeat_and_select(self, fields: _Fields) -> list[Repeated]:
        """The inner event run a random number of times, the best run released: mean E[K] and shape (inf
        Poisson, 1 geometric, else the truncated negative binomial's eta; events.RunsDistribution)."""
        inner = self.event(fields.value("event"), f"{fields.place}.event")
        mean, shape = fields.number("mean"), fields.value("shape")
        fields.require(
            _is_number(shape) or shape == math.inf, f"the field shape must be a number or inf, got {shape!r}"
        )
        try:
            runs = events.RunsDistribution.of_dp_shape(mean, float(shape))
        except InputError as error:
            raise fields.error(error.message, error.hint) from None
        return [Repeated(events.RepeatAndSelect(tuple(inner), runs))] if inner else []

    def no_op(self, fields: _Fields) -> list[Repeated]:
        return []


READERS: dict[str, tuple[tuple[str, ...], Callable[[_Reader, _Fields], list[Repeated]]]] = {
    "GaussianDpEvent": (("noise_multiplier",), _Reader.gaussian),
    "LaplaceDpEvent": (("noise_multiplier",), _Reader.laplace),
    "DiscreteLaplaceDpEvent": (("noise_parameter", "sensitivity"), _Reader.discrete_laplace),
    "DiscreteGaussianDpEvent": (("sigma", "sensitivity", "dimension"), _Reader.discrete_gaussian),
    "EpsilonDeltaDpEvent": (("epsilon", "delta"), _Reader.epsilon_delta),
    "ZCDpEvent": (("rho", "xi"), _Reader.zcdp),
    "RandomizedResponseDpEvent": (("noise_parameter", "num_buckets"), _Reader.randomized_response),
    "MixtureOfGaussiansDpEvent": (("standard_deviation", "sensitivities", "sampling_probs"), _Reader.mixture),
    "PoissonSampledDpEvent": (("sampling_probability", "event"), _Reader.poisson),
    "SampledWithoutReplacementDpEvent": (
        ("source_dataset_size", "sample_size", "event"),
        _Reader.without_replacement,
    ),
    "SelfComposedDpEvent": (("event", "count"), _Reader.self_composed),
    "ComposedDpEvent": (("events",), _Reader.composed),
    "RepeatAndSelectDpEvent": (("event", "mean", "shape"), _Reader.repeat_and_select),
    "NoOpDpEvent": ((), _Reader.no_op),
}
"""The event classes gdpcli reads: their fields (dp_accounting's names) and reader."""

_NO_ACCOUNTANT = "gdpcli has no accountant for it"
REFUSED: dict[str, tuple[str, str | None]] = {
    "NonPrivateDpEvent": ("a non-private operation", "its epsilon is infinite"),
    "UnsupportedDpEvent": ("an operation without a privacy description", None),
    "SampledWithReplacementDpEvent": (
        f"sampling with replacement: {_NO_ACCOUNTANT}",
        "PoissonSampledDpEvent and SampledWithoutReplacementDpEvent are read",
    ),
    "SingleEpochTreeAggregationDpEvent": (f"tree aggregation: {_NO_ACCOUNTANT}", None),
    "ExponentialMechanismDpEvent": (
        f"the exponential mechanism (bounded range): {_NO_ACCOUNTANT}",
        "EpsilonDeltaDpEvent(epsilon, 0) states the pure DP it meets",
    ),
    "PermuteAndFlipDpEvent": (
        f"permute-and-flip: {_NO_ACCOUNTANT}",
        "EpsilonDeltaDpEvent(epsilon, 0) states the pure DP it meets",
    ),
    "TruncatedSubsampledGaussianDpEvent": (
        "truncated Poisson batches are accounted for a whole run, not as an event",
        "gdpcli sgd --sampling truncated-poisson --dataset-size N --max-batch-size B",
    ),
    "RandomAllocationDpEvent": (
        "random allocation is accounted for a whole run, not as an event",
        "gdpcli sgd --sampling balls-in-bins (one batch per example and epoch)",
    ),
}
"""dp_accounting event classes gdpcli knows and does not read, with the reason and a way round."""


# ---------------------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------------------


def write(found: Repeated | events.Step | Sequence[Repeated | events.Step]) -> Json:
    """The dp_accounting event of gdpcli events, in the dict form `read` takes (json.dumps writes it; with
    dp_accounting, `DpEvent.from_named_tuple` of the named tuples or each class called on its fields
    builds it). A list is a ComposedDpEvent. InputError for an event no dp_accounting event describes
    (RDP guarantees, curves, shuffled reports, group mixtures) or a mix of neighbouring relations."""
    items = [item if isinstance(item, Repeated) else Repeated(item) for item in _listed(found)]
    relation = relation_of(items)
    written = [_repeated(item, relation) for item in items]
    return written[0] if len(written) == 1 else _event("ComposedDpEvent", events=written)


def _listed(found: Any) -> list[Any]:
    return list(found) if isinstance(found, Sequence) else [found]


def relation_of(found: Sequence[Repeated]) -> Neighbouring:
    """The neighbouring relation of gdpcli events as dp_accounting events state it: replace-one with a
    fixed-size sample or randomized response, else add/remove; InputError when Poisson sampling joins them."""
    found = _leaves(found)
    schemes = {item.step.scheme for item in found if isinstance(item.step, events.Sampled)}
    replace_one = events.Sampling.FIXED in schemes or any(
        isinstance(item.step, events.RandomizedResponse) for item in found
    )
    if replace_one and events.Sampling.POISSON in schemes:
        raise InputError(
            "the events mix Poisson sampling (add/remove) with fixed-size samples or randomized response "
            "(replace-one)",
            "guarantees under different neighbouring relations do not compose",
        )
    return Neighbouring.REPLACE_ONE if replace_one else Neighbouring.ADD_REMOVE


def notes(found: Sequence[Repeated]) -> list[str]:
    """Where dp_accounting's accountants take these events otherwise than gdpcli (module docstring): under
    replace-one, a Gaussian or Laplace event's sensitivity; and its PLD accountant's count of a repeated
    randomized response."""
    found = _leaves(found)
    moving = any(
        item.mechanism.gdp_mu is not None or isinstance(item.mechanism, events.Laplace) for item in found
    )
    repeated_responses = any(
        isinstance(item.step, events.RandomizedResponse) and item.times > 1 for item in found
    )
    return [
        note
        for note, applies in (
            (REPLACE_ONE_NOTE, moving and relation_of(found) is Neighbouring.REPLACE_ONE),
            (RESPONSE_COUNT_NOTE, repeated_responses),
        )
        if applies
    ]


def _leaves(found: Sequence[Repeated]) -> list[Repeated]:
    """The events, each repeat-and-select replaced by the events of its run (recursively)."""
    return [
        leaf
        for item in found
        for leaf in (_leaves(item.step.events) if isinstance(item.step, events.RepeatAndSelect) else [item])
    ]


def _event(name: str, **fields: Any) -> Json:
    return {"module_name": MODULE, "class_name": name, **fields}


def _repeated(item: Repeated, relation: Neighbouring) -> Json:
    step = _step(item.step, relation)
    return step if item.times == 1 else _event("SelfComposedDpEvent", event=step, count=item.times)


def _step(step: events.Step, relation: Neighbouring) -> Json:
    if isinstance(step, events.Mechanism):
        return _mechanism(step, relation)
    if isinstance(step, events.Sampled):
        inner = _mechanism(step.mechanism, relation)
        if step.scheme is events.Sampling.POISSON:
            return _event("PoissonSampledDpEvent", sampling_probability=step.sampling_rate, event=inner)
        sample, size = _ratio(step.sampling_rate)
        return _event(
            "SampledWithoutReplacementDpEvent", source_dataset_size=size, sample_size=sample, event=inner
        )
    raise _unwritable(step.describe())


def _ratio(rate: float) -> tuple[int, int]:
    """(B, N) in lowest terms with B / N == rate in floating point, the smallest denominator tried first."""
    for limit in (10**k for k in range(1, 16)):
        ratio = Fraction(rate).limit_denominator(limit)
        if ratio.numerator / ratio.denominator == rate:
            return ratio.numerator, ratio.denominator
    exact = Fraction(rate)
    return exact.numerator, exact.denominator


def _mechanism(mechanism: events.Mechanism, relation: Neighbouring) -> Json:
    """The mechanism's event; noise multipliers relative to C at the relation's sensitivity (module
    docstring), so that `read` gives the mechanism back."""
    unit = relation.sensitivity
    if isinstance(mechanism, events.Gaussian):
        return _event("GaussianDpEvent", noise_multiplier=mechanism.sigma * unit / mechanism.sens)
    if mechanism.gdp_mu is not None:
        return _event("GaussianDpEvent", noise_multiplier=unit / mechanism.gdp_mu)
    if isinstance(mechanism, events.Laplace):
        return _event("LaplaceDpEvent", noise_multiplier=unit / mechanism.epsilon)
    if isinstance(mechanism, events.ApproxDP):
        return _event("EpsilonDeltaDpEvent", epsilon=mechanism.epsilon, delta=mechanism.delta)
    if isinstance(mechanism, events.RandomizedResponse):
        return _event(
            "RandomizedResponseDpEvent", noise_parameter=2.0 * (1.0 - mechanism.keep), num_buckets=2
        )
    if isinstance(mechanism, events.DiscreteGaussian):
        return _event(
            "DiscreteGaussianDpEvent", sigma=mechanism.sigma, sensitivity=float(mechanism.sens), dimension=1
        )
    if isinstance(mechanism, events.ZeroConcentrated):
        return _event("ZCDpEvent", rho=mechanism.rho, xi=mechanism.xi)
    if isinstance(mechanism, events.RepeatAndSelect):
        inner = [_repeated(item, relation) for item in mechanism.events]
        run = inner[0] if len(inner) == 1 else _event("ComposedDpEvent", events=inner)
        runs = mechanism.runs
        return _event("RepeatAndSelectDpEvent", event=run, mean=runs.mean, shape=runs.shape)
    raise _unwritable(mechanism.describe())


def _unwritable(what: str) -> InputError:
    return InputError(
        f"{what}: no dp_accounting event describes it",
        "dp_accounting events describe Gaussian, Laplace, (eps, delta)-DP, randomized response, discrete "
        "Gaussian and zCDP steps, Poisson-sampled or sampled without replacement, and repeat-and-select",
    )


__all__ = ["MAX_COUNT", "READERS", "REFUSED", "notes", "read", "relation_of", "write"]

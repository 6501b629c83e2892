"""Settings of the measures, declared by the measures that read them.

A measure lists the `Param` it reads in ``Measure.settings`` (a setting read by several measures — the topics of
the two topic measures — is one `Param` object listed by each); `engine.measures.registry.setting_parameters`
gathers them. The CLI's flags, the dashboard's widgets, the replay command, the manifest and the cache key all
come from that declaration, through `MeasureSettings`: the values chosen, checked against their declarations.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from engine.errors import ConfigError
from engine.measures.registry import setting_parameters
from engine.protect.params import Param


class MeasureSettings(Mapping[str, Any]):
    """The measure settings of one run: a value for every declared setting (its default unless given), the
    seed of the measures' own randomness (projections, topics, held-out splits; 0) and the method's vendor
    keywords (words the text measures leave out, as the synthesizers do).

    Immutable and hashable; its ``repr`` names only the values given (the cache key of a sweep's measures).
    ``MeasureSettings(intruder="posts")`` or ``MeasureSettings({"intruder": "posts"})``; a name no registered
    measure declares is a ConfigError naming those that are, a value outside its declaration one naming what
    is accepted.
    """

    __slots__ = ("_given", "_seed", "_vendor_keywords")

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        /,
        *,
        seed: int = 0,
        vendor_keywords: tuple[str, ...] = (),
        **named: Any,
    ) -> None:
        declared = _declared()
        given = {k: v for k, v in {**(values or {}), **named}.items() if v is not None}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            raise ConfigError(
                f"no measure has a setting {', '.join(map(repr, unknown))}; the settings are: {', '.join(declared)}"
            )
        checked = {name: declared[name].coerce(value) for name, value in given.items()}
        self._given: tuple[tuple[str, Any], ...] = tuple(
            (name, checked[name]) for name in declared if name in checked and checked[name] != declared[name].default
        )
        self._seed = int(seed)
        self._vendor_keywords = tuple(vendor_keywords)

    @classmethod
    def from_values(cls, values: Mapping[str, Any], vendor_keywords: tuple[str, ...] = ()) -> MeasureSettings:
        """Settings from declared names and values (None: the default)."""
        return cls(values, vendor_keywords=tuple(vendor_keywords))

    def __getitem__(self, name: str) -> Any:
        declared = _declared()
        if name not in declared:
            raise KeyError(name)
        return dict(self._given).get(name, declared[name].default)

    def __iter__(self) -> Iterator[str]:
        return iter(_declared())

    def __len__(self) -> int:
        return len(_declared())

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def vendor_keywords(self) -> tuple[str, ...]:
        return self._vendor_keywords

    def values(self) -> dict[str, Any]:  # type: ignore[override]
        """Every declared setting's value, defaults included (the replay command writes those that differ)."""
        return {name: self[name] for name in _declared()}

    def given(self) -> dict[str, Any]:
        """The settings that differ from their declared defaults."""
        return dict(self._given)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MeasureSettings):
            return NotImplemented
        return (self._given, self._seed, self._vendor_keywords) == (other._given, other._seed, other._vendor_keywords)

    def __hash__(self) -> int:
        return hash((self._given, self._seed, self._vendor_keywords))

    def __repr__(self) -> str:
        parts = [f"{k}={v!r}" for k, v in self._given]
        if self._seed:
            parts.append(f"seed={self._seed}")
        if self._vendor_keywords:
            parts.append(f"vendor_keywords={self._vendor_keywords!r}")
        return f"MeasureSettings({', '.join(parts)})"


def _declared() -> dict[str, Param]:
    return {p.name: p for p in setting_parameters()}


def setting(name: str) -> Param:
    """The declaration of the setting ``name``; ConfigError names the settings there are."""
    declared = _declared()
    if name not in declared:
        raise ConfigError(f"no measure has a setting {name!r}; the settings are: {', '.join(declared)}")
    return declared[name]

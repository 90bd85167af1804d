"""The part of :mod:`.events` every op that logs needs: the envelope, the base of each type's data,
and the JSON readers. The lock ops' events are in :mod:`._lease_events`, a join's in :mod:`._seat_events`
and :mod:`._seat_return_events`.

Kept apart because a frozen dataclass costs a ``duel tools`` process about a quarter of a
millisecond to build: a claim, refresh or release builds these three classes and the three of
leases, a join these and those of a new seat, not all twenty-eight (bench/bench_startup.py).
:mod:`.events` names them all, and the rest of the package imports them from there; only the
ops and the transaction that logs them import them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ..vocabulary import EventType

if TYPE_CHECKING:
    from dataclasses import Field

    from _typeshed import DataclassInstance
    from typing_extensions import Self


class Unfit(ValueError):
    """JSON that does not fit the type it is read as."""


# -- reading JSON values, each checked -------------------------------------------------------


def _int(data: Mapping[str, Any], name: str) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unfit(f"{name} is not an integer")
    return value


def _optional_int(data: Mapping[str, Any], name: str) -> int | None:
    return None if data.get(name) is None else _int(data, name)


def _str(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise Unfit(f"{name} is not a string")
    return value


def _optional_str(data: Mapping[str, Any], name: str) -> str | None:
    return None if data.get(name) is None else _str(data, name)


def _bool(data: Mapping[str, Any], name: str, *, default: bool = False) -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise Unfit(f"{name} is not true or false")
    return value


def _strs(data: Mapping[str, Any], name: str, default: tuple[str, ...] | None = None) -> tuple[str, ...]:
    value = data.get(name, default)
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise Unfit(f"{name} is not a list of strings")
    return tuple(value)


# A field's declared type (a string: annotations are postponed) -> how its JSON value is read.
_READERS: dict[str, Callable[[Mapping[str, Any], str], Any]] = {
    "int": _int,
    "int | None": _optional_int,
    "str": _str,
    "str | None": _optional_str,
    "bool": _bool,
    "tuple[str, ...]": _strs,
}


_Record = TypeVar("_Record", bound="DataclassInstance")


def read_fields(kind: type[_Record], data: Mapping[str, Any]) -> _Record:
    """A ``kind`` (a dataclass) from its JSON object: each field read by its declared type, and one with a
    default may be absent (raises :class:`Unfit`)."""
    values = {}
    for field in fields(kind):
        if field.name not in data and field.default is not MISSING:
            values[field.name] = field.default
        else:
            values[field.name] = _READERS[str(field.type)](data, field.name)
    return kind(**values)


# -- the base -----------------------------------------------------------------------------------


# Every type by its word: each registers itself as its class is built, and every reader of a log
# (:func:`.events.event_of`) has loaded :mod:`.events`, which builds them all.
_TYPES: dict[EventType, type[EventData]] = {}


class EventData:
    """What one type of event says: its fields are its JSON ``data`` object, in order.

    Each type is a frozen dataclass; this base, which has no field, is a plain class, as a dataclass
    costs every process that logs an event start-up time (bench/bench_startup.py)."""

    if TYPE_CHECKING:  # what the dataclass decorator gives each type
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    event_type: ClassVar[EventType]
    wakes: ClassVar[bool] = True  # a change waiters should see, not bookkeeping (section 9, "wakes wait")
    # A change to the lease alone, which a power failure ends anyway: the directory store need not make its
    # rename durable before the op answers (docs/protocol.md section 4, "Failures of the disk").
    lease_only: ClassVar[bool] = False

    def to_json(self) -> dict[str, Any]:
        """The JSON ``data`` object: the fields in order, tuples as lists."""
        return {name: list(value) if isinstance(value, tuple) else value for name, value in vars(self).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The data of this type from its JSON object (raises :class:`Unfit`), by :func:`read_fields`;
        a type whose JSON is not its own fields, flat, reads itself."""
        return read_fields(cls, data)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _TYPES[cls.event_type] = cls


# -- the envelope ------------------------------------------------------------------------------


@dataclass(kw_only=True, frozen=True)
class Event:
    """One line of the log: where and when it was logged, by whom, and what it says."""

    seq: int  # from 0, without gaps
    ts: str  # ISO 8601 UTC
    duel_id: str
    participant_id: str | None  # None: the service itself (record_invalidated)
    data: EventData | UnknownEvent

    @property
    def type(self) -> EventType | str:
        """The event's type: an :class:`EventType`, or the logged word of an :class:`UnknownEvent`."""
        return self.data.event_type

    def to_json(self) -> dict[str, Any]:
        """The log line's JSON object: the envelope and its ``data``."""
        return {
            "seq": self.seq,
            "ts": self.ts,
            "type": str(self.type),
            "duel_id": self.duel_id,
            "participant_id": self.participant_id,
            "data": self.data.to_json(),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Event:
        """Raises :class:`Unfit` when ``raw`` is not an event at all (not when its data is
        not what its type says: that is an :class:`UnknownEvent`)."""
        data = raw.get("data")
        if not isinstance(data, dict):
            raise Unfit("data is not an object")
        return cls(
            seq=_int(raw, "seq"),
            ts=_str(raw, "ts"),
            duel_id=_str(raw, "duel_id"),
            participant_id=_optional_str(raw, "participant_id"),
            data=read_data(_str(raw, "type"), data),
        )


@dataclass(frozen=True)
class UnknownEvent:
    """An event this version cannot read: a type it does not know, or data that does not fit its type."""

    event_type: str
    raw: Mapping[str, Any]  # the ``data`` object as logged
    lease_only: ClassVar[bool] = False  # unknown: kept as durable as any write

    def to_json(self) -> dict[str, Any]:
        """The data as logged."""
        return dict(self.raw)


def read_data(event_type: str, data: Mapping[str, Any]) -> EventData | UnknownEvent:
    """The typed data of an event of ``event_type``, or an :class:`UnknownEvent`."""
    try:
        return _TYPES[EventType(event_type)].from_json(data)
    except ValueError:  # EventType() does not know the word, or the data is Unfit
        return UnknownEvent(event_type, data)

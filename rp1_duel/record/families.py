"""Which model family a model is, and whether a duel's seats were all of one: such a duel is provisional
(docs/protocol.md section 11, "Provisional"). The close writes the label into the Terminal Conclusion (its
``Provisional`` row: :func:`provisional_text`, read back by :func:`read_provisional`); a report derives it for a
record closed before. Here, in the record layer, so that the service's close and the review share one rule.

Debaters of one model follow each other's majority and talk each other out of correct answers far more than
models of different families do, so a duel between them is one model's view, not a debate. Pure: from the
models the API said served each seat (its ``usage`` events' provenance), else the seat's recorded model.

Decisions (section 11):

- A family is read off the model's id, case aside: the first known family name found at the start of the id or
  after a ``/ . : _ -`` (so ``anthropic/claude-…``, ``us.anthropic.claude-…`` and ``llama3.1:8b`` are read);
  the earliest found wins. An id naming no known family is a family of its own: two unknown ids are two families.
- A person (``human``) and a script (``scripted:…``) are no model: a duel with one is never provisional.
- A seat's models are the served models its turns' usage events recorded; a seat with none recorded (the API
  did not say, the events were not read) counts with its model as the record names it.
- A duel is provisional when it has two seats or more (a chair included), each with a model, all of one family.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "FAMILIES",
    "Provisional",
    "label_problem",
    "model_family",
    "provisional",
    "provisional_text",
    "read_provisional",
    "seat_models",
]

# Each family and the names its ids start with (a lab's model lines, as their APIs and open weights name them).
FAMILIES: tuple[tuple[str, str], ...] = (
    ("claude", r"claude"),
    ("gpt", r"gpt|chatgpt|o[1-9]\d*(?=$|[-:_.])"),  # OpenAI's: gpt-*, chatgpt-*, o1, o3-mini, o4-mini, gpt-oss
    ("gemini", r"gemini"),
    ("gemma", r"gemma"),
    ("llama", r"llama|codellama"),
    ("mistral", r"mistral|mixtral|codestral|ministral|magistral|devstral|pixtral"),
    ("qwen", r"qwen|qwq"),
    ("deepseek", r"deepseek"),
    ("phi", r"phi-?\d"),
    ("grok", r"grok"),
    ("command", r"command-|c4ai"),  # Cohere's
    ("granite", r"granite"),
    ("kimi", r"kimi|moonshot"),
    ("glm", r"glm|chatglm"),
)
_FOUND = tuple((family, re.compile(rf"(?:^|[/.:_-])(?:{names})")) for family, names in FAMILIES)
PERSON, SCRIPT = "human", "scripted:"  # the model ids `duel join` records for a person and a script


@dataclass(frozen=True)
class Provisional:
    """A duel whose seats were all of one model family: which family, and the models seen."""

    family: str
    models: tuple[str, ...]  # sorted


def model_family(model: str) -> str:
    """The family of ``model``'s id (``claude-opus-5``: ``claude``); an id naming no known family is its own."""
    lowered = model.lower()
    found = [(match.start(), family) for family, pattern in _FOUND if (match := pattern.search(lowered))]
    return min(found)[1] if found else model


def seat_models(recorded: Mapping[int, str], served: Iterable[tuple[int, str | None]]) -> dict[int, tuple[str, ...]]:
    """Each seat's models: those ``served`` (seat, the served model of one of its turns) names for it, else its
    ``recorded`` model (the front matter's)."""
    seen: dict[int, set[str]] = {}
    for seat, model in served:
        if model is not None:
            seen.setdefault(seat, set()).add(model)
    return {seat: tuple(sorted(seen.get(seat) or {model})) for seat, model in recorded.items()}


def provisional(models: Mapping[int, tuple[str, ...]]) -> Provisional | None:
    """Provisional when two seats or more, each with a model and none a person or a script, are all of one family."""
    every = [model for seat_models in models.values() for model in seat_models]
    if len(models) < 2 or any(not found for found in models.values()):
        return None
    if any(model == PERSON or model.startswith(SCRIPT) for model in every):
        return None
    families = {model_family(model) for model in every}
    return Provisional(families.pop(), tuple(sorted(set(every)))) if len(families) == 1 else None


_ROW = re.compile(r"every seat a (?P<family>.+?) model \((?P<models>.+)\)")
_BETWEEN = ", "


def provisional_text(found: Provisional) -> str:
    """The ``Provisional`` row's value: ``every seat a claude model (claude-x, claude-y)``."""
    return f"every seat a {found.family} model ({_BETWEEN.join(found.models)})"


def read_provisional(value: str) -> Provisional | None:
    """The label :func:`provisional_text` wrote as ``value``; None when it does not read as one."""
    found = _ROW.fullmatch(value)
    if found is None:
        return None
    return Provisional(found.group("family"), tuple(found.group("models").split(_BETWEEN)))


def label_problem(found: Provisional, recorded: Mapping[int, str]) -> str | None:
    """Why a recorded label cannot be what the rule gives for a duel whose seats the record names with
    ``recorded`` models (the served ones are in the event log, not the record): None when it can."""
    if len(recorded) < 2 or any(model == PERSON or model.startswith(SCRIPT) for model in recorded.values()):
        return "the duel does not have two seats or more, each a model"
    strays = [model for model in found.models if model_family(model) != found.family]
    if strays or list(found.models) != sorted(set(found.models)):
        return f"its models are not {found.family} models, sorted once each"
    return None

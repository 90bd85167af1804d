"""``duel join``'s flags, checked, and what they choose: the configuration, the provider, the citation
checker, the seat's name and the participant's settings, ready for :class:`.loop.Duelist` (or the role
``duel join --role`` names). Nothing is sent or written here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..configuration import Config, Flags, destinations, load_config
from ..coordination import check_join_inputs
from ..errors import invalid_argument
from ..settings import ON_FABRICATION
from ..vocabulary import REASONING_LEVELS, Role
from .loop import ParticipantConfig
from .personas import played, resolve
from .providers import Provider, select_provider

if TYPE_CHECKING:
    from .checking import CitationChecker

__all__ = ["DEFAULT_NAMES", "JoinFlags", "PreparedJoin", "checked_on_fabrication", "prepare_join"]

DEFAULT_NAMES = {"anthropic": "Claude", "openai": "GPT", "human": "Human"}


@dataclass(frozen=True, kw_only=True)
class JoinFlags:
    """What ``duel join`` was given, each under its option's name; None is an option not given."""

    target: str
    topic: str | None = None
    debate_dir: str | None = None
    store: str | None = None
    name: str | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    persona: str | None = None
    position: str | None = None
    max_turns: int | None = None
    lease_seconds: int | None = None
    peer_wait_seconds: int | None = None
    turn_timeout_seconds: int | None = None
    seats: int | None = None
    chair: bool = False
    sealed_openings: bool = False
    on_fabrication: str | None = None
    role: str = Role.PANELIST
    signing_key: str | None = None
    signer: str | None = None
    reasoning: str | None = None
    max_output_tokens: int | None = None
    verify: bool = False
    allow_private_hosts: bool = False
    voter: list[str] | None = None
    budget_usd: float | None = None  # the seat's money cap in this duel, checked before every model request
    config_file: list[str] | None = None  # --config: more configuration files, above duel.local.toml
    as_json: bool = False  # what is printed: one summary object on stdout
    quiet: bool = False  # nothing on stderr but errors

    def check(self) -> None:
        """Refuse (``INVALID_ARGUMENT``) a --reasoning level that is none, a --max-output-tokens out of range,
        --voter without --verify, an --on-fabrication that is none of its words, and a --budget-usd that is not
        above 0 or is given to the audience (which takes no seat: nothing would keep it)."""
        from ..configuration import MAX_OUTPUT_TOKENS_RANGE

        if self.reasoning is not None and self.reasoning not in REASONING_LEVELS:
            raise invalid_argument(f"--reasoning must be one of {', '.join(REASONING_LEVELS)}, not {self.reasoning!r}")
        low, high = MAX_OUTPUT_TOKENS_RANGE
        if self.max_output_tokens is not None and not low <= self.max_output_tokens <= high:
            raise invalid_argument(
                f"--max-output-tokens must be between {low} and {high}, got {self.max_output_tokens}"
            )
        if not self.verify and self.voter:
            raise invalid_argument("--voter needs --verify")
        if self.budget_usd is not None and not self.budget_usd > 0:
            raise invalid_argument(f"--budget-usd must be above 0, got {self.budget_usd:g}", flag="--budget-usd")
        if self.budget_usd is not None and self.role == Role.AUDIENCE:
            raise invalid_argument("--budget-usd caps a seat's requests; the audience takes no seat")
        checked_on_fabrication(self.on_fabrication)

    def config_flags(self) -> Flags:
        """The flags that are the configuration's top layer."""
        return Flags(
            debate_dir=self.debate_dir,
            store=self.store,
            provider=self.provider,
            model=self.model,
            base_url=self.base_url,
            reasoning=self.reasoning,
            max_turns=self.max_turns,
            lease_seconds=self.lease_seconds,
            peer_wait_seconds=self.peer_wait_seconds,
            turn_timeout_seconds=self.turn_timeout_seconds,
            seats=self.seats,
            max_output_tokens=self.max_output_tokens,
            sealed_openings=self.sealed_openings or None,
            on_fabrication=self.on_fabrication,
        )


@dataclass(frozen=True, kw_only=True)
class PreparedJoin:
    """What the flags chose, before anything is sent: the seat's name and the lines to show first."""

    config: Config
    provider: Provider
    checker: CitationChecker | None  # with --verify
    name: str  # the display name: --name, else the provider's (Claude, GPT), else the model's
    notices: list[str]  # the servers and databases chosen, and the persona played: shown before the first request
    participant: ParticipantConfig


def checked_on_fabrication(value: str | None) -> str | None:
    """``--on-fabrication``, one of its words, or None when not given (``INVALID_ARGUMENT`` otherwise)."""
    if value is not None and value not in ON_FABRICATION:
        raise invalid_argument(f"--on-fabrication must be one of {', '.join(ON_FABRICATION)}, not {value!r}")
    return value


def prepare_join(flags: JoinFlags, *, cwd: Path, env: Mapping[str, str]) -> PreparedJoin:
    """Check the flags, load the configuration and choose the provider; a bad file or flag is refused
    before any model is looked up."""
    flags.check()
    config = load_config(cwd, env, flags.config_flags(), [Path(path) for path in flags.config_file or ()])
    settings = config.settings()._replace(chair=flags.chair)
    target = os.path.abspath(flags.target)
    check_join_inputs(target, settings)
    provider = select_provider(
        config.model.model,
        provider=config.model.provider,
        base_url=config.model.base_url,
        env=env,
        reasoning=config.model.reasoning,
        max_output_tokens=config.model.max_output_tokens,
    )
    checker = None
    if flags.verify:  # imported only then: a join without --verify loads no fetcher and no page extractor
        from .checking import citation_checker

        checker = citation_checker(flags.voter or [], allow_private_hosts=flags.allow_private_hosts)
    name = flags.name or DEFAULT_NAMES.get(provider.name) or provider.model.removeprefix("scripted:").capitalize()
    persona_line = played(flags.persona, config.personas)
    participant = ParticipantConfig(
        target=target,
        debate_dir=config.debate_dir,
        name=name,
        topic=flags.topic,
        persona=resolve(flags.persona, config.personas),
        position=flags.position,
        settings=settings,
        signing_key=flags.signing_key or None,
        signer=flags.signer or None,
        store=config.store,
        role=flags.role,
        allow_private_hosts=flags.allow_private_hosts,
        budget_usd=flags.budget_usd,
    )
    notices = [*destinations(config), *([persona_line] if persona_line else [])]
    return PreparedJoin(
        config=config, provider=provider, checker=checker, name=name, notices=notices, participant=participant
    )

"""`duel skill`: instructions generated from the rules and the CLI, installed idempotently,
and followable: two agents that know nothing but the installed text finish a duel."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import pytest

import rp1_duel
from rp1_duel import vocabulary
from rp1_duel.cli import skill, skill_setup, tools
from rp1_duel.cli.tools import OPS
from rp1_duel.cli.tools_flags import read_plain
from rp1_duel.cli.tools_parser import parse
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.turns import OUTCOMES
from rp1_duel.turns.rules import RULES
from rp1_duel.vocabulary import STANCES

from helpers import join, make_turn

PACKAGE = Path(rp1_duel.__file__).parent
# The next_step words as the vocabulary defines them, one constant each (the lower-case values).
NEXT_STEP_WORDS = sorted(v for k, v in vars(vocabulary).items() if k.isupper() and isinstance(v, str) and v.islower())


def duel_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 90) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("DUEL_PARTICIPANT_TOKEN", "DUEL_DIR")}
    return subprocess.run(
        [sys.executable, "-m", "rp1_duel", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=timeout,
    )


def install(tmp_path: Path, harness: str, scope: str, *extra: str) -> subprocess.CompletedProcess:
    return duel_cli(
        "skill",
        "--harness",
        harness,
        "--install",
        "--scope",
        scope,
        "--home",
        str(tmp_path / "home"),
        "--project",
        str(tmp_path / "project"),
        *extra,
    )


TARGETS = {
    ("claude-code", "user"): "home/.claude/skills/duel/SKILL.md",
    ("claude-code", "project"): "project/.claude/skills/duel/SKILL.md",
    ("codex", "user"): "home/.codex/prompts/duel.md",
    ("codex", "project"): "project/AGENTS.md",
}


# -- what an agent reads out of the text --------------------------------------------------
INLINE = re.compile(r"^`([^`]+)`$")


def table(text: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header row is ``header`` (cells stripped)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


@dataclass
class Instructions:
    join: str
    steps: dict[str, str]
    status: str
    variables: dict[str, tuple[str, str]]  # name -> (data path, op)
    errors: dict[str, str]  # error code -> next_step | stop | retry


def parse_instructions(text: str) -> Instructions:
    # ${VAR} (the Codex prompt file's spelling) is the same shell variable as $VAR.
    text = re.sub(r"\$\{([A-Z][A-Z0-9_]*)\}", r"$\1", text)
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert len(blocks) == 1, "exactly one ```sh block: the join"
    lines = [line for line in blocks[0].splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) == 1, lines
    assert lines[0].startswith("duel tools join "), lines
    steps = {}
    for word, command in table(text, "| next_step | command |"):
        match = INLINE.match(command)
        assert match, f"{word}: one inline `duel tools` command"
        assert match.group(1).startswith("duel tools "), f"{word}: one inline `duel tools` command"
        steps[word.strip("`")] = match.group(1)
    variables = {}
    for name, source in table(text, "| variable | from |"):
        found = re.search(r"`(data\.[a-z_.]+)` of `([a-z-]+)`", source)
        if found:
            variables[name.strip("`$")] = (found.group(1), found.group(2))
    errors = {}
    for codes, then, _ in table(text, "| error.code | next_step | what to do |"):
        for code in re.findall(r"`([A-Z_]+)`", codes):
            errors[code] = then.strip("`")
    status = re.search(r"`(duel tools status [^`]+)`", text)
    assert status
    return Instructions(lines[0], steps, status.group(1), variables, errors)


def installed_instructions(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.name == "AGENTS.md":
        text = text[text.index(skill.START) : text.index(skill.END)]
    return text


# -- the agent --------------------------------------------------------------------------
def dig(data: dict[str, Any], path: str) -> Any:
    value: Any = {"data": data}
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


@dataclass
class Agent:
    """Follows the instructions literally: the join block, then the next_step table."""

    text: Instructions
    name: str
    harness: str
    model: str
    target: Path
    debate_dir: Path
    turn_file: Path
    stances: dict[int, str]
    bad_first_draft: bool = False
    values: dict[str, str] = field(default_factory=dict)
    transcript: list[str] = field(default_factory=list)
    violations_seen: list[dict] = field(default_factory=list)
    final: dict | None = None

    def run(self, command: str) -> dict:
        argv = [
            re.sub(r"\$\{?([A-Z][A-Z0-9_]*)\}?", lambda m: self.values.get(m.group(1), ""), token)
            for token in shlex.split(command)
        ]
        assert argv[:2] == ["duel", "tools"], argv
        env = {"DUEL_PARTICIPANT_TOKEN": self.values.get("DUEL_PARTICIPANT_TOKEN", "")}
        proc = duel_cli(*argv[1:], env=env)
        assert proc.stdout.count("\n") == 1, (proc.stdout, proc.stderr)
        answer = json.loads(proc.stdout)
        secret = self.values.get("DUEL_PARTICIPANT_TOKEN")
        self.transcript.append(
            f"{time.monotonic():.1f} {argv[2]} -> {json.dumps(answer)[:300]}".replace(secret or "\0", "<token>")
        )
        if answer["success"]:
            for name, (path, op) in self.text.variables.items():
                value = dig(answer["data"], path) if answer["command"] == op else None
                if value is not None:
                    self.values[name] = str(value)
        return answer

    def write_turn(self) -> None:
        status = self.run(self.text.status)["data"]
        n = status["turn_count"] + 1
        turn = make_turn(n, self.name, self.harness, self.model, self.stances.get(n, "ACCEPTING_CONSENSUS"))
        if self.bad_first_draft:
            self.bad_first_draft = False
            turn = turn.replace(" (non-blocking)", "")  # breaks UNRESOLVED_TAG: repair from the violations
        self.turn_file.write_text(turn, encoding="utf-8")

    def play(self) -> None:
        self.values.update(
            TARGET=str(self.target),
            NAME=self.name,
            HARNESS=self.harness,
            MODEL_ID=self.model,
            DEBATE_DIR=str(self.debate_dir),
            TURN_FILE=str(self.turn_file),
        )
        answer = self.run(self.text.join)
        assert answer["success"], answer
        step = answer["data"]["next_step"]
        for _ in range(400):
            if step == "compose_turn":
                self.write_turn()
            if step == "close":
                self.run(self.text.status)  # sets $OUTCOME
            command = self.text.steps[step]  # a missing row is a KeyError: the text drifted
            answer = self.run(command)
            if step == "closed":
                self.final = answer["data"]
                return
            if answer["success"]:
                if answer["command"] == "claim-lock" and not answer["data"]["acquired"]:
                    answer = self.run(self.text.steps["wait_turn"])
                step = answer["data"]["next_step"]
                continue
            error = answer["error"]
            if error["code"] == "TURN_INVALID":
                self.violations_seen += error["details"]["violations"]
            then = (error.get("details") or {}).get("next_step") or self.text.errors[error["code"]]
            assert then != "stop", f"{self.name} told to stop: {error}"
            if then != "retry":
                step = then
        raise AssertionError(f"{self.name} never reached closed:\n" + "\n".join(self.transcript[-30:]))


def run_duel(text: str, source: Path, debate_dir: Path, tmp_path: Path, stances: dict[int, str]) -> list[Agent]:
    instructions = parse_instructions(text)
    agents = [
        Agent(instructions, "Alice", "claude-code", "claude-x", source, debate_dir, tmp_path / "alice.md", stances),
        Agent(
            instructions,
            "Bob",
            "codex",
            "unknown-model",
            source,
            debate_dir,
            tmp_path / "bob.md",
            stances,
            bad_first_draft=True,
        ),
    ]
    failures: list[BaseException] = []

    def play(agent: Agent) -> None:
        try:
            if agent is agents[1]:
                # Join once the first agent is waiting for a peer: `wait` returns on a change after it
                # began, so a peer that joins in the instant between `join` and `wait` costs a full
                # --timeout (correct, just slow).
                while not agents[0].transcript and not failures:
                    time.sleep(0.05)
                time.sleep(1.0)
            agent.play()
        except BaseException as exc:  # noqa: BLE001  whatever ends a thread is re-raised by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=play, args=(agent,)) for agent in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    if failures:
        raise failures[0]
    return agents


CONSENSUS = {1: "OPEN_TO_DEBATE", 2: "CONVERGING"}  # then ACCEPTING_CONSENSUS
NEVER_AGREE = dict.fromkeys(range(1, 51), "OPEN_TO_DEBATE")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("harness", "scope", "stances", "outcome", "turns"),
    [
        ("claude-code", "project", CONSENSUS, "ACCEPTED_CONSENSUS", 4),
        ("codex", "project", NEVER_AGREE, "MAX_TURNS", 6),
    ],
)
def test_two_agents_following_the_installed_text_finish_a_duel(
    tmp_path, source, debate_dir, harness, scope, stances, outcome, turns
):
    assert install(tmp_path, harness, scope).returncode == 0
    text = installed_instructions(tmp_path / TARGETS[harness, scope])
    agents = run_duel(text, source, debate_dir, tmp_path, stances)
    finals = [agent.final for agent in agents]
    for final in finals:
        assert final is not None, "an agent never saw the duel close"
        assert final["duel"]["status"] == "CLOSED"
        assert final["duel"]["outcome"] == outcome
        assert final["turn_count"] == turns
    bob = agents[1]
    assert bob.violations_seen
    assert all({"code", "message", "line"} <= set(v) for v in bob.violations_seen)
    assert "UNRESOLVED_TAG" in {v["code"] for v in bob.violations_seen}
    assert finals[0] is not None
    artifact = Path(finals[0]["duel"]["debate_path"])
    checked = duel_cli("validate", str(artifact))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    body = artifact.read_text(encoding="utf-8")
    assert all(agent.values["DUEL_PARTICIPANT_TOKEN"] not in body for agent in agents)
    assert "unknown-model" in body  # an agent that does not know its model says so


@pytest.mark.slow
def test_every_installed_variant_gives_the_same_commands(tmp_path):
    parsed = []
    for (harness, scope), target in TARGETS.items():
        assert install(tmp_path, harness, scope).returncode == 0
        parsed.append(parse_instructions(installed_instructions(tmp_path / target)))
    parsed.append(parse_instructions(skill.render("generic")))
    assert all(p == parsed[0] for p in parsed[1:])


# -- derived from the source of truth --------------------------------------------------------
@pytest.mark.parametrize("harness", skill.HARNESSES)
def test_text_covers_every_rule_step_outcome_op_flag_and_error(harness):
    text = skill.render(harness)
    for word in [*RULES, *NEXT_STEP_WORDS, *OUTCOMES, *STANCES, *OPS]:
        assert f"`{word}`" in text, word
    for op, (_, flags) in OPS.items():
        for flag, _kwargs in flags:
            assert f"`{flag}" in text, (op, flag)
    assert set(NEXT_STEP_WORDS) == set(vocabulary.NEXT_STEPS)
    instructions = parse_instructions(text)
    assert sorted(instructions.steps) == NEXT_STEP_WORDS
    assert set(raised_error_codes()) <= set(instructions.errors)
    assert set(instructions.errors.values()) <= set(NEXT_STEP_WORDS) | {"stop", "retry"}
    for needed in (
        "DUEL_PARTICIPANT_TOKEN",
        "--harness",
        "--model-id",
        "unknown-model",
        "error.details.violations",
        "turn_count",
        "pending_outcome",
        "--reason",
    ):
        assert needed in text, needed


def raised_error_codes() -> set[str]:
    """Every error code the service and `duel tools` can raise, read from the package source.

    The model providers' codes (only `duel join` meets them), `duel verify`'s, `duel panel`'s,
    `duel apply`'s, `duel bench`'s, `duel ci github`'s and the skill installer's own are not the agent's concern.
    """
    codes = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in ("cli/skill.py", "cli/skill_setup.py", "record/agreed.py") or relative.startswith(
            ("participant/providers/", "verify/", "participant/panel.py", "benchmark/", "ci/")
        ):
            continue
        source = path.read_text(encoding="utf-8")
        codes |= set(re.findall(r'DuelError\(\s*(?:ErrorCode\.|")([A-Z][A-Z_]+)', source))
        codes |= set(re.findall(r'code: str = (?:ErrorCode\.|")([A-Z][A-Z_]+)', source))
    # The scan must still see the service's refusals, or the check below it would be empty.
    assert {"DUEL_FULL", "LEASE_EXPIRED", "NOT_YOUR_TURN", "STATE_CORRUPT", "ARTIFACT_TAMPERED"} <= codes, codes
    codes |= {"TURN_INVALID", "INVALID_ARGUMENT"}
    return codes


def test_every_command_of_the_text_parses_with_the_real_cli_flags():
    instructions = parse_instructions(skill.render("generic"))
    for command in [instructions.join, instructions.status, *instructions.steps.values()]:
        argv = [re.sub(r"\$[A-Z_]+", "x", token) for token in shlex.split(command)][2:]
        # A wrong flag raises FlagsRefused; and each command the text gives takes the plain reader.
        assert read_plain(argv) == parse(argv), command


def test_the_texts_waits_authenticate_with_the_exported_token(source, debate_dir, monkeypatch):
    """Waiting with the token keeps the seat (docs/protocol.md section 3): the text's waits send it."""
    alice = join(DuelService(debate_dir), source, "Alice")
    steps = parse_instructions(skill.render("generic")).steps
    values = {"DUEL_ID": alice.duel_id, "PARTICIPANT_ID": alice.id, "DEBATE_DIR": str(debate_dir)}
    for step in ("wait_peer", "wait_turn"):
        argv = [re.sub(r"\$([A-Z_]+)", lambda m: values[m.group(1)], token) for token in shlex.split(steps[step])]
        args = parse(argv[2:])
        args.timeout = 0.0
        monkeypatch.setenv("DUEL_PARTICIPANT_TOKEN", "pt_not-hers")
        with pytest.raises(DuelError) as info:
            tools.run("wait", args)
        assert info.value.code == "PARTICIPANT_AUTH_FAILED"
        monkeypatch.setenv("DUEL_PARTICIPANT_TOKEN", alice.token)
        assert tools.run("wait", args)["next_step"] == "wait_peer"


def test_the_fallback_for_duel_off_path_names_a_runnable_module():
    found = re.search(r"run `python -m ([\w.]+) tools …`", skill.render("generic"))
    assert found, "the text names no `python -m … tools` fallback"
    assert importlib.util.find_spec(f"{found.group(1)}.__main__") is not None, found.group(1)


def test_each_harness_gets_a_form_it_loads_as_is():
    claude = skill.render("claude-code")
    meta = frontmatter.loads(claude)
    assert meta["name"] == "duel"
    description = meta["description"]
    assert isinstance(description, str) and 0 < len(description) <= 1024
    assert "!`" not in claude  # Claude Code would run it as a command when loading the skill
    assert not re.search(r"\$[0-9]|\$ARGUMENTS", claude)  # nor substitute skill arguments into it
    assert "`claude-code`" in claude
    codex = skill.render("codex")
    assert codex.startswith(skill.START + "\n")
    assert codex.endswith(skill.END + "\n")
    assert codex.count(skill.START) == codex.count(skill.END) == 1
    assert len(codex.encode()) < 32 * 1024  # Codex reads at most 32 KiB of AGENTS.md by default
    prompt = skill.render_codex_prompt()
    assert frontmatter.loads(prompt)["description"]
    assert not re.search(r"(?<!\$)\$[A-Z]|\$[0-9]", prompt)  # Codex would ask for each $NAME as a prompt argument
    generic = skill.render("generic")
    assert skill.START not in generic
    assert not generic.startswith("---")


# -- printing and installing through the real CLI (`duel skill` processes: slow) ----------
@pytest.mark.slow
@pytest.mark.parametrize("harness", skill.HARNESSES)
def test_print_writes_the_text_to_stdout(harness):
    result = duel_cli("skill", "--harness", harness)
    assert result.returncode == 0
    assert result.stdout == skill.render(harness)


@pytest.mark.slow
@pytest.mark.parametrize(("harness", "scope"), list(TARGETS))
def test_install_is_idempotent(tmp_path, harness, scope):
    target = tmp_path / TARGETS[harness, scope]
    first = install(tmp_path, harness, scope)
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"installed: {target}\n"
    expected = skill.render_codex_prompt() if (harness, scope) == ("codex", "user") else skill.render(harness)
    content = target.read_bytes()
    assert content == expected.encode()
    stamp = target.stat().st_mtime_ns
    second = install(tmp_path, harness, scope)
    assert second.returncode == 0
    assert second.stdout == f"unchanged: {target}\n"
    assert target.read_bytes() == content
    assert target.stat().st_mtime_ns == stamp


@pytest.mark.slow
@pytest.mark.parametrize(("harness", "scope"), [key for key in TARGETS if key != ("codex", "project")])
def test_a_foreign_file_is_kept_without_force_and_replaced_with_it(tmp_path, harness, scope):
    target = tmp_path / TARGETS[harness, scope]
    target.parent.mkdir(parents=True)
    target.write_text("---\nname: duel\ndescription: mine\n---\nMy own instructions.\n")
    refused = install(tmp_path, harness, scope)
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert refused.stderr.startswith("duel: SKILL_EXISTS: ")
    assert refused.stderr.count("\n") == 1
    assert target.read_text() == "---\nname: duel\ndescription: mine\n---\nMy own instructions.\n"
    forced = install(tmp_path, harness, scope, "--force")
    assert forced.returncode == 0
    assert forced.stdout == f"replaced: {target}\n"
    assert skill.generated_by_us(target.read_text())


@pytest.mark.slow
def test_an_edited_generated_file_is_kept_and_an_older_one_updated(tmp_path):
    target = tmp_path / TARGETS["claude-code", "project"]
    assert install(tmp_path, "claude-code", "project").returncode == 0
    generated = target.read_text()
    target.write_text(generated.replace("## 1. Join", "## 1. Join (my note)"))
    assert install(tmp_path, "claude-code", "project").returncode == 1
    assert "(my note)" in target.read_text()
    # An older version that duel skill wrote (its fingerprint matches) is simply updated.
    target.write_text(refingerprint(generated.replace("## 1. Join", "## 1. Joining")))
    updated = install(tmp_path, "claude-code", "project")
    assert updated.returncode == 0
    assert updated.stdout == f"updated: {target}\n"
    assert target.read_text() == generated


def refingerprint(text: str) -> str:
    line = re.search(r"^<!-- duel:skill sha256=([0-9a-f]{64}) .*-->\n", text, re.MULTILINE)
    assert line is not None, "no duel:skill fingerprint line"
    rest = text[: line.start()] + text[line.end() :]
    digest = hashlib.sha256(rest.encode()).hexdigest()
    return text[: line.start()] + line.group(0).replace(line.group(1), digest) + text[line.end() :]


@pytest.mark.slow
def test_agents_md_keeps_everything_outside_the_section(tmp_path):
    agents_md = tmp_path / "project" / "AGENTS.md"
    agents_md.parent.mkdir()
    before = "# Project rules\n\nUse tabs.\n"
    agents_md.write_text(before)
    assert install(tmp_path, "codex", "project").returncode == 0
    text = agents_md.read_text()
    assert text == before + "\n" + skill.render("codex")
    # The user adds text after the section and edits above it: a reinstall keeps both.
    agents_md.write_text(text.replace("Use tabs.", "Use spaces.") + "\n## Later notes\nkeep me\n")
    again = install(tmp_path, "codex", "project")
    assert again.returncode == 0
    assert again.stdout.startswith("unchanged: ")
    # An older generated section is replaced in place, the rest untouched.
    edited = agents_md.read_text()
    older = refingerprint(skill.render("codex").replace("## 1. Join", "## 1. Joining"))
    agents_md.write_text(edited.replace(skill.render("codex"), older))
    assert install(tmp_path, "codex", "project").stdout.startswith("updated: ")
    assert agents_md.read_text() == edited
    # A section edited by hand is kept without --force, replaced with it; the rest never changes.
    agents_md.write_text(edited.replace("## 2. The loop", "## 2. My loop"))
    refused = install(tmp_path, "codex", "project")
    assert refused.returncode == 1
    assert refused.stderr.startswith("duel: SKILL_EXISTS: ")
    assert "## 2. My loop" in agents_md.read_text()
    assert install(tmp_path, "codex", "project", "--force").returncode == 0
    assert agents_md.read_text() == edited


@pytest.mark.slow
def test_a_crlf_agents_md_without_final_newline_gets_a_crlf_section(tmp_path):
    agents_md = tmp_path / "project" / "AGENTS.md"
    agents_md.parent.mkdir()
    agents_md.write_bytes(b"# Rules\r\n\r\nBe kind.")
    assert install(tmp_path, "codex", "project").returncode == 0
    raw = agents_md.read_bytes()
    assert raw.startswith(b"# Rules\r\n\r\nBe kind.\r\n\r\n" + skill.START.encode() + b"\r\n")
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert install(tmp_path, "codex", "project").stdout.startswith("unchanged: ")
    assert agents_md.read_bytes() == raw


@pytest.mark.slow
def test_unbalanced_markers_need_force(tmp_path):
    agents_md = tmp_path / "project" / "AGENTS.md"
    agents_md.parent.mkdir()
    agents_md.write_text(f"intro\n{skill.START}\nhalf a section\n")
    assert install(tmp_path, "codex", "project").returncode == 1
    assert install(tmp_path, "codex", "project", "--force").returncode == 0
    text = agents_md.read_text()
    assert text.startswith("intro\nhalf a section\n")
    assert text.count(skill.START) == 1
    assert install(tmp_path, "codex", "project").stdout.startswith("unchanged: ")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--harness", "generic", "--install"), "INVALID_ARGUMENT"),
        (("--harness", "vim"), "INVALID_ARGUMENT"),
        (("--harness", "codex", "--install", "--scope", "galaxy"), "INVALID_ARGUMENT"),
    ],
)
def test_bad_flags_fail_in_one_line_with_exit_2_and_write_nothing(tmp_path, args, code):
    result = duel_cli("skill", *args, "--home", str(tmp_path / "h"), "--project", str(tmp_path / "p"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"duel: {code}: ")
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "h").exists()
    assert not (tmp_path / "p").exists()


def test_library_install_returns_the_same_paths_when_run_again(tmp_path):
    paths = skill_setup.install("claude-code", scope="user", home=tmp_path / "home", project=tmp_path / "project")
    assert paths == [tmp_path / TARGETS["claude-code", "user"]]
    assert (
        skill_setup.install("claude-code", scope="user", home=tmp_path / "home", project=tmp_path / "project") == paths
    )

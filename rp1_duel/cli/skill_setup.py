"""``duel skill --install``: the instructions written where each harness reads them, and (``--mcp``) the
harness set up for ``duel mcp``. The text itself is :mod:`.skill`'s.

Installing: a file duel wrote carries its fingerprint (:func:`~.skill.generated_by_us`) and is replaced by a
newer version; any other is kept unless ``force`` (``SKILL_EXISTS``). A project install writes only inside the
project (``PATH_OUTSIDE_PROJECT`` for a committed link out of it).

``--mcp`` (:func:`install_mcp_report`) sets a harness up for ``duel mcp`` instead: the server
entry (:func:`mcp_server_command`) merged into the harness's MCP configuration, and a short
skill that names the tools. Decisions:
- The entry starts the ``duel`` on PATH at project scope (a committed file names nothing of one
  machine), this Python at user scope; it carries what the harness needs to run the tools headless
  (Codex: required and approved; Gemini CLI: trusted; both a timeout above duel_wait's bound), and
  Claude Code's settings allow ``mcp__duel``. The trust of a folder is the user's to give: the
  install prints it (:func:`mcp_trust_step`). An equal entry is left alone (byte for byte); a
  different one is replaced only with ``force`` (``SKILL_EXISTS``): a configuration entry has
  no fingerprint, so any difference may be the user's.
- JSON files are parsed and written back whole, indented by two spaces, keys in their order; an
  empty file counts as ``{}``. TOML is edited as text: the ``[mcp_servers.duel]`` table and its
  subtables are cut out (comment lines just before the next table stay: they head that table),
  the new table goes where the first was, or at the end. The result is parsed again, and refused
  unless it equals the old file with only the entry changed (a ``duel`` server written inline).
- Codex's user-scope skill is a section of ``~/.codex/AGENTS.md``, which Codex always loads: the
  tools' skill is short, and needs no prompt to be invoked.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..confinement import confine
from ..errors import DuelError, invalid_argument
from ..files import MAX_SOURCE_BYTES, read_bounded, write_atomic
from ..printable import printable
from ..vocabulary import ErrorCode
from .skill import (
    END,
    HARNESSES,
    NAME,
    SCOPES,
    START,
    check_mcp_harness,
    generated_by_us,
    render,
    render_codex_prompt,
    render_mcp,
)

__all__ = [
    "Installed",
    "install",
    "install_mcp_report",
    "install_report",
    "mcp_config_path",
    "mcp_server_command",
    "mcp_trust_step",
    "render_mcp_setup",
    "skill_output",
]


# -- installing --------------------------------------------------------------------------
@dataclass(frozen=True)
class Installed:
    """A file ``duel skill --install`` wrote, and what it did to it."""

    path: Path
    action: str  # "installed", "updated", "replaced" (with force) or "unchanged"


def install(harness: str, *, scope: str, home: Path, project: Path, force: bool = False) -> list[Path]:
    """Install the instructions where ``harness`` looks for them; return the paths."""
    return [item.path for item in install_report(harness, scope=scope, home=home, project=project, force=force)]


def install_report(harness: str, *, scope: str, home: Path, project: Path, force: bool = False) -> list[Installed]:
    """Install the instructions as :func:`install` does; return each file with what was done to it."""
    if harness not in HARNESSES:
        raise invalid_argument(f"--harness must be one of {', '.join(HARNESSES)}, not {harness!r}")
    _check_scope(scope)
    home, project = Path(home).expanduser(), Path(project).expanduser()
    if harness == "claude-code":
        root = home if scope == "user" else project
        path, text, how = root / ".claude" / "skills" / NAME / "SKILL.md", render(harness), _install_file
    elif harness == "codex" and scope == "user":
        path, text, how = home / ".codex" / "prompts" / f"{NAME}.md", render_codex_prompt(), _install_file
    elif harness == "codex":
        path, text, how = project / "AGENTS.md", render(harness), _install_section
    elif harness == "gemini":
        path, text, how = _gemini_md(scope, home, project), render(harness), _install_section
    else:
        raise invalid_argument("generic instructions are print-only: run `duel skill --harness generic` and paste them")
    _stay_inside(scope, project, path)
    return [how(path, text, force=force)]


def _stay_inside(scope: str, project: Path, *paths: Path) -> None:
    """A project install writes only inside the project: a committed link (``AGENTS.md``, ``.claude``) that
    leads elsewhere is the repository's word, not the user's (``PATH_OUTSIDE_PROJECT``). A user install
    follows the user's own links (a dotfile manager's)."""
    if scope == "project":
        for path in paths:
            confine(path, project=project, what="duel skill's file", hint="remove the link, or use --scope user")


def _check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise invalid_argument(f"--scope must be user or project, not {scope!r}")


def _gemini_md(scope: str, home: Path, project: Path) -> Path:
    return project / "GEMINI.md" if scope == "project" else home / ".gemini" / "GEMINI.md"


def _exists(path: Path) -> DuelError:
    return DuelError(
        ErrorCode.SKILL_EXISTS,
        f"{path} exists and was not generated by duel skill (or was edited): --force replaces it",
    )


_NOT_TEXT = "\x00not utf-8\x00"  # what _read gives for a file that is not UTF-8 (never ours)


def _read(path: Path) -> str | None:
    if path.is_dir():
        raise DuelError(ErrorCode.SKILL_EXISTS, f"{path} is a directory")
    try:
        raw = read_bounded(path, MAX_SOURCE_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # a FIFO or a device in the repository is refused, never read
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise DuelError(ErrorCode.SKILL_WRITE_FAILED, f"cannot read {path}: {reason}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _NOT_TEXT


def _install_file(path: Path, text: str, *, force: bool) -> Installed:
    old = _read(path)
    if old == text:
        return Installed(path, "unchanged")
    if old is not None and not generated_by_us(old) and not force:
        raise _exists(path)
    action = "installed" if old is None else ("updated" if generated_by_us(old) else "replaced")
    _write(path, text)
    return Installed(path, action)


def _install_section(path: Path, text: str, *, force: bool) -> Installed:
    old = _read(path)
    if old is None:
        _write(path, text)
        return Installed(path, "installed")
    if old == _NOT_TEXT:
        raise DuelError(ErrorCode.SKILL_EXISTS, f"{path} is not UTF-8 text: not touched")
    newline = "\r\n" if "\r\n" in old else "\n"
    text = text.replace("\n", newline)
    lines = old.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == START]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        before, current, after = lines[: starts[0]], lines[starts[0] : ends[0] + 1], lines[ends[0] + 1 :]
        current_text = "".join(current)
        if current_text == text or (current_text + newline == text and not after):
            return Installed(path, "unchanged")
        if not generated_by_us(current_text) and not force:
            raise DuelError(
                ErrorCode.SKILL_EXISTS, f"the duel section of {path} was edited by hand: --force replaces it"
            )
        action = "updated" if generated_by_us(current_text) else "replaced"
        _write(path, "".join(before) + text + "".join(after))
        return Installed(path, action)
    if starts or ends:
        if not force:
            raise DuelError(
                ErrorCode.SKILL_EXISTS,
                f"{path} has unbalanced duel:skill markers: fix them, or --force "
                "drops those marker lines and appends a fresh section",
            )
        old = "".join(line for i, line in enumerate(lines) if i not in starts and i not in ends)
    separator = "" if not old else newline if old.endswith(("\n", "\r")) else newline * 2
    _write(path, old + separator + text)
    return Installed(path, "installed")


def _write(path: Path, text: str) -> None:
    """Atomic (:func:`write_atomic`), through a symlink to its target; keeps an existing file's mode."""
    target = path.resolve() if path.is_symlink() else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = None
        write_atomic(target, text.encode("utf-8"), mode=0o666 if mode is None else mode)
        if mode is not None:
            os.chmod(target, mode)  # os.open took the umask off the old mode: give the file back all of it
    except OSError as exc:
        raise DuelError(ErrorCode.SKILL_WRITE_FAILED, f"cannot write {path}: {exc.strerror or exc}") from None


def mcp_server_command(harness: str, scope: str = "project") -> tuple[str, list[str]]:
    """The command and arguments that start ``duel mcp`` for ``harness``. At project scope the ``duel``
    on PATH, so the committed file works on every machine; at user scope the Python running this, so
    the server runs in the virtualenv duel skill ran in, activated or not."""
    check_mcp_harness(harness)
    _check_scope(scope)
    args = ["mcp", "--harness", harness]
    return ("duel", args) if scope == "project" else (sys.executable, ["-m", "rp1_duel", *args])


# How long a harness lets one tool call run, and Codex a required server start: well above duel_wait's
# bound (45 s, rp1_duel.mcp_server.seat.WAIT_BOUND_SECONDS), so a wait always answers before the harness gives up.
TOOL_TIMEOUT_SECONDS = 120


STARTUP_TIMEOUT_SECONDS = 30


def _mcp_entry(harness: str, scope: str) -> dict[str, Any]:
    """The server entry: the command, and what the harness needs to offer and run the tools headless."""
    command, args = mcp_server_command(harness, scope)
    entry: dict[str, Any] = {"command": command, "args": args}
    if harness == "codex":
        # Required: Codex does not wait for an optional server before its first model request. Approved:
        # under `codex exec` (approval policy "never") a tool call needing approval is refused.
        entry |= {
            "required": True,
            "startup_timeout_sec": STARTUP_TIMEOUT_SECONDS,
            "tool_timeout_sec": TOOL_TIMEOUT_SECONDS,
            "default_tools_approval_mode": "approve",
        }
    elif harness == "gemini":
        # Trusted: headless Gemini CLI offers no tool that would need a confirmation. Its timeout is in ms.
        entry |= {"timeout": TOOL_TIMEOUT_SECONDS * 1000, "trust": True}
    return entry


def mcp_config_path(harness: str, *, scope: str, home: Path, project: Path) -> Path:
    """The file ``harness`` reads its MCP servers from at ``scope``."""
    check_mcp_harness(harness)
    root = project if scope == "project" else home
    if harness == "claude-code":
        return project / ".mcp.json" if scope == "project" else home / ".claude.json"
    if harness == "codex":
        return root / ".codex" / "config.toml"
    return root / ".gemini" / "settings.json"


def _claude_settings_path(scope: str, home: Path, project: Path) -> Path:
    return (project if scope == "project" else home) / ".claude" / "settings.json"


def _claude_allowances(scope: str) -> list[tuple[tuple[str, ...], str]]:
    """What Claude Code's settings must list, each a key path and a value: duel's tools allowed (``claude -p``
    refuses a tool nobody allowed), and at project scope the ``.mcp.json`` server approved (else an
    interactive Claude Code asks first)."""
    allowed = [(("permissions", "allow"), f"mcp__{NAME}")]
    return allowed + ([(("enabledMcpjsonServers",), NAME)] if scope == "project" else [])


def _mcp_skill_path(harness: str, *, scope: str, home: Path, project: Path) -> Path:
    if harness == "claude-code":
        return (project if scope == "project" else home) / ".claude" / "skills" / NAME / "SKILL.md"
    if harness == "codex":
        return project / "AGENTS.md" if scope == "project" else home / ".codex" / "AGENTS.md"
    return _gemini_md(scope, home, project)


def _json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _toml_value(value: Any) -> str:
    # A JSON string, number or array of strings is TOML; ensure_ascii=False, as TOML has no surrogate pairs.
    return ("true" if value else "false") if isinstance(value, bool) else json.dumps(value, ensure_ascii=False)


def _toml_table(entry: dict[str, Any]) -> str:
    keys = "".join(f"{key} = {_toml_value(value)}\n" for key, value in entry.items())
    return f"[mcp_servers.{NAME}]\n{keys}"


def _entry_text(harness: str, scope: str) -> str:
    """The entry as it goes into the harness's file: a ``mcpServers`` object, or a TOML table."""
    entry = _mcp_entry(harness, scope)
    return _toml_table(entry) if harness == "codex" else _json_text({"mcpServers": {NAME: entry}})


def _allowances_text(scope: str) -> str:
    """Claude Code's allowances as the settings object they are merged into."""
    data: dict[str, Any] = {}
    for keys, value in _claude_allowances(scope):
        holder = data
        for key in keys[:-1]:
            holder = holder.setdefault(key, {})
        holder[keys[-1]] = [value]
    return _json_text(data)


def render_mcp_setup(harness: str, *, scope: str, home: Path, project: Path) -> str:
    """What :func:`install_mcp_report` would write, each part under a ``==> PATH <==`` line: the
    entry to merge into that file's servers, Claude Code's allowances to merge into its settings, then
    the skill (in AGENTS.md or GEMINI.md, its section)."""
    check_mcp_harness(harness)
    _check_scope(scope)
    config = mcp_config_path(harness, scope=scope, home=home, project=project)
    skill_file = _mcp_skill_path(harness, scope=scope, home=home, project=project)
    settings = _claude_settings_path(scope, home, project)
    _stay_inside(scope, project, config, skill_file, *([settings] if harness == "claude-code" else []))
    parts = [f"==> {config} <==\n{_entry_text(harness, scope)}"]
    if harness == "claude-code":
        parts.append(f"==> {settings} <==\n{_allowances_text(scope)}")
    parts.append(f"==> {skill_file} <==\n{render_mcp(harness)}")
    return "\n".join(parts)


def mcp_trust_step(harness: str, *, scope: str, home: Path, project: Path) -> str:
    """What the user must still do for ``harness`` to run duel's tools, in lines to print: the trust that
    only the user may give (duel never gives it), as the exact text to add to a file; empty when nothing."""
    check_mcp_harness(harness)
    _check_scope(scope)
    if harness == "claude-code" and scope == "project":
        trusted = json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": True}}}, ensure_ascii=False)
        return (
            "to do: Claude Code reads .claude/settings.json (and its allow rule) only in a trusted folder: run claude "
            f"there once and accept its trust dialog, or merge into {home / '.claude.json'}:\n{trusted}\n"
        )
    if harness == "codex" and scope == "project":
        table = f'[projects.{_toml_value(str(project))}]\ntrust_level = "trusted"\n'
        config = home / ".codex" / "config.toml"
        return f"to do: Codex reads .codex/config.toml only in a trusted project: add to {config}:\n{table}"
    if harness == "gemini":
        trusted = json.dumps({str(project): "TRUST_FOLDER"}, ensure_ascii=False)
        return (
            "to do: Gemini CLI runs only in a trusted folder (each folder you start it in): start gemini there "
            f"once and trust it, or merge into {home / '.gemini' / 'trustedFolders.json'}:\n{trusted}\n"
        )
    return ""


def install_mcp_report(harness: str, *, scope: str, home: Path, project: Path, force: bool = False) -> list[Installed]:
    """Merge the ``duel mcp`` entry into the MCP configuration of ``harness`` (and, for Claude Code, the
    allowances into its settings) and install the skill for its tools; return each file with what was done.
    A refusal comes before anything is written."""
    check_mcp_harness(harness)
    _check_scope(scope)
    home, project = Path(home).expanduser(), Path(project).expanduser()
    config = mcp_config_path(harness, scope=scope, home=home, project=project)
    skill_file = _mcp_skill_path(harness, scope=scope, home=home, project=project)
    settings = _claude_settings_path(scope, home, project) if harness == "claude-code" else None
    _stay_inside(scope, project, config, skill_file, *([settings] if settings else []))
    merge = _merge_toml if harness == "codex" else _merge_json
    text, action = merge(config, _read_text(config), _mcp_entry(harness, scope), force=force)
    allowed = _merge_allowances(settings, _read_text(settings), scope) if settings else None
    install_skill = _install_file if harness == "claude-code" else _install_section
    skill_done = install_skill(skill_file, render_mcp(harness), force=force)
    done = [Installed(config, action)]
    if action != "unchanged":
        _write(config, text)
    if settings and allowed:
        if allowed[1] != "unchanged":
            _write(settings, allowed[0])
        done.append(Installed(settings, allowed[1]))
    return [*done, skill_done]


def _read_text(path: Path) -> str | None:
    """A configuration file's text, None when absent; one that is not UTF-8 is refused, never rewritten."""
    old = _read(path)
    if old == _NOT_TEXT:
        raise invalid_argument(f"{path} is not UTF-8 text: nothing was written")
    return old


def _merge_allowances(path: Path, old: str | None, scope: str) -> tuple[str, str]:
    """The text of Claude Code's settings (``old``, None when absent) with each of :func:`_claude_allowances`
    added to its list (nothing else changes), and the action."""
    data = _json_object(path, old)
    added = False
    for keys, value in _claude_allowances(scope):
        holder = data
        for key in keys[:-1]:
            holder = holder.setdefault(key, {})
            if not isinstance(holder, dict):
                raise invalid_argument(f'"{key}" in {path} is not a JSON object: fix it first; nothing was written')
        values = holder.setdefault(keys[-1], [])
        if not isinstance(values, list):
            raise invalid_argument(f'"{keys[-1]}" in {path} is not a JSON array: fix it first; nothing was written')
        if value not in values:
            values.append(value)
            added = True
    return _json_text(data), "installed" if added else "unchanged"


def _entry_action(path: Path, current: object, entry: dict[str, Any], *, force: bool) -> str:
    if current is None:
        return "installed"
    if current == entry:
        return "unchanged"
    if not force:
        raise DuelError(ErrorCode.SKILL_EXISTS, f"{path} has another {NAME!r} MCP server: --force replaces it")
    return "replaced"


def _merge_json(path: Path, old: str | None, entry: dict[str, Any], *, force: bool) -> tuple[str, str]:
    """The text of ``path`` (``old``, None when absent) with ``mcpServers.duel`` set to ``entry``, and the action."""
    data = _json_object(path, old)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise invalid_argument(f'"mcpServers" in {path} is not a JSON object: fix it first; nothing was written')
    action = _entry_action(path, servers.get(NAME), entry, force=force)
    servers[NAME] = entry
    return _json_text(data), action


def _json_object(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise invalid_argument(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}): fix it first; nothing was written"
        ) from None
    if not isinstance(data, dict):
        raise invalid_argument(f"{path} does not hold a JSON object: fix it first; nothing was written")
    return data


# A [table] or [[array of tables]] line, and one of the duel server's table or its subtables.
_TOML_HEADER = re.compile(r"^[ \t]*\[\[?[^\[\]\r\n]*\]\]?[ \t]*(#.*)?\r?$")


_DUEL_HEADER = re.compile(rf"""^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*({NAME}|"{NAME}"|'{NAME}')[ \t]*[.\]]""")


_TOML_TRIVIA = re.compile(r"^[ \t]*(#.*)?\r?\n?$")  # a blank or comment line


def _toml(text: str) -> dict[str, Any]:
    """Parsed TOML; a ValueError (TOMLDecodeError) when it is not."""
    if sys.version_info >= (3, 11):  # as rp1_duel.configuration reads TOML
        import tomllib
    else:
        import tomli as tomllib
    parsed: dict[str, Any] = tomllib.loads(text)  # tomli is untyped
    return parsed


def _merge_toml(path: Path, old: str | None, entry: dict[str, Any], *, force: bool) -> tuple[str, str]:
    """The text of ``path`` with its ``[mcp_servers.duel]`` table set to ``entry``, and the action.
    Edited as text, so the comments and every other table stay as they are."""
    text = old or ""
    try:
        data = _toml(text)
    except ValueError as exc:
        raise invalid_argument(f"{path} is not valid TOML ({exc}): fix it first; nothing was written") from None
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise invalid_argument(f"mcp_servers in {path} is not a table: fix it first; nothing was written")
    action = _entry_action(path, servers.get(NAME), entry, force=force)
    if action == "unchanged":
        return text, action
    newline = "\r\n" if "\r\n" in text else "\n"
    table = _toml_table(entry).replace("\n", newline)
    kept, at = _without_duel_tables(text.splitlines(keepends=True))
    if at is None:
        separator = "" if not text else newline if text.endswith("\n") else newline * 2
        edited = text + separator + table
    else:
        edited = "".join(kept[:at]) + table + "".join(kept[at:])
    try:
        result: dict[str, Any] | None = _toml(edited)
    except ValueError:
        result = None
    if result != {**data, "mcp_servers": {**servers, NAME: entry}}:
        raise invalid_argument(
            f"{path} defines the {NAME!r} MCP server otherwise than as a [mcp_servers.{NAME}] table: "
            "set it by hand; nothing was written"
        )
    return edited, action


def _without_duel_tables(lines: list[str]) -> tuple[list[str], int | None]:
    """``lines`` less the duel server's table and its subtables; and where the first of them was."""
    kept: list[str] = []
    trivia: list[str] = []  # blank and comment lines ending a duel table: they head what follows, and stay
    at: int | None = None
    in_duel = False
    for line in lines:
        if _TOML_HEADER.match(line):
            in_duel = _DUEL_HEADER.match(line) is not None
            if in_duel and at is None:
                at = len(kept)
            if not in_duel:
                kept += trivia
            trivia = []
        if not in_duel:
            kept.append(line)
        elif _TOML_TRIVIA.match(line):
            trivia.append(line)
        else:
            trivia = []
    return kept + trivia, at


def skill_output(
    harness: str, *, mcp: bool, install: bool, scope: str, home: str, project: str | None, force: bool
) -> str:
    """What ``duel skill`` prints: the instructions, or (``mcp``) the set-up each file would get; with ``install``,
    each file written and what was done to it, then (``mcp``) the trust only the user may give the folder.
    ``home`` and ``project`` as the user gave them (``project`` None: the project's folder as the configuration
    finds it). Raises DuelError (``INVALID_ARGUMENT``, ``SKILL_EXISTS``, ``PATH_OUTSIDE_PROJECT``, …)."""
    if harness not in HARNESSES:
        raise invalid_argument(f"--harness must be one of {', '.join(HARNESSES)}, not {harness!r}")
    if scope not in SCOPES:
        raise invalid_argument(f"--scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if not install and not mcp:
        return render(harness)
    from ..configuration import project_folder

    home_folder = Path(os.path.abspath(os.path.expanduser(home)))
    folder = Path(project).expanduser() if project else project_folder(Path.cwd(), home_folder=home_folder)
    if not install:
        return printable(render_mcp_setup(harness, scope=scope, home=home_folder, project=folder))
    report = install_mcp_report if mcp else install_report
    done = report(harness, scope=scope, home=home_folder, project=folder, force=force)
    lines = "".join(printable(f"{item.action}: {item.path}") + "\n" for item in done)
    trust = printable(mcp_trust_step(harness, scope=scope, home=home_folder, project=folder)) if mcp else ""
    return lines + trust

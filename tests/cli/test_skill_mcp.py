"""`duel skill --mcp`: the harness's MCP server entry, merged into its configuration without losing
anything there, and a short skill for the tools of `duel mcp`."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import frontmatter
import pytest
from typer.testing import CliRunner

from rp1_duel.cli import skill, skill_setup
from rp1_duel.cli.app import app
from rp1_duel.errors import DuelError
from rp1_duel.mcp_server.seat import WAIT_BOUND_SECONDS
from rp1_duel.vocabulary import NEXT_STEPS

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# (harness, scope) -> (the MCP configuration, [Claude Code's settings,] the skill), under tmp_path.
TARGETS = {
    ("claude-code", "project"): (
        "project/.mcp.json",
        "project/.claude/settings.json",
        "project/.claude/skills/duel/SKILL.md",
    ),
    ("claude-code", "user"): ("home/.claude.json", "home/.claude/settings.json", "home/.claude/skills/duel/SKILL.md"),
    ("codex", "project"): ("project/.codex/config.toml", "project/AGENTS.md"),
    ("codex", "user"): ("home/.codex/config.toml", "home/.codex/AGENTS.md"),
    ("gemini", "project"): ("project/.gemini/settings.json", "project/GEMINI.md"),
    ("gemini", "user"): ("home/.gemini/settings.json", "home/.gemini/GEMINI.md"),
}


def entry(harness: str, scope: str = "project") -> dict[str, object]:
    """The entry each harness needs: the `duel` on PATH in a project (portable), this Python for the user."""
    command, head = ("duel", []) if scope == "project" else (sys.executable, ["-m", "rp1_duel"])
    written: dict[str, object] = {"command": command, "args": [*head, "mcp", "--harness", harness]}
    if harness == "codex":
        written |= {"required": True, "startup_timeout_sec": 30, "tool_timeout_sec": 120}
        written["default_tools_approval_mode"] = "approve"
    if harness == "gemini":
        written |= {"timeout": 120_000, "trust": True}
    return written


# What Claude Code's settings allow: duel's tools, and in a project the .mcp.json server.
ALLOWED = {"project": {"permissions": {"allow": ["mcp__duel"]}, "enabledMcpjsonServers": ["duel"]}}
ALLOWED["user"] = {"permissions": {"allow": ["mcp__duel"]}}


def install(tmp_path: Path, harness: str, scope: str = "project", *, force: bool = False) -> list[str]:
    """Install as the library does; ``ACTION: PATH`` lines relative to tmp_path, as `duel skill` prints them."""
    done = skill_setup.install_mcp_report(
        harness, scope=scope, home=tmp_path / "home", project=tmp_path / "project", force=force
    )
    return [f"{item.action}: {item.path.relative_to(tmp_path)}" for item in done]


def duel_skill(tmp_path: Path, *args: str):
    """`duel skill` in this process, with tmp_path's home and project."""
    where = ["--home", str(tmp_path / "home"), "--project", str(tmp_path / "project")]
    return CliRunner().invoke(app, ["skill", *args, *where])


def servers(path: Path) -> dict[str, object]:
    if path.suffix == ".toml":
        return tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]
    return json.loads(path.read_text(encoding="utf-8"))["mcpServers"]


def files(tmp_path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(tmp_path)): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}


# -- the entry ---------------------------------------------------------------------------------
@pytest.mark.parametrize("harness", skill.MCP_HARNESSES)
def test_a_project_entry_starts_the_duel_on_path_and_names_no_path_of_this_machine(harness):
    command, args = skill_setup.mcp_server_command(harness, "project")
    assert (command, args) == ("duel", ["mcp", "--harness", harness])  # a committed file works for everyone
    assert shutil.which(command) is not None
    assert not any(os.sep in part or part.startswith("~") for part in [command, *args])


@pytest.mark.parametrize("harness", skill.MCP_HARNESSES)
def test_a_user_entry_starts_duel_mcp_with_the_python_running_duel_skill(harness):
    command, args = skill_setup.mcp_server_command(harness, "user")
    assert command == sys.executable  # a virtualenv nobody activated still runs the server
    assert args == ["-m", "rp1_duel", "mcp", "--harness", harness]
    assert importlib.util.find_spec(f"{args[1]}.__main__") is not None


def test_every_timeout_written_for_a_harness_is_well_above_duel_waits_bound():
    assert skill_setup.TOOL_TIMEOUT_SECONDS >= 2 * WAIT_BOUND_SECONDS  # a wait answers long before the harness gives up
    assert entry("codex")["tool_timeout_sec"] == skill_setup.TOOL_TIMEOUT_SECONDS
    assert entry("gemini")["timeout"] == skill_setup.TOOL_TIMEOUT_SECONDS * 1000  # Gemini counts milliseconds


def test_generic_has_no_mcp_entry():
    with pytest.raises(DuelError) as info:
        skill_setup.mcp_server_command("generic")
    assert info.value.code == "INVALID_ARGUMENT"


# -- where each harness reads it -----------------------------------------------------------------
@pytest.mark.parametrize(("harness", "scope"), list(TARGETS))
def test_install_writes_the_entry_and_the_skill_where_the_harness_reads_them(tmp_path, harness, scope):
    config, *settings, skill_file = TARGETS[harness, scope]
    assert install(tmp_path, harness, scope) == [f"installed: {path}" for path in TARGETS[harness, scope]]
    assert servers(tmp_path / config) == {"duel": entry(harness, scope)}
    for path in settings:
        assert json.loads((tmp_path / path).read_text(encoding="utf-8")) == ALLOWED[scope]
    assert (tmp_path / skill_file).read_text(encoding="utf-8") == skill.render_mcp(harness)
    assert set(files(tmp_path)) == set(TARGETS[harness, scope])


@pytest.mark.parametrize(("harness", "scope"), list(TARGETS))
def test_installing_twice_changes_nothing(tmp_path, harness, scope):
    install(tmp_path, harness, scope)
    before = files(tmp_path)
    stamps = {path: (tmp_path / path).stat().st_mtime_ns for path in before}
    assert install(tmp_path, harness, scope) == [f"unchanged: {path}" for path in TARGETS[harness, scope]]
    assert files(tmp_path) == before
    assert {path: (tmp_path / path).stat().st_mtime_ns for path in before} == stamps


def test_each_harness_loads_the_skill_as_is():
    meta = frontmatter.loads(skill.render_mcp("claude-code"))
    assert meta["name"] == "duel"
    assert meta["description"] == skill.MCP_DESCRIPTION
    for harness in ("codex", "gemini"):
        section = skill.render_mcp(harness)
        assert section.startswith(skill.START + "\n")
        assert section.endswith(skill.END + "\n")
        assert skill.generated_by_us(section)


def test_the_skill_names_every_tool_resource_and_next_step_and_no_token():
    text = skill.render_mcp("codex")
    for name in [*skill.MCP_TOOLS, *skill.MCP_RESOURCES, *NEXT_STEPS]:
        assert f"`{name}`" in text, name
    assert "violation" in text
    assert "code and line" in text
    assert "duel tools" not in text  # the tools, never the CLI
    assert "DUEL_PARTICIPANT_TOKEN" not in text
    assert "You never see a token" in text
    assert len(text.splitlines()) < 60  # short: the rules come from duel_rules


# -- merging into what is there ------------------------------------------------------------------
def test_install_merges_into_an_existing_mcp_json_without_losing_servers(tmp_path):
    mcp_json = tmp_path / "project" / ".mcp.json"
    mcp_json.parent.mkdir()
    other = {"command": "npx", "args": ["-y", "docs-mcp"], "env": {"KEY": "é"}}
    mcp_json.write_text(json.dumps({"mcpServers": {"docs": other}, "note": 1}))
    assert install(tmp_path, "claude-code")[0] == "installed: project/.mcp.json"
    data = json.loads(mcp_json.read_text(encoding="utf-8"))
    assert data == {"mcpServers": {"docs": other, "duel": entry("claude-code")}, "note": 1}
    assert list(data["mcpServers"]) == ["docs", "duel"]


def test_install_adds_a_top_level_server_to_claude_json_keeping_its_other_keys_and_mode(tmp_path):
    claude_json = tmp_path / "home" / ".claude.json"
    claude_json.parent.mkdir()
    projects = {"/work/x": {"mcpServers": {"local": {"command": "x"}}, "allowedTools": []}}
    claude_json.write_text(json.dumps({"numStartups": 7, "projects": projects}))
    claude_json.chmod(0o600)
    install(tmp_path, "claude-code", "user")
    data = json.loads(claude_json.read_text(encoding="utf-8"))
    assert data == {"numStartups": 7, "projects": projects, "mcpServers": {"duel": entry("claude-code", "user")}}
    assert claude_json.stat().st_mode & 0o777 == 0o600


def test_install_merges_into_gemini_settings_keeping_other_settings(tmp_path):
    settings = tmp_path / "project" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "GitHub", "mcpServers": {"git": {"command": "git-mcp"}}}\n')
    install(tmp_path, "gemini")
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data == {"theme": "GitHub", "mcpServers": {"git": {"command": "git-mcp"}, "duel": entry("gemini")}}


CODEX_CONFIG = """\
# my Codex settings
model = "o3"  # the default

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]

[profiles.fast]
model = "o4-mini"
"""


def test_install_appends_a_codex_table_keeping_comments_and_other_tables(tmp_path):
    config = tmp_path / "project" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_CONFIG)
    install(tmp_path, "codex")
    assert config.read_text(encoding="utf-8") == CODEX_CONFIG + "\n" + skill_setup._toml_table(entry("codex"))
    assert servers(config) == {"docs": {"command": "docs-mcp", "args": ["--port", "0"]}, "duel": entry("codex")}


def test_force_replaces_a_codex_duel_table_and_its_subtables_in_place(tmp_path):
    config = tmp_path / "project" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    old_duel = '[mcp_servers.duel]\ncommand = "duel"\nargs = ["mcp"]\n\n[mcp_servers.duel.env]\nX = "1"\n\n'
    before, after = CODEX_CONFIG.split("[profiles.fast]")
    config.write_text(before + old_duel + "# fast answers\n[profiles.fast]" + after)
    with pytest.raises(DuelError) as info:
        install(tmp_path, "codex")
    assert info.value.code == "SKILL_EXISTS"
    assert "--force" in info.value.message
    assert install(tmp_path, "codex", force=True)[0] == "replaced: project/.codex/config.toml"
    table = skill_setup._toml_table(entry("codex"))
    assert config.read_text(encoding="utf-8") == before + table + "\n# fast answers\n[profiles.fast]" + after
    assert install(tmp_path, "codex")[0] == "unchanged: project/.codex/config.toml"


def test_a_crlf_codex_config_gets_a_crlf_table(tmp_path):
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(b'model = "o3"\r\n')
    install(tmp_path, "codex", "user")
    raw = config.read_bytes()
    assert raw.startswith(b'model = "o3"\r\n\r\n[mcp_servers.duel]\r\n')
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert servers(config) == {"duel": entry("codex", "user")}


def test_a_codex_duel_server_written_inline_is_refused_rather_than_doubled(tmp_path):
    config = tmp_path / "project" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[mcp_servers]\nduel = { command = "duel", args = [] }\n')
    with pytest.raises(DuelError) as info:
        install(tmp_path, "codex", force=True)
    assert info.value.code == "INVALID_ARGUMENT"
    assert "by hand" in info.value.message
    assert files(tmp_path) == {"project/.codex/config.toml": b'[mcp_servers]\nduel = { command = "duel", args = [] }\n'}


@pytest.mark.parametrize("harness", ["claude-code", "gemini"])
def test_a_different_duel_entry_is_kept_without_force_and_replaced_with_it(tmp_path, harness):
    config = tmp_path / TARGETS[harness, "project"][0]
    config.parent.mkdir(parents=True, exist_ok=True)
    mine = {"command": "/opt/duel/bin/python", "args": ["-m", "rp1_duel", "mcp"]}
    config.write_text(json.dumps({"mcpServers": {"duel": mine}}))
    result = duel_skill(tmp_path, "--harness", harness, "--mcp", "--install")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("duel: SKILL_EXISTS: ")
    assert result.stderr.count("\n") == 1
    assert servers(config) == {"duel": mine}
    assert not (tmp_path / TARGETS[harness, "project"][-1]).exists()
    forced = duel_skill(tmp_path, "--harness", harness, "--mcp", "--install", "--force")
    assert forced.exit_code == 0
    assert forced.stdout.startswith(f"replaced: {config}\n")
    assert servers(config) == {"duel": entry(harness)}


@pytest.mark.parametrize(
    "content",
    ['{"mcpServers": {"docs": ', '{"mcpServers": ["docs"]}', "[1, 2]", "\xff\xfe{}"],
    ids=["broken", "servers-not-an-object", "not-an-object", "not-utf-8"],
)
def test_a_json_file_that_is_not_a_configuration_is_refused_with_nothing_written(tmp_path, content):
    mcp_json = tmp_path / "project" / ".mcp.json"
    mcp_json.parent.mkdir()
    mcp_json.write_bytes(content.encode("latin-1"))
    result = duel_skill(tmp_path, "--harness", "claude-code", "--mcp", "--install", "--force")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("duel: INVALID_ARGUMENT: ")
    assert result.stderr.count("\n") == 1
    assert str(mcp_json) in result.stderr
    assert files(tmp_path) == {"project/.mcp.json": content.encode("latin-1")}


def test_a_broken_codex_config_is_refused_with_nothing_written(tmp_path):
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("model = \n")
    with pytest.raises(DuelError) as info:
        install(tmp_path, "codex", "user")
    assert info.value.code == "INVALID_ARGUMENT"
    assert "not valid TOML" in info.value.message
    assert files(tmp_path) == {"home/.codex/config.toml": b"model = \n"}


def test_an_empty_json_file_counts_as_an_empty_object(tmp_path):
    settings = tmp_path / "home" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("\n")
    install(tmp_path, "gemini", "user")
    assert json.loads(settings.read_text(encoding="utf-8")) == {"mcpServers": {"duel": entry("gemini", "user")}}


def test_the_mcp_skill_updates_the_cli_skill_duel_skill_wrote(tmp_path):
    skill_setup.install("codex", scope="project", home=tmp_path / "home", project=tmp_path / "project")
    agents_md = tmp_path / "project" / "AGENTS.md"
    agents_md.write_text("# House rules\n\n" + agents_md.read_text(encoding="utf-8"))
    assert install(tmp_path, "codex")[1] == "updated: project/AGENTS.md"
    assert agents_md.read_text(encoding="utf-8") == "# House rules\n\n" + skill.render_mcp("codex")


def test_a_foreign_skill_file_refuses_the_install_before_the_entry_is_written(tmp_path):
    skill_md = tmp_path / TARGETS["claude-code", "project"][-1]
    skill_md.parent.mkdir(parents=True)
    skill_md.write_text("my own duel skill\n")
    with pytest.raises(DuelError) as info:
        install(tmp_path, "claude-code")
    assert info.value.code == "SKILL_EXISTS"
    assert not (tmp_path / "project" / ".mcp.json").exists()
    assert not (tmp_path / "project" / ".claude" / "settings.json").exists()


# -- printing and the CLI ------------------------------------------------------------------------
@pytest.mark.parametrize(("harness", "scope"), list(TARGETS))
def test_print_shows_each_file_and_what_goes_into_it_and_writes_nothing(tmp_path, harness, scope):
    result = duel_skill(tmp_path, "--harness", harness, "--mcp", "--scope", scope)
    assert result.exit_code == 0, result.stderr
    config, *settings, skill_file = TARGETS[harness, scope]
    entry_part, skill_part = result.stdout.split(f"\n==> {tmp_path / skill_file} <==\n")
    if settings:
        entry_part, settings_part = entry_part.split(f"\n==> {tmp_path / settings[0]} <==\n")
        assert json.loads(settings_part) == ALLOWED[scope]
    assert entry_part.startswith(f"==> {tmp_path / config} <==\n")
    entry_text = entry_part.split("<==\n", 1)[1]
    if harness == "codex":
        assert tomllib.loads(entry_text) == {"mcp_servers": {"duel": entry(harness, scope)}}
    else:
        assert json.loads(entry_text) == {"mcpServers": {"duel": entry(harness, scope)}}
    assert skill_part == skill.render_mcp(harness)
    assert files(tmp_path) == {}


def test_the_cli_install_prints_each_file_with_what_was_done_then_the_trust_to_give(tmp_path):
    result = duel_skill(tmp_path, "--harness", "gemini", "--mcp", "--install")
    assert result.exit_code == 0, result.stderr
    trusted = tmp_path / "home/.gemini/trustedFolders.json"
    assert result.stdout == (
        f"installed: {tmp_path / 'project/.gemini/settings.json'}\ninstalled: {tmp_path / 'project/GEMINI.md'}\n"
        "to do: Gemini CLI runs only in a trusted folder (each folder you start it in): start gemini there once "
        f"and trust it, or merge into {trusted}:\n" + json.dumps({str(tmp_path / "project"): "TRUST_FOLDER"}) + "\n"
    )


# (harness, scope) -> the trust step's file under tmp_path, and what is added or merged there (PROJECT: its path).
TRUST = {
    ("claude-code", "project"): ("home/.claude.json", {"projects": {"PROJECT": {"hasTrustDialogAccepted": True}}}),
    ("codex", "project"): ("home/.codex/config.toml", {"projects": {"PROJECT": {"trust_level": "trusted"}}}),
    ("gemini", "project"): ("home/.gemini/trustedFolders.json", {"PROJECT": "TRUST_FOLDER"}),
    ("gemini", "user"): ("home/.gemini/trustedFolders.json", {"PROJECT": "TRUST_FOLDER"}),
}


@pytest.mark.parametrize(("harness", "scope"), list(TARGETS))
def test_the_install_ends_with_the_trust_only_the_user_may_give_as_text_for_a_file(tmp_path, harness, scope):
    result = duel_skill(tmp_path, "--harness", harness, "--mcp", "--install", "--scope", scope)
    assert result.exit_code == 0, result.stderr
    step = result.stdout.split(f"{tmp_path / TARGETS[harness, scope][-1]}\n", 1)[1]
    if (harness, scope) not in TRUST:
        assert step == ""  # the user's own files need no trust
        return
    path, wanted = TRUST[harness, scope]
    head, text = step.split("\n", 1)
    assert head.startswith("to do: ")
    assert head.endswith(f" {tmp_path / path}:")
    given = tomllib.loads(text) if path.endswith(".toml") else json.loads(text)
    assert json.loads(json.dumps(given).replace(str(tmp_path / "project"), "PROJECT")) == wanted
    assert not (tmp_path / path).exists()  # duel never gives the trust itself


# -- Claude Code's settings ------------------------------------------------------------------------
def test_claude_code_allowances_join_the_lists_already_in_its_settings_keeping_everything_else(tmp_path):
    settings = tmp_path / "project" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = {"permissions": {"allow": ["Bash(git status)"], "deny": ["WebFetch"]}, "model": "opus"}
    settings.write_text(json.dumps(mine))
    assert install(tmp_path, "claude-code")[1] == "installed: project/.claude/settings.json"
    assert json.loads(settings.read_text(encoding="utf-8")) == {
        "permissions": {"allow": ["Bash(git status)", "mcp__duel"], "deny": ["WebFetch"]},
        "model": "opus",
        "enabledMcpjsonServers": ["duel"],
    }
    assert install(tmp_path, "claude-code")[1] == "unchanged: project/.claude/settings.json"


@pytest.mark.parametrize("content", ['{"permissions": []}', '{"permissions": {"allow": "mcp__duel"}}'])
def test_claude_code_settings_of_another_shape_are_refused_with_nothing_written(tmp_path, content):
    settings = tmp_path / "project" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(content)
    with pytest.raises(DuelError) as info:
        install(tmp_path, "claude-code")
    assert info.value.code == "INVALID_ARGUMENT"
    assert str(settings) in info.value.message
    assert files(tmp_path) == {"project/.claude/settings.json": content.encode()}


@pytest.mark.parametrize("args", [("--harness", "generic", "--mcp"), ("--harness", "codex", "--mcp", "--scope", "x")])
def test_bad_mcp_flags_fail_in_one_line_with_exit_2_and_write_nothing(tmp_path, args):
    result = duel_skill(tmp_path, *args, "--install")
    assert result.exit_code == 2
    assert result.stderr.startswith("duel: INVALID_ARGUMENT: ")
    assert result.stderr.count("\n") == 1
    assert files(tmp_path) == {}


# -- Gemini CLI without --mcp: the `duel tools` instructions in GEMINI.md ---------------------------
@pytest.mark.parametrize(("scope", "target"), [("project", "project/GEMINI.md"), ("user", "home/.gemini/GEMINI.md")])
def test_gemini_without_mcp_gets_the_tools_instructions_as_a_gemini_md_section(tmp_path, scope, target):
    paths = skill_setup.install("gemini", scope=scope, home=tmp_path / "home", project=tmp_path / "project")
    assert paths == [tmp_path / target]
    text = (tmp_path / target).read_text(encoding="utf-8")
    assert text == skill.render("gemini")
    assert text.startswith(skill.START + "\n")
    assert "`gemini`" in text
    assert "duel tools join" in text

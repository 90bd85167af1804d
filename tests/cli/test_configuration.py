"""Layered configuration (issue 13 item 4): which layer wins, the deep merge, where each value came
from, the errors, where the project root is, `duel config show`, and the commands that read it.

Every test passes its own HOME and environment: none reads the real ~/.config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rp1_duel.configuration import (
    DEFAULT,
    Flags,
    Layer,
    SeatSpec,
    defaults,
    load_config,
    merge,
    project_root,
)
from rp1_duel.coordination import DuelService
from rp1_duel.errors import DuelError
from rp1_duel.settings import DuelSettings

from helpers import make_turn, run_tools

TESTS = Path(__file__).parents[1]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".config" / "duel").mkdir(parents=True)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git work tree (its .git a folder) with a subfolder to run from."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "docs").mkdir()
    return root


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def user_file(home: Path) -> Path:
    return home / ".config" / "duel" / "config.toml"


# -- precedence: flags > environment > lineup > local > project > user > defaults -------------------


def test_each_layer_overrides_the_ones_below_it(home, project):
    write(user_file(home), 'debate_dir = "/user"\n[duel]\nlease_seconds = 100\n')
    write(project / "duel.toml", 'debate_dir = "project-debates"\n[duel]\nlease_seconds = 200\n')
    write(project / "duel.local.toml", 'debate_dir = "local-debates"\n[duel]\nlease_seconds = 300\n')
    lineup = write(project / "lineup.toml", 'debate_dir = "/lineup"\n[duel]\nlease_seconds = 400\n')
    env = env_for(home, DUEL_DIR="/env")
    flags = Flags(debate_dir="/flag", lease_seconds=500)
    cwd = project / "docs"

    def winner(**kw) -> tuple[str, int, str]:
        config = load_config(cwd, kw.get("env", env), kw.get("flags", flags), kw.get("extra", [lineup]))
        return config.debate_dir, config.settings().lease_seconds, config.origin("duel.lease_seconds")

    assert winner() == ("/flag", 500, "flags")
    assert winner(flags=Flags()) == ("/env", 400, f"lineup ({lineup})")
    assert winner(flags=Flags(), env=env_for(home)) == ("/lineup", 400, f"lineup ({lineup})")
    assert winner(flags=Flags(), env=env_for(home), extra=[]) == (
        str(project / "local-debates"),
        300,
        f"local ({project / 'duel.local.toml'})",
    )
    (project / "duel.local.toml").unlink()
    assert winner(flags=Flags(), env=env_for(home), extra=[]) == (
        str(project / "project-debates"),
        200,
        f"project ({project / 'duel.toml'})",
    )
    (project / "duel.toml").unlink()
    assert winner(flags=Flags(), env=env_for(home), extra=[]) == ("/user", 100, f"user ({user_file(home)})")
    user_file(home).unlink()
    assert winner(flags=Flags(), env=env_for(home), extra=[]) == ("debates", 600, "default")


def test_without_any_file_the_configuration_is_the_built_in_defaults(home, project):
    config = load_config(project, env_for(home))
    assert config.settings() == DuelSettings()
    assert (config.debate_dir, config.store, config.panel.seats, config.panel.chair, config.personas) == (
        "debates",
        None,
        {},
        None,
        {},
    )
    assert config.origin("duel.seats") == DEFAULT
    assert config.origin("store") == "unset"


def test_a_flag_not_given_or_empty_leaves_the_layers_below_it(home, project):
    write(project / "duel.toml", '[duel]\nmax_turns = 8\n[model]\nmodel = "gpt-x"\n')
    config = load_config(project, env_for(home), Flags(max_turns=None, model=""))
    assert (config.settings().max_turns, config.model.model) == (8, "gpt-x")


def test_sealed_openings_come_from_the_duel_table_and_must_be_a_boolean(home, project):
    write(project / "duel.toml", "[duel]\nsealed_openings = true\n")
    assert load_config(project, env_for(home)).settings().sealed_openings
    assert load_config(project, env_for(home)).settings().schedule.sealed_openings
    write(project / "duel.toml", "[duel]\nsealed_openings = 1\n")
    with pytest.raises(DuelError) as refused:
        load_config(project, env_for(home))
    assert refused.value.code == "INVALID_CONFIG" and "duel.sealed_openings" in refused.value.message
    write(project / "duel.toml", "[duel]\nmax_turns = true\n")  # and a number is never a boolean
    with pytest.raises(DuelError):
        load_config(project, env_for(home))


def test_the_store_comes_from_the_environment_over_the_files(home, project):
    write(user_file(home), 'store = "postgresql://file/db"\n')
    assert load_config(project, env_for(home)).store == "postgresql://file/db"
    config = load_config(project, env_for(home, DUEL_STORE="postgresql://env/db"))
    assert (config.store, config.origin("store")) == ("postgresql://env/db", "environment ($DUEL_STORE)")


def test_the_user_file_is_under_xdg_config_home_when_it_is_set_and_absolute(home, tmp_path):
    write(user_file(home), "[duel]\nseats = 3\n")
    write(tmp_path / "xdg" / "duel" / "config.toml", "[duel]\nseats = 4\n")
    assert load_config(tmp_path, env_for(home)).settings().seats == 3
    assert load_config(tmp_path, env_for(home, XDG_CONFIG_HOME=str(tmp_path / "xdg"))).settings().seats == 4
    assert load_config(tmp_path, env_for(home, XDG_CONFIG_HOME="xdg")).settings().seats == 3  # relative: ignored


# -- the deep merge, against the shallow one ---------------------------------------------------------

USER_LINEUP = """
[panel.seats.1]
name = "Ada"
model = "claude-sonnet-5-5"
persona = "skeptic"
[panel.seats.2]
name = "Brook"
provider = "openai"
model = "gpt-6.1-sol"
persona = "pragmatist"
position = "ship it"
[panel.seats.3]
name = "Cy"
model = "scripted:cy"
"""
PROJECT_CHANGES_ONE_MODEL = '[panel.seats.2]\nmodel = "gpt-7"\n'


def test_a_project_file_that_changes_one_seats_model_keeps_the_whole_lineup(home, project):
    write(user_file(home), USER_LINEUP)
    write(project / "duel.toml", PROJECT_CHANGES_ONE_MODEL)
    seats = load_config(project / "docs", env_for(home)).panel.seats
    assert list(seats) == [1, 2, 3]
    assert seats[1] == SeatSpec(name="Ada", model="claude-sonnet-5-5", persona="skeptic")
    assert seats[2] == SeatSpec(
        name="Brook", provider="openai", model="gpt-7", persona="pragmatist", position="ship it"
    )
    assert seats[3] == SeatSpec(name="Cy", model="scripted:cy")


def test_a_shallow_merge_would_have_dropped_the_lineup(home, project):
    """The failure the issue names, reproduced with dict.update over the same two files: the contrast
    that the test above guards against."""
    if sys.version_info >= (3, 11):  # as rp1_duel.configuration reads TOML
        import tomllib
    else:
        import tomli as tomllib

    merged = tomllib.loads(USER_LINEUP)
    merged.update(tomllib.loads(PROJECT_CHANGES_ONE_MODEL))
    assert merged["panel"] == {"seats": {"2": {"model": "gpt-7"}}}  # seats 1 and 3, and seat 2's name: gone


def test_tables_merge_key_by_key_and_arrays_replace(home, project):
    write(
        user_file(home),
        '[personas.reviewer]\ndescription = "A reviewer."\nincentives = ["a", "b"]\n[duel]\nseats = 3\n',
    )
    write(project / "duel.toml", '[personas.reviewer]\nincentives = ["c"]\n[duel]\nmax_turns = 9\n')
    config = load_config(project, env_for(home))
    assert (config.personas["reviewer"].description, config.personas["reviewer"].incentives) == ("A reviewer.", ("c",))
    assert (config.settings().seats, config.settings().max_turns) == (3, 9)


def test_every_value_says_which_layer_and_file_set_it(home, project):
    write(user_file(home), USER_LINEUP)
    write(project / "duel.toml", PROJECT_CHANGES_ONE_MODEL)
    config = load_config(project, env_for(home, DUEL_DIR="/shared"), Flags(seats=3))
    user, project_file = f"user ({user_file(home)})", f"project ({project / 'duel.toml'})"
    assert config.origin("panel.seats.2.model") == project_file
    assert config.origin("panel.seats.2.name") == user
    assert config.origin("debate_dir") == "environment ($DUEL_DIR)"
    assert config.origin("duel.seats") == "flags"
    assert config.origin("duel.lease_seconds") == "default"
    assert config.leaves["panel.seats.2.model"].file == str(project / "duel.toml")


def test_merge_is_a_pure_rule_over_layers():
    layers = [
        defaults(),
        Layer("user", "/u.toml", {"panel": {"seats": {"1": {"model": "a", "name": "A"}}}}),
        Layer("project", "/p.toml", {"panel": {"seats": {"1": {"model": "b"}}, "topic": "T"}}),
    ]
    config = merge(layers)
    assert (config.panel.topic, config.panel.seats[1]) == ("T", SeatSpec(name="A", model="b"))
    assert config.origin("panel.seats.1.name") == "user (/u.toml)"


# -- errors: one line, INVALID_CONFIG, the file and the dotted key -----------------------------------


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        ("[duel\n", None, "is not valid TOML"),
        ("colour = 1\n", "colour", "unknown key"),
        ("[duel]\nrounds = 3\n", "duel.rounds", "unknown key"),
        ('[duel]\nmax_turns = "9"\n', "duel.max_turns", "must be an integer, not a string"),
        ("[duel]\nseats = true\n", "duel.seats", "must be an integer, not a boolean"),
        ("[duel]\nmax_turns = 99\n", "duel.max_turns", "must be between 2 and 50, got 99"),
        ("[duel]\nseats = 3\nmax_turns = 2\n", "duel.max_turns", "must be at least duel.seats"),
        ('[model]\nreasoning = "extreme"\n', "model.reasoning", "must be one of low, medium, high"),
        ("[model]\nmax_output_tokens = 0\n", "model.max_output_tokens", "must be between 1 and 1000000, got 0"),
        ('[panel.seats.9]\nname = "x"\n', "panel.seats.9", "is not a seat number from 1 to 8"),
        ('[panel.seats.1]\nmodle = "x"\n', "panel.seats.1.modle", "unknown key"),
        ("[panel]\nseats = 3\n", "panel.seats", "must be a table, not an integer"),
        ('[personas.Loud]\ndescription = "x"\n', "personas.Loud", "is not a persona name"),
        ('[personas.quiet]\nincentives = ["x"]\n', "personas.quiet.description", "is required"),
        (
            '[personas.quiet]\ndescription = "x"\nincentives = [1]\n',
            "personas.quiet.incentives",
            "must be an array of non-empty strings",
        ),
        ('debate_dir = ""\n', "debate_dir", "must not be empty"),
    ],
)
def test_a_bad_file_is_one_invalid_config_error_naming_the_file_and_key(home, project, text, key, problem):
    path = write(project / "duel.toml", text)
    with pytest.raises(DuelError) as raised:
        load_config(project, env_for(home))
    error = raised.value
    assert error.code == "INVALID_CONFIG"
    assert error.message.startswith(str(path)), error.message
    assert problem in error.message
    assert "\n" not in error.message
    assert error.details.get("key") == key
    assert error.exit_code == 1


def test_a_file_that_is_not_utf8_or_cannot_be_read_is_refused(home, project):
    (project / "duel.toml").write_bytes(b'debate_dir = "\xff"\n')
    with pytest.raises(DuelError, match="is not UTF-8"):
        load_config(project, env_for(home))
    (project / "duel.toml").unlink()
    (project / "duel.toml").mkdir()
    with pytest.raises(DuelError, match="cannot be read"):
        load_config(project, env_for(home))


def test_a_named_lineup_file_must_exist(home, project):
    with pytest.raises(DuelError, match="no such file") as raised:
        load_config(project, env_for(home), extra=[project / "lineup.toml"])
    assert raised.value.code == "INVALID_CONFIG"


def test_a_flag_out_of_range_stays_the_command_lines_error(home, project):
    """The flags layer is type-checked only: ranges stay DuelSettings.check's INVALID_ARGUMENT, as before."""
    config = load_config(project, env_for(home), Flags(max_turns=99))
    with pytest.raises(DuelError) as raised:
        config.settings().check()
    assert (raised.value.code, raised.value.details) == ("INVALID_ARGUMENT", {"flag": "--max-turns"})


# -- the project root ----------------------------------------------------------------------------------


def test_the_project_root_is_the_nearest_folder_up_holding_a_project_or_local_file(home, project):
    write(project / "duel.toml", "")
    nested = project / "docs" / "deep"
    nested.mkdir()
    assert project_root(nested, home_folder=home) == project
    write(project / "docs" / "duel.local.toml", "")
    assert project_root(nested, home_folder=home) == project / "docs"  # a local file alone marks a root


def test_the_search_stops_at_the_git_work_trees_root(home, tmp_path):
    write(tmp_path / "duel.toml", "[duel]\nseats = 5\n")  # outside the repository: not this project's
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert project_root(repo, home_folder=home) is None
    assert load_config(repo, env_for(home)).settings().seats == 2
    (repo / ".git").rmdir()
    (repo / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git is a file: the same boundary
    assert project_root(repo, home_folder=home) is None


def test_the_search_stops_before_home_and_at_a_folder_anyone_may_write_to(tmp_path):
    home = tmp_path / "home"
    write(home / "duel.toml", "")
    (home / "notes").mkdir()
    assert (
        project_root(home / "notes", home_folder=home) is None
    )  # ~/duel.toml is no project file: the user's is ~/.config
    shared = tmp_path / "shared"
    write(shared / "duel.toml", "")
    (shared / "mine").mkdir()
    shared.chmod(0o777)
    try:
        assert project_root(shared / "mine", home_folder=home) is None  # like /tmp: anyone could have put it there
    finally:
        shared.chmod(0o755)


def test_a_relative_debate_dir_is_relative_to_the_project_root_in_a_project_file(home, project):
    write(project / "duel.toml", 'debate_dir = "reviews/debates"\n')
    assert load_config(project / "docs", env_for(home)).debate_dir == str(project / "reviews" / "debates")
    write(user_file(home), 'debate_dir = "~/debates"\n')
    (project / "duel.toml").unlink()
    assert load_config(project / "docs", env_for(home)).debate_dir == str(home / "debates")


# -- duel config show, and the commands that read the configuration (real processes) --------------------


def run_duel(*args: str, cwd: Path, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("DUEL_", "XDG_"))}
    full.update(HOME=str(home), PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]), **env)
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=60
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_config_show_prints_each_value_with_where_it_came_from(home, project):
    write(
        user_file(home),
        'store = "postgresql://duel:hunter2@db/duel"\n'
        + USER_LINEUP
        + '[personas.reviewer]\ndescription = "A careful reviewer."\n',
    )
    write(project / "duel.toml", PROJECT_CHANGES_ONE_MODEL + "[duel]\nmax_turns = 9\n")
    proc = run_duel("config", "show", cwd=project / "docs", home=home)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert f"# project ({project / 'duel.toml'})" in next(
        line for line in lines if line.startswith("duel.max_turns = 9")
    )
    assert next(line for line in lines if line.startswith("duel.seats = 2")).endswith("# default")
    assert next(line for line in lines if line.startswith('panel.seats.2.name = "Brook"')).endswith(
        f"# user ({user_file(home)})"
    )
    assert any(line.startswith('panel.seats.2.model = "gpt-7"') for line in lines)
    assert any(line.startswith('store = "postgresql://duel:***@db/duel"') for line in lines)
    assert "hunter2" not in proc.stdout
    assert lines[-1] == (
        "# personas (duel join --persona NAME): skeptic, pragmatist, domain-expert, users-advocate "
        "(built-in); reviewer (custom)"
    )


def test_config_show_json_gives_value_and_origin_for_every_key_and_every_persona(home, project):
    write(project / "duel.toml", '[duel]\nseats = 3\n[personas.skeptic]\ndescription = "Our own skeptic."\n')
    proc = run_duel("config", "show", "--json", cwd=project, home=home, DUEL_DIR="/shared")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["values"]["duel.seats"] == {"value": 3, "origin": f"project ({project / 'duel.toml'})"}
    assert shown["values"]["debate_dir"] == {"value": "/shared", "origin": "environment ($DUEL_DIR)"}
    assert shown["values"]["duel.max_turns"] == {"value": 9, "origin": "default (3 rounds)"}
    assert shown["personas"]["skeptic"] == {
        "description": "Our own skeptic.",
        "incentives": [],
        "origin": f"project ({project / 'duel.toml'})",
    }
    assert shown["personas"]["pragmatist"]["origin"] == "built-in"


@pytest.mark.slow
def test_a_bad_file_stops_a_command_with_one_line(home, project):
    write(project / "duel.toml", "[duel]\nmax_turns = 99\n")
    proc = run_duel("config", "show", cwd=project, home=home)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        f"duel: INVALID_CONFIG: {project / 'duel.toml'}: duel.max_turns: must be between 2 and 50, got 99\n"
    )
    listed = run_duel("list", cwd=project, home=home)
    assert listed.returncode == 1 and listed.stderr.startswith("duel: INVALID_CONFIG:"), listed.stderr


@pytest.mark.slow
def test_duel_tools_takes_its_defaults_from_the_configuration_and_flags_win(home, tmp_path, source):
    xdg = tmp_path / "xdg"
    write(xdg / "duel" / "config.toml", f'debate_dir = "{tmp_path / "shared"}"\n[duel]\nmax_turns = 8\n')
    env = {"XDG_CONFIG_HOME": str(xdg), "HOME": str(home)}
    joined = run_tools("join", "--target", str(source), "--participant-name", "Ada", "--topic", "from config", env=env)
    assert joined.data["max_turns"] == 8
    assert joined.data["debate_path"].startswith(str(tmp_path / "shared"))
    flagged = run_tools(
        "join",
        "--target",
        str(source),
        "--participant-name",
        "Ada",
        "--topic",
        "from flags",
        "--max-turns",
        "4",
        env=env,
    )
    assert flagged.data["max_turns"] == 4
    write(xdg / "duel" / "config.toml", "[duel]\nmax_turns = 1\n")
    refused = run_tools("status", "--target", str(source), env=env)
    assert (refused.code, refused.envelope["error"]["code"]) == (1, "INVALID_CONFIG")
    assert refused.envelope["error"]["details"] == {"file": str(xdg / "duel" / "config.toml"), "key": "duel.max_turns"}


@pytest.mark.slow
def test_duel_join_takes_its_model_settings_and_debate_dir_from_a_project_file(
    home, tmp_path, source, anthropic_server
):
    """Claude's model, max_turns and the debate dir come from duel.toml; a named persona reaches its prompt."""
    from fake_debater import debater

    anthropic_server.responder = debater
    write(tmp_path / "duel.toml", 'debate_dir = "reviews"\n[duel]\nmax_turns = 2\n[model]\nmodel = "claude-x"\n')
    bob = tmp_path / "bob"
    write(bob / "1.md", make_turn(2, "Bob", "duel", "scripted:bob", "ACCEPTING_CONSENSUS"))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": anthropic_server.base_url}
    claude = start_join(source, "--persona", "skeptic", cwd=tmp_path, home=home, **env)
    wait_for_seat(tmp_path / "reviews", source)
    peer = start_join(source, "--model", f"scripted:{bob}", "--name", "Bob", cwd=tmp_path, home=home)
    for process in (claude, peer):
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
    result = json.loads(out.splitlines()[-1])
    assert Path(result["debate_path"]).parent == tmp_path / "reviews"
    status = DuelService(tmp_path / "reviews").status(target=str(source))
    assert status.duel.schedule.max_turns == 2
    assert [p.model_id for p in status.participants] == ["claude-x", "scripted:bob"]
    system = json.dumps(anthropic_server.requests[0]["body"]["system"])
    assert "Persona: skeptic. You treat every claim" in system
    assert "never for agreeing early" in system


def start_join(source: Path, *args: str, cwd: Path, home: Path, **env: str) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "DUEL_", "XDG_"))}
    full.update(HOME=str(home), PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]), **env)
    return subprocess.Popen(
        [sys.executable, "-m", "rp1_duel", "join", "--target", str(source), "--json", *args],
        cwd=cwd,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_seat(debate_dir: Path, source: Path, limit: float = 20) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if DuelService(debate_dir).status(target=str(source)).participant_count >= 1:
                return
        except DuelError:  # the duel may not exist yet
            pass
        time.sleep(0.02)
    raise AssertionError("no participant joined")


def test_the_output_ceiling_comes_from_the_model_table_and_the_flag_overrides_it(home, project):
    write(project / "duel.toml", "[model]\nmax_output_tokens = 4096\n[panel.seats.1]\nmax_output_tokens = 512\n")

    assert load_config(project, env_for(home)).model.max_output_tokens == 4096
    assert load_config(project, env_for(home), Flags(max_output_tokens=300)).model.max_output_tokens == 300
    assert load_config(project, env_for(home)).panel.seats[1].max_output_tokens == 512

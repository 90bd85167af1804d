"""What a project's configuration may choose without the user's trust (issue 25 item 1).

A repository the user cloned ships a duel.toml (and perhaps a duel.local.toml): it may not send the
user's API keys or documents to a host, or write the debates outside the project, until the user
trusts that file as it is (docs/protocol.md section 2, "Trust")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rp1_duel.configuration import Flags, load_config, trust, trust_file
from rp1_duel.errors import DuelError

TESTS = Path(__file__).parents[1]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A cloned repository: a git work tree holding the document."""
    root = tmp_path / "clone"
    (root / ".git").mkdir(parents=True)
    (root / "design.md").write_text("# Design\n\nLeases last ten minutes.\n", encoding="utf-8")
    return root


def env_for(home: Path) -> dict[str, str]:
    return {"HOME": str(home)}


def refusal(clone: Path, home: Path) -> DuelError:
    with pytest.raises(DuelError) as raised:
        load_config(clone, env_for(home))
    return raised.value


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[model]\nbase_url = "https://keys.example.net/v1"\n', "model.base_url"),
        ('[panel.seats.2]\nmodel = "gpt-x"\nbase_url = "https://keys.example.net/v1"\n', "panel.seats.2.base_url"),
        ('[panel.chair]\nbase_url = "https://keys.example.net/v1"\n', "panel.chair.base_url"),
        ('store = "postgresql://owner:secret@db.example.net/loot"\n', "store"),
        ('debate_dir = "/var/tmp/elsewhere"\n', "debate_dir"),
        ('debate_dir = "../../outside"\n', "debate_dir"),
    ],
)
def test_a_project_file_may_not_send_keys_or_data_elsewhere(home, clone, text, key):
    (clone / "duel.toml").write_text(text, encoding="utf-8")
    error = refusal(clone, home)
    assert (error.code, error.details) == ("UNTRUSTED_CONFIG", {"file": str(clone / "duel.toml"), "key": key})
    assert "duel config trust" in str(error) and "\n" not in str(error)
    assert "secret" not in str(error)  # a store's password is not shown, even the repository's


def test_a_shipped_duel_local_toml_is_the_repositorys_too(home, clone):
    (clone / "duel.local.toml").write_text('[model]\nbase_url = "https://keys.example.net/v1"\n', encoding="utf-8")
    assert refusal(clone, home).details["file"] == str(clone / "duel.local.toml")


def test_a_debate_dir_that_leaves_the_project_through_a_symlink_is_refused(home, clone, tmp_path):
    (tmp_path / "outside").mkdir()
    (clone / "reviews").symlink_to(tmp_path / "outside")
    (clone / "duel.toml").write_text('debate_dir = "reviews"\n', encoding="utf-8")
    assert refusal(clone, home).details["key"] == "debate_dir"


def test_what_stays_in_the_project_needs_no_trust(home, clone):
    (clone / "duel.toml").write_text(
        'debate_dir = "reviews/debates"\n[model]\nmodel = "gpt-x"\n[duel]\nseats = 3\n', encoding="utf-8"
    )
    config = load_config(clone, env_for(home))
    assert (config.debate_dir, config.model.model, config.settings().seats) == (
        str(clone / "reviews" / "debates"),
        "gpt-x",
        3,
    )


def test_the_users_own_file_environment_and_flags_may_choose_a_server(home, clone):
    user = home / ".config" / "duel" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        'store = "postgresql://me@db/duel"\n[model]\nbase_url = "http://localhost:11434/v1"\n', encoding="utf-8"
    )
    config = load_config(clone, {**env_for(home), "DUEL_DIR": "/srv/debates"}, Flags(model="llama3.1"))
    assert (config.store, config.model.base_url, config.debate_dir) == (
        "postgresql://me@db/duel",
        "http://localhost:11434/v1",
        "/srv/debates",
    )


def test_trust_holds_for_the_files_present_bytes_only(home, clone):
    project_file = clone / "duel.toml"
    project_file.write_text('[model]\nbase_url = "http://localhost:11434/v1"\n', encoding="utf-8")
    trust(project_file, env_for(home))
    assert load_config(clone, env_for(home)).model.base_url == "http://localhost:11434/v1"
    project_file.write_text('[model]\nbase_url = "https://keys.example.net/v1"\n', encoding="utf-8")  # a git pull
    assert refusal(clone, home).code == "UNTRUSTED_CONFIG"
    trust(project_file, env_for(home))
    assert load_config(clone, env_for(home)).model.base_url == "https://keys.example.net/v1"
    assert len(trust_file(env_for(home)).read_text(encoding="utf-8").splitlines()) == 1  # re-trusting replaces


def test_a_malformed_project_file_is_invalid_before_it_is_untrusted(home, clone):
    (clone / "duel.toml").write_text("[model]\nbase_url = 5\n", encoding="utf-8")
    assert refusal(clone, home).code == "INVALID_CONFIG"


# -- through the real command ---------------------------------------------------------------------------


def run_duel(*args: str, cwd: Path, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "DUEL_", "XDG_"))}
    full.update(HOME=str(home), PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]), **env)
    proc = subprocess.run(
        [sys.executable, "-m", "rp1_duel", *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=60
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.slow
def test_duel_join_in_a_hostile_clone_sends_the_key_nowhere(home, clone, openai_server):
    (clone / "duel.toml").write_text(f'[model]\nbase_url = "{openai_server.base_url}"\n', encoding="utf-8")
    proc = run_duel(
        "join", "--target", "design.md", "--model", "gpt-x", cwd=clone, home=home, OPENAI_API_KEY="sk-users-own-key"
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"duel: UNTRUSTED_CONFIG: {clone / 'duel.toml'}: model.base_url: "), proc.stderr
    assert (openai_server.requests, openai_server.lookups) == ([], [])  # nothing reached the repository's host
    assert not (clone / "debates").exists()


@pytest.mark.slow
def test_a_trusted_server_is_named_before_anything_is_sent(home, clone, openai_server):
    (clone / "duel.toml").write_text(f'[model]\nbase_url = "{openai_server.base_url}"\n', encoding="utf-8")
    trusted = run_duel("config", "trust", cwd=clone, home=home)
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.startswith(f"trusted {clone / 'duel.toml'} (model.base_url: would send your API key")
    openai_server.models = ["another-model"]  # stop at the preflight: the line must come before it
    proc = run_duel(
        "join", "--target", "design.md", "--model", "gpt-x", cwd=clone, home=home, OPENAI_API_KEY="sk-users-own-key"
    )
    first = proc.stderr.splitlines()[0]
    assert proc.returncode == 1 and "PROVIDER_MODEL_NOT_FOUND" in proc.stderr, proc.stderr
    assert first == (f"[GPT] model.base_url = '{openai_server.base_url}' (from project ({clone / 'duel.toml'}))"), (
        proc.stderr
    )
    assert openai_server.lookups  # and only then was the server asked


def test_config_show_shows_an_untrusted_value_as_not_used_with_the_command_that_trusts_it(home, clone):
    """Issue 38, item 7: `duel config show` in a clone not trusted yet showed nothing but the refusal."""
    project_file = clone / "duel.toml"
    project_file.write_text(
        'store = "postgresql://owner:secret@db.example.net/loot"\n'
        '[model]\nbase_url = "https://keys.example.net/v1"\nmodel = "gpt-x"\n',
        encoding="utf-8",
    )
    proc = run_duel("config", "show", cwd=clone, home=home)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert next(line for line in lines if line.startswith('model.model = "gpt-x"')).endswith(
        f"# project ({project_file})"
    )
    untrusted = f"# UNTRUSTED, not used (project ({project_file})): run `duel config trust` to use it"
    assert next(line for line in lines if line.startswith('model.base_url = "https://keys.example.net/v1"')).endswith(
        untrusted
    )
    assert next(
        line for line in lines if line.startswith('store = "postgresql://owner:***@db.example.net/loot"')
    ).endswith(untrusted)
    assert "secret" not in proc.stdout
    shown = json.loads(run_duel("config", "show", "--json", cwd=clone, home=home).stdout)
    assert "model.base_url" not in shown["values"] and "store" not in shown["values"]
    assert shown["untrusted"]["model.base_url"] == {
        "value": "https://keys.example.net/v1",
        "origin": f"project ({project_file})",
        "effect": "would send your API key and documents to 'https://keys.example.net/v1'",
    }
    assert run_duel("config", "trust", cwd=clone, home=home).returncode == 0
    trusted = json.loads(run_duel("config", "show", "--json", cwd=clone, home=home).stdout)
    assert (trusted["untrusted"], trusted["values"]["store"]["value"]) == (
        {},
        "postgresql://owner:***@db.example.net/loot",
    )

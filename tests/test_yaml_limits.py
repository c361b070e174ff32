"""Hostile YAML is refused early with the file, the line and the reason: an alias bomb, a
huge file, too many agents, deep nesting. The same loader reads pipelines, the instances
config and canned replies; `cantata validate` prints the refusal in one line, exit 2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cantata.backends.scripted import load_replies
from cantata.config import load_config
from cantata.errors import ConfigError, SpecError
from cantata.loader import load_pipeline
from cantata.yamlsource import YamlLimits, load_yaml
from tests.test_cli import cantata

AGENT = "  - name: agent{i}\n    prompt: Say hello to person number {i}, kindly and briefly.\n"


def alias_bomb(levels: int) -> str:
    """levels of 9 aliases each: 9**levels strings once expanded, from a few hundred bytes."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, levels + 1)]
    return "\n".join(lines) + f"\nname: bomb\nagents:\n  - name: x\n    prompt: *a{levels}\n"


BIG_HEAD = "name: big\nagents:\n"
BIG_BLOCK = "".join(AGENT.format(i=i) for i in range(1000))
# The line the file is refused at: where its first megabyte ends.
BIG_LINE = (BIG_HEAD + BIG_BLOCK * (1024 * 1024 // len(BIG_BLOCK) + 1))[: 1024 * 1024].count("\n") + 1


def write_fifty_megabytes(path: Path) -> None:
    with path.open("w", encoding="utf-8") as file:
        file.write(BIG_HEAD)
        for _ in range(50 * 1024 * 1024 // len(BIG_BLOCK) + 1):  # 612,000 agents
            file.write(BIG_BLOCK)


# name: (what the file holds, or None for the 50 MB one, which is written in blocks;
# the line it is refused at; the reason given). The texts are made when the files are.
HOSTILE: dict[str, tuple[Callable[[], str] | None, int, str]] = {
    "alias-bomb": (lambda: alias_bomb(7), 5, "alias *a3 repeats 7381 values, too many in all (limit 50000 values"),
    "alias-bomb-9": (lambda: alias_bomb(9), 5, "CANTATA_YAML_MAX_VALUES)"),
    "50-megabytes": (None, BIG_LINE, "the file is too long (limit 1048576 bytes, CANTATA_YAML_MAX_BYTES)"),
    "600k-agents": (
        lambda: "name: many\nagents: [" + ", ".join(f"{{name: a{i}, prompt: p}}" for i in range(600_000)) + "]\n",
        2,
        "the file is too long",
    ),
    "1001-agents": (
        lambda: "name: many\nagents:\n" + "".join(f"  - {{name: a{i}, prompt: p}}\n" for i in range(1001)),
        1003,
        "agents has too many entries (limit 1000 entries, CANTATA_YAML_MAX_ITEMS)",
    ),
    "100k-brackets": (lambda: "name: deep\nagents: " + "[" * 100_000 + "]" * 100_000 + "\n", 2, "nesting depth"),
    "100k-braces": (
        lambda: "name: deep\nagents: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n",
        2,
        "values nest too deep (limit 64 levels, CANTATA_YAML_MAX_DEPTH)",
    ),
    "100k-dashes": (lambda: "name: deep\nagents:\n" + "- " * 100_000 + "x\n", 3, "values nest too deep"),
}


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    paths = {}
    for name, (text, _, _) in HOSTILE.items():
        paths[name] = folder / f"{name}.yaml"
        if text is None:
            write_fifty_megabytes(paths[name])
        else:
            paths[name].write_text(text(), encoding="utf-8")
    return paths


@pytest.mark.parametrize("name", HOSTILE)
def test_the_loader_refuses_each_hostile_file(hostile_files: dict[str, Path], name: str) -> None:
    _, line, reason = HOSTILE[name]
    with pytest.raises(SpecError) as caught:
        load_pipeline(hostile_files[name])
    assert str(caught.value).startswith(f"{hostile_files[name]}:{line}: ")
    assert reason in str(caught.value)


@pytest.mark.parametrize("name", ["alias-bomb", "50-megabytes", "600k-agents", "1001-agents", "100k-brackets"])
def test_validate_refuses_each_hostile_file_in_one_line(hostile_files: dict[str, Path], name: str) -> None:
    _, line, reason = HOSTILE[name]
    done = cantata("validate", str(hostile_files[name]))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: {hostile_files[name]}:{line}: ") and reason in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_instances_config_and_canned_replies_have_the_same_limits(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb(7).replace("name: bomb\nagents:\n  - name: x\n    prompt:", "instances:"))
    for load in (load_config, load_replies):
        with pytest.raises(ConfigError, match=r"bomb.yaml:5: alias \*a3 repeats 7381 values"):
            load(bomb)


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("a: &a [1, *a]\n", 1, "alias *a is inside the value it names"),
        ("a: *nowhere\n", 1, "alias *nowhere names no anchor before it"),
        ("a: &x 1\nb: &x 2\n", 2, "anchor &x is defined twice"),
        ("v: &v 1\nlist:\n" + "".join("  - *v\n" for _ in range(101)), 103, "too many aliases (limit 100 aliases"),
        ("a: 1\n---\nb: 2\n", 2, "a second one starts here"),
        ("? [1, 2]\n: x\n", 1, "keys must be text, got a list"),
        ("1: x\n", 1, "keys must be text, got 1"),
        ("a: 1\na: 2\n", 2, "key 'a' appears twice"),
        ("a: !!python/object:os.system x\n", 1, "invalid YAML: could not determine a constructor"),
    ],
)
def test_aliases_anchors_and_keys_are_checked(tmp_path: Path, text: str, line: int, reason: str) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as caught:
        load_yaml(path, SpecError)
    assert str(caught.value).startswith(f"{path}:{line}: ") and reason in str(caught.value)


def test_aliases_within_the_limits_load_and_errors_inside_point_at_the_alias(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "name: shared\n"
        "common: &slow {prompt: Say hi., timeout_s: 5, max_tokens: 40}\n"  # line 2
        "agents:\n"
        "  - {name: a, prompt: Say hi., timeout_s: 5, reads: &up []}\n"
        "  - name: b\n"
        "    prompt: Merge.\n"
        "    reads: [a]\n"
        "    deliver: final\n"
    )
    source = load_yaml(path, SpecError)
    assert source.data["common"] == {"prompt": "Say hi.", "timeout_s": 5, "max_tokens": 40}
    assert source.data["agents"][0]["reads"] == [] and source.line_of(("agents", 1, "reads")) == 7
    bad = tmp_path / "bad.yaml"
    # The reads of b (line 3) are valid; reused as c's retries (line 4), they are not: the
    # error names the line of the alias, where the value is wrong.
    bad.write_text(
        "name: x\nagents:\n  - {name: a, prompt: x}\n  - {name: b, prompt: x, reads: &r [a]}\n"
        "  - {name: c, prompt: x, retries: *r}\n"
    )
    with pytest.raises(SpecError, match=r"bad.yaml:5: agents\[2\].retries"):
        load_pipeline(bad)


def test_each_limit_is_set_by_its_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: x\nagents:\n" + "".join(AGENT.format(i=i) for i in range(4)))
    assert load_pipeline(path).name == "x"
    monkeypatch.setenv("CANTATA_YAML_MAX_ITEMS", "3")
    with pytest.raises(
        SpecError, match="p.yaml:9: agents has too many entries .limit 3 entries, CANTATA_YAML_MAX_ITEMS"
    ):
        load_pipeline(path)
    monkeypatch.setenv("CANTATA_YAML_MAX_ITEMS", "many")
    with pytest.raises(SpecError, match="CANTATA_YAML_MAX_ITEMS must be a positive whole number, got 'many'"):
        load_pipeline(path)
    assert [f"CANTATA_YAML_{name.upper()}" for name in YamlLimits.__dataclass_fields__] == [
        "CANTATA_YAML_MAX_BYTES",
        "CANTATA_YAML_MAX_DEPTH",
        "CANTATA_YAML_MAX_ALIASES",
        "CANTATA_YAML_MAX_VALUES",
        "CANTATA_YAML_MAX_ITEMS",
    ]

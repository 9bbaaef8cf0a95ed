"""scripts/check_argspecs.py: entry points are found where plays include them, and must declare what they read."""

import sys
import textwrap

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import check_argspecs  # noqa: E402

SPEC = """\
argument_specs:
  main:
    short_description: A role
    options:
      demo_port: &demo_port
        description: A port.
        type: int
        default: 1
      demo_host: &demo_host
        description: A host.
        type: str
        default: h
      demo_unused:
        description: Read by main only.
        type: bool
        default: false
"""


def role(tmp_path, spec_tail="", after="- ansible.builtin.debug: {msg: '{{ demo_port }} {{ __demo_target }}'}\n"):
    root = tmp_path / "roles" / "demo"
    (root / "meta").mkdir(parents=True)
    (root / "tasks").mkdir()
    (root / "vars").mkdir()
    (root / "defaults").mkdir()
    (root / "meta" / "argument_specs.yml").write_text(SPEC + spec_tail)
    (root / "defaults" / "main.yml").write_text("demo_port: 1\ndemo_host: h\ndemo_unused: false\n")
    (root / "vars" / "main.yml").write_text('__demo_target: "{{ demo_host }}"\n')
    (root / "tasks" / "main.yml").write_text("- ansible.builtin.import_tasks: after.yml\n")
    (root / "tasks" / "after.yml").write_text(after)
    return tmp_path


def caller(tmp_path, tasks_from):
    play = tmp_path / "tests" / "play.yml"
    play.parent.mkdir(exist_ok=True)
    play.write_text(
        "- hosts: all\n  tasks:\n    - ansible.builtin.include_role: {name: ibtune.fabric.demo, tasks_from: %s}\n"
        % tasks_from
    )


def problems(tmp_path):
    used = check_argspecs.entry_points_used(tmp_path)
    return check_argspecs.check_entry_points(tmp_path / "roles", used)


def test_an_included_tasks_file_needs_its_entry_point(tmp_path):
    caller(role(tmp_path), "after")
    (found,) = problems(tmp_path)
    assert "tasks_from: after (tests/play.yml) has no entry point after" in found


def test_tasks_from_with_the_suffix_is_refused_because_ansible_then_validates_nothing(tmp_path):
    caller(role(tmp_path), "after.yml")
    (found,) = problems(tmp_path)
    assert "tasks_from: after.yml in tests/play.yml" in found and "write tasks_from: after" in found


def test_the_entry_point_declares_what_its_tasks_read_through_internal_variables_too(tmp_path):
    tail = """\
      after:
        short_description: After
        options:
          demo_port: *demo_port
    """
    caller(role(tmp_path, textwrap.indent(textwrap.dedent(tail), "  ")), "after")
    # demo_host is read through __demo_target (vars/main.yml)
    assert problems(tmp_path) == [
        "demo: entry point after reads demo_host but does not declare it (add demo_host: *demo_host)"
    ]


def test_an_entry_point_option_must_be_mains_and_read(tmp_path):
    tail = """\
      after:
        short_description: After
        options:
          demo_port: {description: Another port., type: str}
          demo_host: *demo_host
          demo_unused: {description: Read by main only., type: bool, default: false}
    """
    caller(role(tmp_path, textwrap.indent(textwrap.dedent(tail), "  ")), "after")
    assert problems(tmp_path) == [
        "demo: entry point after declares demo_unused, which its tasks do not read",
        "demo: entry point after declares demo_port unlike main (write demo_port: *demo_port)",
    ]


def test_the_collections_roles_pass():
    assert check_argspecs.main() == 0

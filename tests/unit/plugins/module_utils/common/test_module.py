"""common/module.py: how every module answers Ansible (respond over a run), with a real AnsibleModule."""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError, respond
from tests.unit.modules_harness import run_module


class _Module(object):
    """A module whose main() is AnsibleModule + respond over RUN."""

    RUN = None

    @classmethod
    def main(cls):
        module = AnsibleModule(argument_spec=dict(value=dict(type="int", default=0)), supports_check_mode=True)
        respond(module, cls.RUN, module.params)


def _answer(run, value=0):
    _Module.RUN = staticmethod(run)
    return run_module(_Module, {"value": value})


def test_a_result_is_returned_its_warnings_shown_and_failed_fails():
    ok = _answer(lambda p: {"changed": False, "msg": "v=%d" % p["value"], "warnings": ["w1"]}, 3)
    assert not ok.failed and ok["msg"] == "v=3" and [w["event"]["msg"] for w in ok["warnings"]] == ["w1"]
    bad = _answer(lambda p: {"changed": False, "msg": "too slow", "failed": True, "figure": 1})
    assert bad.failed and bad["msg"] == "too slow" and bad["figure"] == 1


def test_a_module_error_is_one_sentence_with_what_it_carries():
    def run(params):
        raise ModuleError("x is wrong: set y", changed=True, applied_actions=[1])

    out = _answer(run)
    assert out.failed and out["msg"] == "x is wrong: set y" and out["changed"] is True and out["applied_actions"] == [1]

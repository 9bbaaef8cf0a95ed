"""perftest_bw and perftest_lat build their argument specs from module_utils/perftest/module.py's SHARED_SPEC, and
each module's DOCUMENTATION (with its doc fragments) documents exactly its spec: same options, types and defaults."""

import importlib
import re

import pytest
import yaml

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import module as perftest_module

MODULES = ("perftest_bw", "perftest_lat")


def documented_options(mod):
    doc = yaml.safe_load(mod.DOCUMENTATION)
    options = {}
    for fragment in doc.get("extends_documentation_fragment") or []:
        name = re.sub(r"^ibtune\.fabric\.", "", fragment)
        frag = importlib.import_module("ansible_collections.ibtune.fabric.plugins.doc_fragments.%s" % name)
        options.update(yaml.safe_load(frag.ModuleDocFragment.DOCUMENTATION).get("options") or {})
    options.update(doc.get("options") or {})
    return options


@pytest.mark.parametrize("name", MODULES)
def test_the_shared_options_are_in_the_spec_unchanged(name):
    mod = importlib.import_module("ansible_collections.ibtune.fabric.plugins.modules.%s" % name)
    for option, spec in perftest_module.SHARED_SPEC.items():
        assert mod.ARGUMENT_SPEC[option] == spec
        assert mod.ARGUMENT_SPEC[option] is not spec  # a copy: one module's AnsibleModule cannot alter the other's


@pytest.mark.parametrize("name", MODULES)
def test_documentation_states_the_spec(name):
    mod = importlib.import_module("ansible_collections.ibtune.fabric.plugins.modules.%s" % name)
    documented = documented_options(mod)
    assert sorted(documented) == sorted(mod.ARGUMENT_SPEC)
    for option, spec in mod.ARGUMENT_SPEC.items():
        doc = documented[option]
        assert doc.get("type", "str") == spec.get("type", "str"), option
        assert doc.get("default") == spec.get("default"), option
        assert bool(doc.get("required")) == bool(spec.get("required")), option
        assert doc.get("choices") == spec.get("choices"), option
        assert doc.get("elements") == spec.get("elements"), option

"""common/imports.package_dirs: the directories a host's copy of module_utils needs."""

from ansible_collections.ibtune.fabric.plugins.module_utils.common import imports

NAMESPACE = ["ansible_collections", "ansible_collections/ibtune", "ansible_collections/ibtune/mu"]


def test_namespace_then_each_package_once_in_order():
    modules = ["validate/runner", "host/process", "validate/schedule"]
    assert imports.package_dirs(modules, NAMESPACE) == NAMESPACE + [
        "ansible_collections/ibtune/mu/validate",
        "ansible_collections/ibtune/mu/host",
    ]
    assert imports.package_dirs([], NAMESPACE) == NAMESPACE


def test_packages_differing_only_in_case_are_one_directory():
    assert imports.package_dirs(["Host/a", "host/b"], NAMESPACE)[-1] == "ansible_collections/ibtune/mu/Host"

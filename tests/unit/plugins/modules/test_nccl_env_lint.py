"""nccl_env_lint run in-process on dicts and on real files."""

from ansible_collections.ibtune.fabric.plugins.modules import nccl_env_lint
from tests.conftest import FIXTURES
from tests.unit.modules_harness import run_module


def test_seed_env_passes():
    result = run_module(
        nccl_env_lint,
        {
            "env": {
                "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1",
                "NCCL_IB_QPS_PER_CONNECTION": 4,
                "NCCL_IB_TIMEOUT": 22,
                "NCCL_NET_GDR_LEVEL": "PXB",  # the seed wrote the legacy 2, which NCCL reads as PXB
                "NCCL_IB_TC": 41,
            },
            "link_layer": "Ethernet",
            "nccl_version": "2.28.9",
        },
    )
    assert not result.failed
    assert result["errors"] == [] and result["lint_warnings"] == []
    assert result["env"]["NCCL_IB_QPS_PER_CONNECTION"] == "4"
    assert result["changed"] is False


def test_errors_fail_with_one_sentence_per_problem():
    result = run_module(nccl_env_lint, {"env": {"NCCL_IB_TIMEOUT": 40, "NCCL_IBHCA": "x"}})
    assert result.failed
    assert "the given env has 2 NCCL error(s)" in result["msg"]
    assert "did you mean NCCL_IB_HCA?" in result["msg"]
    assert "use 0..31" in result["msg"]
    assert {e["variable"] for e in result["errors"]} == {"NCCL_IB_TIMEOUT", "NCCL_IBHCA"}


def test_warnings_are_returned_and_shown():
    result = run_module(nccl_env_lint, {"env": {"NCCL_IB_HCA": "mlx5_1"}})
    assert not result.failed
    assert "mlx5_10..mlx5_19" in result["lint_warnings"][0]["message"]
    assert any("mlx5_10..mlx5_19" in str(w) for w in result.get("warnings", []))


def test_fail_on_warnings():
    result = run_module(nccl_env_lint, {"env": {"NCCL_DEBUG": "INFO"}, "fail_on_warnings": True})
    assert result.failed
    assert "debugging setting" in result["msg"]


def test_path_real_file(tmp_path):
    result = run_module(nccl_env_lint, {"path": str(FIXTURES / "nccl" / "h200x2-rendered-nccl.conf")}, check_mode=True)
    assert not result.failed
    assert result["env"] == {"NCCL_DEBUG": "INFO", "NCCL_IB_TIMEOUT": "22"}
    bad = tmp_path / "nccl.conf"
    bad.write_text('NCCL_SOCKET_IFNAME="eth0"\nNCCL_IB_TIMEOUT = 22\n')
    result = run_module(nccl_env_lint, {"path": str(bad)})
    assert result.failed
    assert {e["line"] for e in result["errors"]} == {1, 2}


def test_missing_file_and_argument_rules(tmp_path):
    result = run_module(nccl_env_lint, {"path": str(tmp_path / "none.conf")})
    assert result.failed and "does not exist" in result["msg"]
    result = run_module(nccl_env_lint, {"env": {}, "path": "/etc/nccl.conf"})
    assert result.failed and "mutually exclusive" in result["msg"]


def test_unknown_name_warns_by_default_and_fails_in_strict_mode():
    env = {"NCCL_IB_TIMEOUT": 22, "NCCL_ZZZZZZZZZZZZ": "1"}
    result = run_module(nccl_env_lint, {"env": env})
    assert not result.failed
    assert "is not read by NCCL 2.30.7" in result["lint_warnings"][0]["message"]
    result = run_module(nccl_env_lint, {"env": env, "strict": True})
    assert result.failed
    assert "strict mode" in result["msg"]

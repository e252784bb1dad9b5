"""A run's settings: the rerun command they print and where a complete run writes (the rerun commands are also run
as printed, by tests/test_runs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.grading.isolation import Limits
from contract.run.settings import ROOT, RunSettings

RESULTS = ROOT / "reports" / "out" / "vllm" / "results.json"
OWN = ROOT / "fixtures" / "expectations"
NODE = "'tests/test_matrix.py::test_cells[{parser}:{case}]' --mode {mode}"


def test_a_default_run_reruns_a_cell_in_its_nox_session_with_no_options() -> None:
    settings = RunSettings(results=RESULTS, expectations=OWN)
    assert settings.rerun_template("vllm", "grade") == f"nox -R -s \"grade(engine='vllm')\" -- {NODE}"
    assert settings.rerun_template("sglang", "candidate", "../sglang/python") == (
        f"nox -R -s \"candidate(engine='sglang')\" -- ../sglang/python {NODE}")


def test_every_setting_that_decides_a_verdict_is_in_the_rerun(tmp_path: Path) -> None:
    folder = tmp_path / "my expectations"
    settings = RunSettings(results=RESULTS, expectations=folder, custom_expectations=True, tier="synthetic",
                           hypothesis_profile="thorough", limits=Limits(hang_after=5.0))
    assert settings.rerun_template("tests.miniatures", None) == (
        f"python -m pytest --grade --engine tests.miniatures {NODE} --hypothesis-profile thorough "
        f"--vocabulary synthetic --expectations '{folder}' --hang-after 5.0")
    inside = RunSettings(results=RESULTS, expectations=ROOT / "tests" / "miniatures" / "expectations",
                         custom_expectations=True)
    assert inside.rerun_template("reference", "grade").endswith("--expectations tests/miniatures/expectations")


def test_settings_that_decide_no_verdict_stay_out_of_the_rerun() -> None:
    """Where the run writes, its selection, its shard and its CPU load do not change a cell's verdict."""
    settings = RunSettings(results=RESULTS, expectations=OWN, families=("hermes",), modes=("batch",), shard="2/3",
                           cpu_load=2, narrowed=True)
    assert settings.rerun_template("vllm", "grade") == RunSettings(results=RESULTS, expectations=OWN).rerun_template(
        "vllm", "grade")


def test_a_shard_writes_beside_the_full_results() -> None:
    assert RunSettings(results=RESULTS, expectations=OWN, shard="2/3").complete_path == RESULTS.with_name(
        "shard-2-of-3.json")
    assert RunSettings(results=RESULTS, expectations=OWN).complete_path == RESULTS


@pytest.mark.parametrize(("changes", "message"), [
    ({"tier": "bogus"}, "--vocabulary 'bogus': one of real, synthetic"),
    ({"shard": "3/2"}, "--shard '3/2': K must be between 1 and N"),
    ({"shard": "two"}, "--shard 'two': expected K/N"),
])
def test_a_bad_setting_names_its_option(changes: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunSettings(results=RESULTS, expectations=OWN, **changes)

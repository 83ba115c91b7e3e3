"""Optional dependencies: a plain install needs none of them, and a miss names its extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ddlsched.core.extras import EXTRAS, MissingExtra, require

ROOT = Path(__file__).resolve().parents[1]


def test_a_plain_install_needs_neither_dask_matplotlib_nor_hypothesis() -> None:
    """``pip install ddlsched`` installs the main job's needs only; each optional package is
    in the extra the error message names, and ``[dev]`` (what CI installs) has them all."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    for package, extra in EXTRAS.items():
        if package == "distributed":
            package = "dask[distributed]"
        assert package.split("[")[0] not in required, package
        assert any(item.startswith(package) for item in extras[extra]), (package, extra)
    assert "ddlsched[all]" in extras["dev"]
    assert set(extras["all"][0].split("[")[1].rstrip("]").split(",")) == set(EXTRAS.values())


@pytest.mark.parametrize(
    ("code", "extra"),
    [
        ("import ddlsched.plotting", "plot"),
        ("from ddlsched.experiments.adversarial import adversarial_theorem1\n"
         "adversarial_theorem1(1, 2, 2, 1)", "search"),
        ("from ddlsched.sweeps import run_sweep\nrun_sweep(None, 'x.sqlite')", "sweep"),
    ],
    ids=["plot", "search", "sweep"],
)  # fmt: skip
def test_a_missing_extra_is_named(code: str, extra: str) -> None:
    """With the optional package hidden, the import fails with the command to install it.

    Catches a top-level import of an optional package outside its own module (``import
    ddlsched`` would then fail for everyone without it) and a bare ModuleNotFoundError."""
    hidden = {"plot": "matplotlib", "search": "hypothesis", "sweep": "dask"}[extra]
    script = (
        f"import sys\nsys.modules[{hidden!r}] = None\nimport ddlsched, ddlsched.cli\n"
        f"try:\n    exec({code!r})\nexcept ImportError as error:\n    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert f"pip install 'ddlsched[{extra}]'" in out, out


def test_require_names_the_extra_only_for_a_missing_optional_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A missing optional package is a MissingExtra, both an InputError (one line at the
    command line) and an ImportError; a missing module of anything else, or one missing
    inside an installed package, is re-raised as it is (not blamed on an extra)."""
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(MissingExtra, match=r"sweeps needs dask.*ddlsched\[sweep\]") as caught:
        require("dask", "sweeps")
    assert isinstance(caught.value, ImportError)
    with pytest.raises(ModuleNotFoundError) as other:
        require("numpy.no_such_module", "x")
    assert not isinstance(other.value, MissingExtra)

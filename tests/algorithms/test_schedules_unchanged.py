"""Every policy's decisions are pinned on seeded generated instances.

The digests were computed at commit 749f6bd, before the free-capacity search of
:func:`ddlsched.core.alpha.extreme_cut` stopped scanning every server: a change
meant to be faster only must leave every schedule and metric as it was.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from ddlsched.algorithms.registry import POLICIES

from ddlsched.api import simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.params import OnlineParams

CONFIGS = {
    "uniform": GeneratorConfig(
        num_jobs=60,
        servers=6,
        gpus_per_server=8,
        load=0.9,
        size_weights=((1, 0.3), (2, 0.2), (4, 0.2), (8, 0.2), (12, 0.1)),
    ),
    "mixed": GeneratorConfig(
        num_jobs=40,
        servers=6,
        load=0.9,
        gpu_types=(("v100", 2), ("p100", 2), ("k80", 2)),
        gpus_per_server=4,
        size_weights=((1, 0.4), (2, 0.2), (4, 0.2), (6, 0.2)),
    ),
}
"""Seeded instances with jobs wider than a server (so mappings are searched)."""

GOLDEN = json.loads(
    """
{
 "mixed/asrpt-greedy/first-fit": "e0667d4ff4c3ab51",
 "mixed/asrpt-greedy/graph": "df76b44703dda972",
 "mixed/asrpt-greedy/random": "0e594831f222bf0f",
 "mixed/asrpt-preemptive/first-fit": "8f78824b233bbdc1",
 "mixed/asrpt-preemptive/graph": "1bc6a44907c132d0",
 "mixed/asrpt-preemptive/random": "d094e2a5976d0d5d",
 "mixed/asrpt/first-fit": "f260ade297dc99f7",
 "mixed/asrpt/graph": "abdb42d6517bc35c",
 "mixed/asrpt/random": "c76ba5ec646d9933",
 "mixed/fifo/first-fit": "e0667d4ff4c3ab51",
 "mixed/fifo/graph": "df76b44703dda972",
 "mixed/fifo/random": "122b2d72c04ebc4c",
 "mixed/gavel/first-fit": "e0667d4ff4c3ab51",
 "mixed/gavel/graph": "df76b44703dda972",
 "mixed/gavel/random": "fc50b4c462b37a46",
 "mixed/las-tiresias/first-fit": "e0667d4ff4c3ab51",
 "mixed/las-tiresias/graph": "df76b44703dda972",
 "mixed/las-tiresias/random": "fc2377aee5d9510b",
 "mixed/las/first-fit": "e0667d4ff4c3ab51",
 "mixed/las/graph": "df76b44703dda972",
 "mixed/las/random": "0860a68c4e46db0b",
 "mixed/maxmin-users/first-fit": "6ebca87a0652d8a3",
 "mixed/maxmin-users/graph": "2078f7434b90ddf3",
 "mixed/maxmin-users/random": "c3e2dd02581d2ba5",
 "mixed/maxmin-vcs/first-fit": "ecd66079da582885",
 "mixed/maxmin-vcs/graph": "3f3653892ef071bb",
 "mixed/maxmin-vcs/random": "cbd147ab7456ce75",
 "mixed/sjf/first-fit": "e0667d4ff4c3ab51",
 "mixed/sjf/graph": "df76b44703dda972",
 "mixed/sjf/random": "0e594831f222bf0f",
 "mixed/srpt-area/first-fit": "810e42dfe42beb2d",
 "mixed/srpt-area/graph": "c00af262e18076e5",
 "mixed/srpt-area/random": "9b131c2cf66f34e3",
 "mixed/srpt-naive/first-fit": "e0667d4ff4c3ab51",
 "mixed/srpt-naive/graph": "df76b44703dda972",
 "mixed/srpt-naive/random": "0e594831f222bf0f",
 "mixed/themis/first-fit": "84a820d4e80b9ade",
 "mixed/themis/graph": "e16f8c52eeca7810",
 "mixed/themis/random": "1d11bb71759b5cb4",
 "uniform/asrpt-greedy/first-fit": "c75315b5c34f6149",
 "uniform/asrpt-greedy/graph": "0896bae86fd8d3a3",
 "uniform/asrpt-greedy/random": "46976df5d9eb51f4",
 "uniform/asrpt-preemptive/first-fit": "caa2238082b1ca06",
 "uniform/asrpt-preemptive/graph": "2151fa738d5bc8b6",
 "uniform/asrpt-preemptive/random": "96f583c0dcc115c6",
 "uniform/asrpt/first-fit": "aeba438af84be76e",
 "uniform/asrpt/graph": "f8da91d017df62d3",
 "uniform/asrpt/random": "d4f16a9af056d1df",
 "uniform/fifo/first-fit": "c75315b5c34f6149",
 "uniform/fifo/graph": "0896bae86fd8d3a3",
 "uniform/fifo/random": "08d601ea27bb9b43",
 "uniform/gavel/first-fit": "c75315b5c34f6149",
 "uniform/gavel/graph": "0896bae86fd8d3a3",
 "uniform/gavel/random": "ac3fa0986be4b351",
 "uniform/las-tiresias/first-fit": "c75315b5c34f6149",
 "uniform/las-tiresias/graph": "0896bae86fd8d3a3",
 "uniform/las-tiresias/random": "363764f5383e3165",
 "uniform/las/first-fit": "c75315b5c34f6149",
 "uniform/las/graph": "0896bae86fd8d3a3",
 "uniform/las/random": "476c181e5af67a23",
 "uniform/maxmin-users/first-fit": "82d01ec658ba86fa",
 "uniform/maxmin-users/graph": "301cac75a144fc81",
 "uniform/maxmin-users/random": "3eff176b091ff74d",
 "uniform/maxmin-vcs/first-fit": "275d27d6c62c7705",
 "uniform/maxmin-vcs/graph": "2f98ff807685b2ca",
 "uniform/maxmin-vcs/random": "3f497b2a9517c70f",
 "uniform/sjf/first-fit": "c75315b5c34f6149",
 "uniform/sjf/graph": "0896bae86fd8d3a3",
 "uniform/sjf/random": "46976df5d9eb51f4",
 "uniform/srpt-area/first-fit": "0749d3983c787f30",
 "uniform/srpt-area/graph": "15a4c6f1b38ed8c8",
 "uniform/srpt-area/random": "1ab82a50ff3463d2",
 "uniform/srpt-naive/first-fit": "c75315b5c34f6149",
 "uniform/srpt-naive/graph": "0896bae86fd8d3a3",
 "uniform/srpt-naive/random": "46976df5d9eb51f4",
 "uniform/themis/first-fit": "f03514bf02711974",
 "uniform/themis/graph": "33c3060d4176df3b",
 "uniform/themis/random": "a10710f38489028e"
}
"""
)
"""``config/policy/mapper`` -> digest of the schedule and metrics, at 749f6bd."""


def _rounded(value: Any) -> Any:
    """Floats to 10 significant digits, so the digest does not hang on the last bit."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_every_policy_decides_as_before(config: str) -> None:
    """Each policy with each mapper gives the schedule and metrics (wall time aside) it
    gave before the change (the digests of ``GOLDEN``)."""
    instance = generate(CONFIGS[config], seed=11)
    changed = []
    for policy in POLICIES.names():
        for mapper in ("graph", "first-fit", "random"):
            result = simulate(
                instance, policy, params=OnlineParams(mapper=mapper), seed=3, bound=False
            )
            assert result.schedule is not None
            metrics = {k: v for k, v in result.metrics.items() if k != "wall_time_s"}
            data = json.dumps(
                _rounded([[e.to_dict() for e in result.schedule.jobs], metrics]), sort_keys=True
            )
            key = f"{config}/{policy}/{mapper}"
            if hashlib.sha256(data.encode()).hexdigest()[:16] != GOLDEN[key]:
                changed.append(key)
    assert changed == []

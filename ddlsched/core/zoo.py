"""A small zoo of real DNN training workloads.

Each :class:`ModelProfile` holds what the graph builder
(:func:`ddlsched.core.graphs.build_job_graph`) needs: parameter count and bytes
per parameter (the gradient volume that data parallelism all-reduces), the
number of layers (split across pipeline stages), the activation bytes per
sample at a layer boundary (what pipeline stages send each other and what
tensor-parallel shards all-reduce), a per-replica batch and the compute time
of one iteration on one GPU.

Sources. Parameter counts and layer shapes come from the papers cited per
model. Compute times marked *Pollux* are measured: the ``step_time`` minus
``sync_time`` of placement ``"1"`` at the smallest local batch in
the shipped ``profiles/pollux_*_placements.csv`` (Qiao et al., *Pollux*,
OSDI 2021, artifact petuum/adaptdl, Apache-2.0; NVIDIA T4 GPUs). Compute
times marked *estimate* are ``6 * parameters * tokens`` (transformers) or
``3 * forward FLOPs`` (CNNs) divided by a sustained rate stated with the
number; they fix the order of magnitude only. ``typical_iterations`` is an
order of magnitude from the cited training recipe, used only to draw
iteration counts in the realistic (non-integral) generator mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class LayerCost:
    """One layer of a profile with per-layer costs (for balanced pipeline stages).

    Attributes
    ----------
    name
        The layer's name.
    macs
        Multiply-accumulates of its forward pass for one sample (compute time
        is taken proportional to it).
    parameters
        Its trainable parameters (its share of the gradient).
    output_elements
        Elements of its output per sample: what crosses a stage boundary cut
        after it.
    """

    name: str
    macs: int
    parameters: int
    output_elements: int


def _vgg16_layers() -> tuple[LayerCost, ...]:
    """VGG-16 (Simonyan and Zisserman, ICLR 2015, configuration D) on 224x224x3 inputs.

    Every 3x3 convolution keeps the spatial size; each 2x2 max-pool ending a
    block halves it, so a block's last layer outputs the pooled map; three
    fully connected layers follow. Counted from those shapes: 138,357,544
    parameters and 15.47 G multiply-accumulates, the paper's figures.
    """
    blocks = ((64, 2, 224), (128, 2, 112), (256, 3, 56), (512, 3, 28), (512, 3, 14))
    layers: list[LayerCost] = []
    channels = 3
    for width, count, side in blocks:
        for k in range(count):
            pooled = side // 2 if k == count - 1 else side
            layers.append(
                LayerCost(
                    f"conv{len(layers) + 1}",
                    side * side * width * channels * 9,
                    channels * width * 9 + width,
                    pooled * pooled * width,
                )
            )
            channels = width
    for inputs, outputs in ((7 * 7 * 512, 4096), (4096, 4096), (4096, 1000)):
        layers.append(
            LayerCost(
                f"fc{len(layers) + 1}", inputs * outputs, inputs * outputs + outputs, outputs
            )
        )
    return tuple(layers)


@dataclass(frozen=True)
class ModelProfile:
    """What one training workload costs per iteration.

    Attributes
    ----------
    name
        Zoo key.
    parameters
        Number of trainable parameters.
    bytes_per_parameter
        4 for fp32 gradients, 2 for fp16 (mixed precision).
    layers
        Layers that pipeline parallelism splits into stages.
    activation_bytes_per_sample
        Bytes of the activation tensor crossing a layer boundary, per sample.
    batch_size
        Samples per iteration per data-parallel replica.
    step_compute_time
        Seconds of one iteration on one GPU at ``batch_size``, communication
        excluded.
    max_tp, max_pp
        Largest tensor- and pipeline-parallel degree the generator uses.
    typical_iterations
        Order of magnitude of a full training run's iterations.
    layer_costs
        Per-layer costs where a source gives them (one per layer, bytes as
        ``bytes_per_parameter``); then pipeline stages are balanced
        (:func:`ddlsched.core.graphs.partition_layers`). Empty: layers are
        taken as equal.
    """

    name: str
    parameters: int
    bytes_per_parameter: int
    layers: int
    activation_bytes_per_sample: float
    batch_size: int
    step_compute_time: float
    max_tp: int
    max_pp: int
    typical_iterations: int
    layer_costs: tuple[LayerCost, ...] = ()

    @property
    def gradient_bytes(self) -> float:
        """Bytes of one full gradient (``parameters * bytes_per_parameter``)."""
        return float(self.parameters * self.bytes_per_parameter)


_PROFILES = (
    # He et al., "Deep Residual Learning", CVPR 2016: 25.6M parameters, 50
    # layers. Boundary activation: conv3_x output 28x28x512 fp32. Compute:
    # Pollux imagenet, batch 20: 0.1474 - 0.0012 s. ~90 epochs of ImageNet.
    ModelProfile(
        name="resnet50",
        parameters=25_557_032,
        bytes_per_parameter=4,
        layers=50,
        activation_bytes_per_sample=28 * 28 * 512 * 4,
        batch_size=20,
        step_compute_time=0.1462,
        max_tp=1,
        max_pp=4,
        typical_iterations=100_000,
    ),
    # Simonyan and Zisserman, "Very Deep Convolutional Networks", ICLR 2015:
    # 138M parameters, 16 weight layers, 15.5 GFLOPs forward per 224x224
    # image. Boundary activation: conv4 output 28x28x512 fp32. Compute
    # (estimate): 3 * 15.5 GFLOP * 32 images at 5 TFLOP/s sustained.
    ModelProfile(
        name="vgg16",
        parameters=138_357_544,
        bytes_per_parameter=4,
        layers=16,
        activation_bytes_per_sample=28 * 28 * 512 * 4,
        batch_size=32,
        step_compute_time=0.2976,
        max_tp=1,
        max_pp=4,
        typical_iterations=100_000,
        layer_costs=_vgg16_layers(),
    ),
    # Devlin et al., "BERT", NAACL 2019: BERT-base, 110M parameters, 12
    # layers, hidden 768. Boundary activation: sequence 384 x 768 fp32
    # (SQuAD fine-tuning, as in Pollux). Compute: Pollux bert, batch 4:
    # 0.4553 - 0.0137 s. A few thousand fine-tuning steps.
    ModelProfile(
        name="bert_base",
        parameters=110_000_000,
        bytes_per_parameter=4,
        layers=12,
        activation_bytes_per_sample=384 * 768 * 4,
        batch_size=4,
        step_compute_time=0.4416,
        max_tp=2,
        max_pp=4,
        typical_iterations=10_000,
    ),
    # Radford et al., "Language Models are Unsupervised Multitask
    # Learners", 2019: GPT-2 1.5B parameters, 48 layers, d_model 1600,
    # context 1024; fp16 mixed precision. Compute (estimate): 6 * 1.5e9 *
    # 1024 tokens * 8 sequences at 25 TFLOP/s sustained (V100 class).
    ModelProfile(
        name="gpt2_xl",
        parameters=1_542_000_000,
        bytes_per_parameter=2,
        layers=48,
        activation_bytes_per_sample=1024 * 1600 * 2,
        batch_size=8,
        step_compute_time=3.032,
        max_tp=4,
        max_pp=8,
        typical_iterations=100_000,
    ),
    # Shoeybi et al., "Megatron-LM", 2019: 8.3B parameters, 72 layers,
    # hidden 3072, sequence 1024, 8-way tensor parallelism, fp16. Compute
    # (estimate): 6 * 8.3e9 * 1024 * 8 at 25 TFLOP/s; 300k iterations.
    ModelProfile(
        name="megatron_8b",
        parameters=8_300_000_000,
        bytes_per_parameter=2,
        layers=72,
        activation_bytes_per_sample=1024 * 3072 * 2,
        batch_size=8,
        step_compute_time=16.32,
        max_tp=8,
        max_pp=8,
        typical_iterations=300_000,
    ),
    # Amodei et al., "Deep Speech 2", ICML 2016, in the deepspeech.pytorch
    # configuration Pollux trains (2 conv + 5 bidirectional LSTM layers of
    # 1024): about 86M parameters counted from those layer sizes. Boundary
    # activation (estimate): 150 frames x 1024 fp32. Compute: Pollux
    # deepspeech2, batch 10: 0.4664 - 0.0015 s.
    ModelProfile(
        name="deepspeech2",
        parameters=86_000_000,
        bytes_per_parameter=4,
        layers=7,
        activation_bytes_per_sample=150 * 1024 * 4,
        batch_size=10,
        step_compute_time=0.4649,
        max_tp=1,
        max_pp=2,
        typical_iterations=20_000,
    ),
    # Redmon and Farhadi, "YOLOv3", 2018: Darknet-53 backbone, 106 layers,
    # about 62M parameters. Boundary activation: 52x52x256 fp32 at 416x416
    # input. Compute: Pollux yolov3, batch 4: 0.2669 - 0.0025 s.
    ModelProfile(
        name="yolov3",
        parameters=61_949_149,
        bytes_per_parameter=4,
        layers=106,
        activation_bytes_per_sample=52 * 52 * 256 * 4,
        batch_size=4,
        step_compute_time=0.2644,
        max_tp=1,
        max_pp=4,
        typical_iterations=50_000,
    ),
    # He et al. 2016, ResNet-18 in its CIFAR-10 form: about 11.2M
    # parameters. Boundary activation: 16x16x128 fp32. Compute: Pollux
    # cifar10, batch 32: 0.0428 - 0.0005 s.
    ModelProfile(
        name="resnet18_cifar10",
        parameters=11_173_962,
        bytes_per_parameter=4,
        layers=18,
        activation_bytes_per_sample=16 * 16 * 128 * 4,
        batch_size=32,
        step_compute_time=0.0423,
        max_tp=1,
        max_pp=2,
        typical_iterations=20_000,
    ),
)

DRAWN_MODELS = tuple(sorted(profile.name for profile in _PROFILES))
"""The models generators and trace loaders draw from (the eight above). The
profiles below exist so that trace rows naming them get a faithful job; they
are not drawn, so seeded instances stay what they were."""

_TRACE_PROFILES = (
    # Radford et al., "Language Models are Unsupervised Multitask Learners",
    # 2019: the smallest GPT-2, 124M parameters, 12 layers, hidden 768,
    # context 1024, fp16. Compute (estimate): 6 * 124e6 * 1024 * 8 at the
    # same 25 TFLOP/s as gpt2_xl. Data parallel only, as it is trained.
    ModelProfile(
        name="gpt2",
        parameters=124_000_000,
        bytes_per_parameter=2,
        layers=12,
        activation_bytes_per_sample=1024 * 768 * 2,
        batch_size=8,
        step_compute_time=0.2438,
        max_tp=1,
        max_pp=4,
        typical_iterations=100_000,
    ),
    # Mnih et al., "Human-level control through deep reinforcement
    # learning", Nature 2015 (DQN) and "Asynchronous Methods for Deep
    # Reinforcement Learning", ICML 2016 (A3C/A2C) share one network: three
    # conv layers and a 512-unit layer on 84x84x4 frames, about 1.7M
    # parameters. Boundary activation: 7x7x64 fp32. Compute (estimate): the
    # network is tiny; a step is dominated by environment simulation, taken
    # as 5 ms. Named in the Muri job lists (dqn, a2c) and Gavel (A3C).
    ModelProfile(
        name="rl_atari",
        parameters=1_686_180,
        bytes_per_parameter=4,
        layers=5,
        activation_bytes_per_sample=7 * 7 * 64 * 4,
        batch_size=32,
        step_compute_time=0.005,
        max_tp=1,
        max_pp=1,
        typical_iterations=1_000_000,
    ),
)

ZOO = MappingProxyType({profile.name: profile for profile in (*_PROFILES, *_TRACE_PROFILES)})
"""Zoo key to :class:`ModelProfile`."""

MEASURED_TYPES = ("k80", "p100", "v100")
"""GPU types with measured compute times (Gavel's throughputs)."""

GAVEL_SLOWDOWN = MappingProxyType(
    {
        ("ResNet-50", 16): (4.9537, 1.2588, 1.0),
        ("ResNet-18", 32): (4.1733, 0.8359, 1.0),
        ("A3C", None): (2.0867, 1.2630, 1.0),
        ("Transformer", 16): (2.0237, 1.1601, 1.0),
        ("LM", 10): (3.4315, 1.0592, 1.0),
    }
)
"""Seconds per iteration on K80, P100 and V100 relative to V100, one GPU:
``steps_per_second(v100) / steps_per_second(type)`` at ``scale_factor`` 1 in
the shipped ``profiles/gavel_throughputs.csv`` (Narayanan et al.,
*Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning
Workloads*, OSDI 2020; stanford-futuredata/gavel, MIT), rounded to four
places; ``tests/core/test_zoo.py`` recomputes them from the file. Keys:
Gavel's model and batch size. (ResNet-18 runs faster on Gavel's P100 than
on its V100: the data say so.)"""

GAVEL_MATCH = MappingProxyType(
    {
        "resnet50": (("ResNet-50", 16), True),
        "resnet18_cifar10": (("ResNet-18", 32), True),
        "rl_atari": (("A3C", None), True),
        "vgg16": (("ResNet-50", 16), False),
        "yolov3": (("ResNet-50", 16), False),
        "bert_base": (("Transformer", 16), False),
        "gpt2": (("Transformer", 16), False),
        "gpt2_xl": (("Transformer", 16), False),
        "megatron_8b": (("Transformer", 16), False),
        "deepspeech2": (("LM", 10), False),
    }
)
"""Per zoo model, the Gavel workload whose slowdowns it takes and whether
that is the same model (True) or only its family's proxy (False) *(choice)*:
convolutional networks take ResNet-50's, transformers the translation
Transformer's, the recurrent DeepSpeech 2 the LSTM language model's."""


def type_compute_times(
    name: str, compute_time: float, extra: Mapping[str, float] | None = None
) -> dict[str, float]:
    """``c_i(type)`` for zoo model ``name`` whose V100 time is ``compute_time``.

    The zoo's times are taken as V100 times *(choice: the Pollux measurements
    behind them are on T4s, between P100 and V100)*; K80 and P100 follow
    :data:`GAVEL_SLOWDOWN` through :data:`GAVEL_MATCH`. ``extra`` gives other
    types (a user's own names) one slowdown for every model.
    """
    key, _ = GAVEL_MATCH[name]
    times = {
        t: compute_time * factor
        for t, factor in zip(MEASURED_TYPES, GAVEL_SLOWDOWN[key], strict=True)
    }
    times.update({t: compute_time * factor for t, factor in (extra or {}).items()})
    return times


def get_profile(name: str) -> ModelProfile:
    """The profile called ``name``.

    Raises
    ------
    ValueError
        If the zoo has no such model (the message lists those it has).
    """
    try:
        return ZOO[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; the zoo has {', '.join(sorted(ZOO))}") from None

"""Arithmetic -> vision (issue 48): a GPT-2's arithmetic subnetwork put into a ViT for the world.

The ViT's blocks have the GPT-2's shapes (`vit_spec`), so each of the four weight matrices of a GPT-2 layer
has a ViT matrix of the same size to go into (`MATRIX_MAP`); the patch embedding, positions, norms, biases and
head are the ViT's own. `cross_domain_base` makes a ViT that holds the GPT-2's matrices, and the subnetwork's
masks under the ViT's names, so `method.transfer.TransferPlan.build` transfers it as it transfers any vision
base (inherit_unmasked False): `subnetwork` freezes the subnetwork's GPT-2 weights in place, `sampled` a
count-matched random draw of the GPT-2's weights, and `sampled` with a second fresh ViT as the base the same
count of fresh random weights.

Layout. Hugging Face's Conv1D stores its weight (in, out) and computes x @ W; nn.Linear stores (out, in) and
computes x @ W.T: every matrix goes in transposed, and nothing needs reordering beyond that.
- qkv: GPT2Attention splits the c_attn output into [q | k | v], n_embd each (`.split(split_size, dim=2)`),
  and views each as (heads, head_dim) (`.view(..., -1, head_dim)`); timm's Attention (1.0.31) reshapes its
  qkv output as (3, num_heads, head_dim) (`.reshape(B, N, 3, num_heads, head_dim)`). In both, output unit
  s * n_embd + h * head_dim + d is part s (q, k, v) of head h, dimension d.
- proj: both merge the heads head-major (unit h * head_dim + d) before the output projection.
- fc1 / fc2: the hidden units correspond one to one; `vit_spec` gives the ViT GPT-2's activation (gelu_new is
  the tanh approximation, timm's gelu_tanh), so a copied MLP computes the function it computed in the GPT-2.
The ViT attends over all its tokens, the GPT-2 causally: the copied attention forms the same q, k and v, and
mixes them over the whole image.
"""

from __future__ import annotations

import copy
import re

import torch
from torch import nn

# GPT-2 (GPT2LMHeadModel, as arithmetic.model builds it and arithmetic discovery names its masks) -> timm ViT,
# per layer i. The vision Classifier holds the timm network as `.net` (CLASSIFIER_PREFIX).
MATRIX_MAP = {
    "transformer.h.{i}.attn.c_attn.weight": "blocks.{i}.attn.qkv.weight",
    "transformer.h.{i}.attn.c_proj.weight": "blocks.{i}.attn.proj.weight",
    "transformer.h.{i}.mlp.c_fc.weight": "blocks.{i}.mlp.fc1.weight",
    "transformer.h.{i}.mlp.c_proj.weight": "blocks.{i}.mlp.fc2.weight",
}
CLASSIFIER_PREFIX = "net."
# GPT-2's activation_function -> timm's act_layer name
ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}


def vit_spec(gpt2_config, image_size: int, num_outputs: int) -> dict:
    """The spec (vision.models.build_classifier) of a world ViT whose blocks are the GPT-2's: its width, heads,
    MLP width, layer count, activation and a qkv bias (GPT-2's c_attn has one); 4 px patches of `image_size`."""
    width, heads = gpt2_config.n_embd, gpt2_config.n_head
    inner = gpt2_config.n_inner or 4 * width
    if width % heads:
        raise ValueError(f"GPT-2 n_embd {width} is not divisible by n_head {heads}")
    if int(width * (inner / width)) != inner:  # timm sizes the MLP as int(dim * mlp_ratio)
        raise ValueError(f"a ViT of width {width} cannot have GPT-2's MLP width {inner} (mlp_ratio rounds)")
    activation = getattr(gpt2_config, "activation_function", "gelu_new")
    if activation not in ACTIVATIONS:
        raise ValueError(f"GPT-2 activation '{activation}' has no timm counterpart here; known: {sorted(ACTIVATIONS)}")
    return {"arch": "vit_world_patch4", "num_outputs": num_outputs,
            "model_kwargs": {"img_size": image_size, "embed_dim": width, "depth": gpt2_config.n_layer,
                             "num_heads": heads, "mlp_ratio": inner / width, "qkv_bias": True,
                             "act_layer": ACTIVATIONS[activation]}}


def matrix_names(layers: int) -> dict[str, str]:
    """Every mapped GPT-2 weight name -> the vision Classifier's name for it, layers 0 .. layers - 1."""
    return {gpt2.format(i=i): CLASSIFIER_PREFIX + vit.format(i=i)
            for i in range(layers) for gpt2, vit in MATRIX_MAP.items()}


def cross_domain_base(gpt2_state_dict: dict[str, torch.Tensor], gpt2_masks: dict[str, torch.Tensor],
                      vit_classifier: nn.Module) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """(a copy of the fresh ViT classifier `vit_classifier` with the GPT-2's four matrices of every layer in
    its block matrices, transposed; the GPT-2's masks under the ViT's names, transposed, bool): the base and
    masks TransferPlan.build takes, beside a fresh ViT of the same spec. Tensors outside the map keep the
    copied ViT's values (inherit_unmasked False leaves the trained model its own)."""
    depth = len(vit_classifier.net.blocks)
    layers = {int(match.group(1)) for key in gpt2_state_dict if (match := re.match(r"transformer\.h\.(\d+)\.", key))}
    if layers != set(range(depth)):
        raise ValueError(f"the GPT-2 has layers {sorted(layers)}, the ViT {depth} blocks: they must match")
    names = matrix_names(depth)
    base = copy.deepcopy(vit_classifier)
    with torch.no_grad():
        for gpt2_name, vit_name in names.items():
            if gpt2_name not in gpt2_state_dict:
                raise ValueError(f"the GPT-2 state has no '{gpt2_name}' (for the ViT's '{vit_name}')")
            weight, target = gpt2_state_dict[gpt2_name], base.get_parameter(vit_name)
            if weight.ndim != 2 or weight.t().shape != target.shape:
                raise ValueError(f"GPT-2 '{gpt2_name}' {tuple(weight.shape)} does not fit ViT '{vit_name}' "
                                 f"{tuple(target.shape)} transposed")
            target.copy_(weight.t())
    masks = {}
    for gpt2_name, mask in gpt2_masks.items():
        if gpt2_name not in names:
            raise ValueError(f"mask for '{gpt2_name}', which has no ViT matrix; mapped: {sorted(MATRIX_MAP)}")
        if mask.shape != gpt2_state_dict[gpt2_name].shape:
            raise ValueError(f"mask for '{gpt2_name}' has shape {tuple(mask.shape)}, the weight "
                             f"{tuple(gpt2_state_dict[gpt2_name].shape)}")
        masks[names[gpt2_name]] = mask.bool().t().contiguous()
    return base, masks

"""Mean-pooled images: split an image into segments and paint each segment its mean colour.

The paper removes texture while keeping shape by running SAM's automatic mask generator (16x16 point
grid, one crop layer), dropping masks under 100 px, building a non-overlapping cover (larger masks first,
smaller ones on top, uncovered pixels as one more segment) and filling every segment with its mean colour.
`ColourRegionSegmenter` is a weights-free stand-in with the same record format, for tests and for
generated worlds of textured shapes on a plain background.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from scipy import ndimage
from scipy.optimize import nnls


def non_overlapping_cover(records: list[dict], shape: tuple[int, int], min_area: int = 100) -> np.ndarray:
    """int32 segment map (ids 0..K-1 in order of first paint, uncovered pixels last) from SAM-style records.

    Records with record['area'] < min_area are dropped (the record's own area, as SAM reports it). The rest
    are painted largest first (ties keep input order), so smaller masks overwrite the larger ones they sit in.
    """
    shape = tuple(int(n) for n in shape)
    masks, areas = [], []
    for i, record in enumerate(records):
        mask = np.asarray(record["segmentation"])
        if mask.shape != shape:
            raise ValueError(f"record {i}: segmentation has shape {mask.shape}, expected {shape} "
                             "(SAM must run with output_mode='binary_mask')")
        if record["area"] >= min_area:
            masks.append(mask.astype(bool, copy=False))
            areas.append(record["area"])
    order = sorted(range(len(masks)), key=lambda i: -areas[i])  # sorted() is stable: ties keep input order
    painted = np.full(shape, len(masks), dtype=np.int64)  # len(masks) marks "no mask": sorts after every paint
    for paint_index, i in enumerate(order):
        painted[masks[i]] = paint_index
    # A mask can be fully overwritten by smaller ones; renumbering the surviving ids keeps them consecutive.
    _, segments = np.unique(painted, return_inverse=True)
    return segments.reshape(shape).astype(np.int32)


def mean_pool(image: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Each segment filled with the mean colour of its pixels, per channel: np.round (half to even) of the float64
    mean, as uint8. Accepts HxWxC or HxW images; segment ids may be any integers."""
    image = np.asarray(image)
    segments = np.asarray(segments)
    if segments.shape != image.shape[:2] or image.ndim not in (2, 3):
        raise ValueError(f"segments shape {segments.shape} does not match image shape {image.shape}")
    pixels = image.reshape(segments.size, -1).astype(np.float64)
    _, ids = np.unique(segments.ravel(), return_inverse=True)
    counts = np.bincount(ids)
    # sum/count is correctly rounded and an exact .5 is representable, so ties are detected exactly.
    means = np.stack([np.bincount(ids, weights=pixels[:, c]) / counts for c in range(pixels.shape[1])], axis=1)
    pooled = np.clip(np.round(means), 0, 255).astype(np.uint8)[ids]
    return pooled.reshape(image.shape)


def build_tiny_sam(checkpoint=None, embed_dim: int = 32):
    """A SAM small enough for a CPU (64 px input, an 8x8 embedding, one block): model_type `tiny`, for a
    dry trial of the SAM path without the 2.4 GB checkpoint (steps/tiny_sam.py writes one with random
    weights). Its masks mean nothing; the plumbing around them is the real one."""
    from functools import partial

    from segment_anything.modeling import ImageEncoderViT, MaskDecoder, PromptEncoder, Sam, TwoWayTransformer

    if checkpoint is not None:
        raise ValueError("build_tiny_sam takes no checkpoint: SamSegmenter loads it (weights_only)")
    return Sam(
        image_encoder=ImageEncoderViT(img_size=64, patch_size=8, embed_dim=embed_dim, depth=1, num_heads=2, mlp_ratio=2.0,
                                      out_chans=16, qkv_bias=True, norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
                                      use_rel_pos=False, window_size=0, global_attn_indexes=()),
        prompt_encoder=PromptEncoder(embed_dim=16, image_embedding_size=(8, 8), input_image_size=(64, 64),
                                     mask_in_chans=4),
        mask_decoder=MaskDecoder(transformer_dim=16, num_multimask_outputs=3, iou_head_depth=1, iou_head_hidden_dim=16,
                                 transformer=TwoWayTransformer(depth=1, embedding_dim=16, mlp_dim=32, num_heads=2)),
        pixel_mean=[123.675, 116.28, 103.53], pixel_std=[58.395, 57.12, 57.375],
    ).eval()


def _sam_registry() -> dict:
    # Imported lazily: segment_anything pulls in torchvision, which the weights-free path does not need.
    from segment_anything import sam_model_registry

    return {**sam_model_registry, "tiny": build_tiny_sam}


class SamSegmenter:
    """Automatic masks from a Segment Anything model (segment_anything.SamAutomaticMaskGenerator)."""

    def __init__(self, model_type: str, checkpoint: str | Path, device="cpu", points_per_side=16,
                 crop_n_layers=1, points_per_batch=64, **generator_options):
        registry = _sam_registry()
        if model_type not in registry:
            raise ValueError(f"unknown SAM model_type {model_type!r}; valid types: {sorted(registry)}")
        checkpoint = Path(checkpoint)
        if not checkpoint.is_file():
            raise FileNotFoundError(f"SAM checkpoint not found: {checkpoint}")
        # Built without weights, then loaded here: the registry's own loader uses a full-pickle torch.load.
        sam = registry[model_type](checkpoint=None)
        try:
            state_dict = torch.load(checkpoint, map_location=device, weights_only=True)
        except Exception as error:
            raise ValueError(f"cannot read SAM checkpoint {checkpoint}: {error}") from error
        if not isinstance(state_dict, dict):
            raise ValueError(f"SAM checkpoint {checkpoint} holds a {type(state_dict).__name__}, not a state dict")
        try:
            sam.load_state_dict(state_dict)
        except RuntimeError as error:
            raise ValueError(f"SAM checkpoint {checkpoint} does not fit model_type {model_type!r}: {error}") from error
        self._setup(sam.to(device), points_per_side, crop_n_layers, points_per_batch, generator_options)

    @classmethod
    def from_model(cls, sam, points_per_side=16, crop_n_layers=1, points_per_batch=64, **generator_options):
        """Wrap an already built segment_anything.modeling.Sam; it stays on its own device."""
        self = cls.__new__(cls)
        self._setup(sam, points_per_side, crop_n_layers, points_per_batch, generator_options)
        return self

    def _setup(self, sam, points_per_side, crop_n_layers, points_per_batch, generator_options):
        from segment_anything import SamAutomaticMaskGenerator

        # Records must carry dense masks for the cover, and SAM's own small-region clean-up needs OpenCV;
        # small masks are dropped later by their 'area' instead.
        if generator_options.get("output_mode", "binary_mask") != "binary_mask":
            raise ValueError("SamSegmenter needs output_mode='binary_mask'")
        if generator_options.get("min_mask_region_area", 0) != 0:
            raise ValueError("SamSegmenter needs min_mask_region_area=0 (drop small masks with min_area instead)")
        self.sam = sam.eval()
        self.generator = SamAutomaticMaskGenerator(
            sam, points_per_side=points_per_side, crop_n_layers=crop_n_layers,
            points_per_batch=points_per_batch, **generator_options)
        self.without_crops = None if crop_n_layers == 0 else SamAutomaticMaskGenerator(
            sam, points_per_side=points_per_side, crop_n_layers=0, points_per_batch=points_per_batch, **generator_options)
        self.last_fallback = None  # how the last image was segmented when SAM found no mask: "no crops" | "whole image"

    def __call__(self, image: np.ndarray) -> list[dict]:
        """SAM's masks of `image`. Where SAM finds no mask in any crop, segment_anything raises IndexError
        (upstream issues 614, 703): the image is then segmented without crops, and if that finds nothing
        either it is pooled as one region (no records); `last_fallback` says which, for the pooling manifest."""
        image = np.asarray(image)
        if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
            raise ValueError(f"SAM needs a uint8 HxWx3 image, got {image.dtype} {image.shape}")
        self.last_fallback = None
        try:
            records = self.generator.generate(image)
        except IndexError:  # no mask in any crop: the upstream bug, not a bad image
            records = []
        if not records and self.without_crops is not None:
            self.last_fallback = "no crops"
            try:
                records = self.without_crops.generate(image)
            except IndexError:
                records = []
        if not records:
            self.last_fallback = "whole image"
        return records


class ColourRegionSegmenter:
    """Weights-free segmenter: blur away fine texture, k-means the colours, split clusters into 4-connected regions.

    The Gaussian blur (sigma = blur_radius px) flattens textures whose period is up to about 2*blur_radius.
    It also leaves a ramp of in-between colours along every edge, which k-means may give clusters of their
    own, splitting a silhouette into concentric bands. So a component that no (2r+1)x(2r+1) window fits
    inside (r = ceil(blur_radius)) and whose cluster colour is a mix of other cluster colours is a blur band:
    its pixels move to the nearest colour among the clusters that are not such mixes, which puts each edge
    back near the middle of its ramp. Thin regions of a colour of their own (a thin ring, say) stay.
    """

    def __init__(self, clusters=4, blur_radius=2, iterations=10, seed=0):
        if clusters < 1 or blur_radius < 0 or iterations < 0:
            raise ValueError("need clusters >= 1, blur_radius >= 0 and iterations >= 0")
        self.clusters, self.blur_radius, self.iterations, self.seed = clusters, blur_radius, iterations, seed

    def __call__(self, image: np.ndarray) -> list[dict]:
        image = np.asarray(image, dtype=np.float64)
        if image.ndim == 2:
            image = image[..., None]
        sigma = (self.blur_radius, self.blur_radius, 0)
        smooth = ndimage.gaussian_filter(image, sigma=sigma, mode="nearest") if self.blur_radius else image
        colours = smooth.reshape(-1, smooth.shape[2])
        centres = self._kmeans(colours)
        distances = _squared_distances(colours, centres).reshape(*image.shape[:2], len(centres))
        labels = distances.argmin(axis=2)
        components, owner = _components(labels, len(centres))
        r = int(np.ceil(self.blur_radius))
        if r > 0:
            window = (2 * r + 1, 2 * r + 1)
            core = ndimage.maximum_filter(components, window, mode="nearest") == ndimage.minimum_filter(
                components, window, mode="nearest")
            thick = np.zeros(len(owner), dtype=bool)
            thick[components[core]] = True
            pure = ~_blends(centres)
            # A thin pixel of a non-mix cluster is already nearest its own colour, so only blend bands move.
            moved = ~thick[components] & pure.any()
            if moved.any():
                labels = np.where(moved, np.where(pure, distances, np.inf).argmin(axis=2), labels)
                components, owner = _components(labels, len(centres))
        counts = np.bincount(components.ravel(), minlength=len(owner))
        return [{"segmentation": components == i, "area": int(counts[i])} for i in range(len(owner)) if counts[i]]

    def _kmeans(self, colours: np.ndarray) -> np.ndarray:
        """Seeded k-means++ start, then Lloyd iterations; fewer centres when the image has fewer distinct colours."""
        rng = np.random.default_rng(self.seed)
        centres = colours[[rng.integers(len(colours))]]
        while len(centres) < self.clusters:
            nearest = _squared_distances(colours, centres).min(axis=1)
            if nearest.sum() <= 0:
                break
            centres = np.vstack([centres, colours[rng.choice(len(colours), p=nearest / nearest.sum())]])
        for _ in range(self.iterations):
            labels = _squared_distances(colours, centres).argmin(axis=1)
            counts = np.bincount(labels, minlength=len(centres))
            sums = np.stack([np.bincount(labels, weights=colours[:, c], minlength=len(centres))
                             for c in range(colours.shape[1])], axis=1)
            filled = counts > 0  # an emptied cluster keeps its old centre
            centres[filled] = sums[filled] / counts[filled, None]
        return centres


def _blends(centres: np.ndarray, tolerance: float = 0.5) -> np.ndarray:
    """Which centres are nearly a convex mix of the other centres, as the colours along a blurred edge are.

    "Nearly": the distance to the others' convex hull is at most `tolerance` times the distance to the nearest
    other centre, so two almost equal centres do not make each other blends.
    """
    k = len(centres)
    blend = np.zeros(k, dtype=bool)
    for j in range(k if k > 1 else 0):
        others = np.delete(centres, j, axis=0)
        gap = np.sqrt(((others - centres[j]) ** 2).sum(axis=1)).min()
        # Mixing weights >= 0 by NNLS; a heavily weighted extra row makes them sum to 1.
        heavy = 1e3 * (1 + np.abs(centres).max())
        weights, _ = nnls(np.vstack([others.T, np.full(k - 1, heavy)]), np.append(centres[j], heavy))
        blend[j] = np.linalg.norm(others.T @ weights - centres[j]) < tolerance * gap
    return blend


def _squared_distances(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)


def _components(labels: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """0-based 4-connected component ids of each cluster, and the cluster owning each component."""
    components = np.zeros(labels.shape, dtype=np.int64)
    owner, offset = [], 0
    for cluster in range(n_clusters):
        found, n = ndimage.label(labels == cluster)  # default structure: 4-connectivity
        components[found > 0] = found[found > 0] - 1 + offset
        owner += [cluster] * n
        offset += n
    return components, np.array(owner, dtype=np.int64)


SEGMENTER_KINDS = ("sam", "colour_regions")


def make_segmenter(settings: dict, device="cpu", seed: int = 0):
    """A segmenter from config: {"kind": "sam", "model_type", "checkpoint", ...SamSegmenter options} or
    {"kind": "colour_regions", ...ColourRegionSegmenter options}. `seed` seeds the colour-region k-means
    (SAM's automatic masks are deterministic)."""
    options = dict(settings)
    kind = options.pop("kind", None)
    if kind == "sam":
        missing = [key for key in ("model_type", "checkpoint") if key not in options]
        if missing:
            raise ValueError(f"segmenter settings of kind 'sam' need {missing}")
        return SamSegmenter(device=device, **options)
    if kind == "colour_regions":
        try:
            return ColourRegionSegmenter(**{"seed": seed, **options})
        except TypeError as error:
            raise ValueError(f"bad colour_regions segmenter settings {sorted(options)}: {error}") from error
    raise ValueError(f"segmenter setting 'kind' is {kind!r}; valid choices: {list(SEGMENTER_KINDS)}")


def pool_image(image: np.ndarray, segmenter, min_area: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """(mean-pooled uint8 image, int32 segment map) for a uint8 HxWx3 (or HxW grey) image."""
    image = np.asarray(image)
    # Segmenters take colour images; a grey image is segmented as three equal channels and pooled as grey.
    rgb = np.repeat(image[..., None], 3, axis=2) if image.ndim == 2 else image
    segments = non_overlapping_cover(segmenter(rgb), image.shape[:2], min_area)
    return mean_pool(image, segments), segments

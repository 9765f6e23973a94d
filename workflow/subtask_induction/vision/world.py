"""A generated shape/texture world: the vision family's embedded default, with ImageNet-16's file layout.

Sixteen shape classes named after Geirhos' 16 categories (class "airplane" is a disc, "bear" a square,
...), each drawn filled with one of 16 textures (a fine two-colour pattern) on a plain background of a
random colour. Texture k is the "own" texture of class k. In the natural splits an image's texture is its
class's own texture with probability `texture_match`, otherwise another one: texture is an easy but
imperfect cue, shape a harder perfect one, so a network trained on them learns a texture bias. The two
colours of a texture are complementary, so their mean is mid-grey: mean-pooling removes the texture and
keeps the silhouette, as it does for real objects.

Writes class folders of PNGs (`<split>/<category>/<category>_<k>.png`) and a cue-conflict folder in the
Geirhos layout (`cue_conflict/<shape>/<shape><i>-<texture><j>.png`, same-class images included).

Texture swap (shape bias by augmentation, as Stylized-ImageNet): `generate_texture_swap` re-renders every
image of a natural split with the same shape, pose, background and noise, filled with a texture of a pool
that no class (hence no cue-conflict stimulus) uses: labels follow the shape, and no image pairs a shape
with another class's texture.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
from PIL import Image

from .classes import CATEGORIES

NATURAL_SPLITS = ("pretrain", "discovery", "train", "eval", "test")


def _rotated_grid(size: int, rng: np.random.Generator, max_rotation_deg: float,
                  min_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Pixel centres in the shape's own frame: [-1, 1] spans up to 85% of the image, placed at random."""
    relative_scale = rng.uniform(min_scale, 1.0)
    scale = relative_scale * 0.85 * size / 2
    shift = rng.uniform(-0.5, 0.5, size=2) * (1.0 - relative_scale * 0.85) * size
    angle = np.deg2rad(rng.uniform(-max_rotation_deg, max_rotation_deg))
    coords = np.arange(size) + 0.5 - size / 2
    y, x = np.meshgrid(coords - shift[1], coords - shift[0], indexing="ij")
    c, s = np.cos(angle), np.sin(angle)
    return (c * x + s * y) / scale, (-s * x + c * y) / scale


def _box(x, y, x0, x1, y0, y1):
    return (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)


def _silhouette(index: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The 16 shapes, y pointing down. Chosen to stay distinct under small rotations and blur."""
    r, theta = np.hypot(x, y), np.arctan2(y, x)
    shapes = [
        lambda: r < 0.8,                                                              # disc
        lambda: _box(x, y, -0.7, 0.7, -0.7, 0.7),                                     # square
        lambda: (y < 0.7) & (np.abs(x) < 0.55 * (y + 0.9)),                           # triangle
        lambda: _box(x, y, -0.25, 0.25, -0.9, 0.9) | _box(x, y, -0.9, 0.9, -0.25, 0.25),  # plus
        lambda: (r > 0.5) & (r < 0.9),                                                # ring
        lambda: r < 0.35 + 0.6 * ((1 + np.cos(5 * theta + np.pi / 2)) / 2) ** 2,     # star
        lambda: np.abs(x) + np.abs(y) < 0.9,                                          # diamond
        lambda: _box(x, y, -0.9, -0.4, -0.9, 0.9) | _box(x, y, -0.9, 0.8, 0.4, 0.9),  # L
        lambda: _box(x, y, -0.9, 0.9, -0.9, -0.45) | _box(x, y, -0.22, 0.22, -0.9, 0.9),  # T
        lambda: (r < 0.85) & (np.hypot(x - 0.45, y) > 0.6),                           # crescent
        lambda: _box(x, y, -0.9, -0.5, -0.9, 0.9) | _box(x, y, 0.5, 0.9, -0.9, 0.9) | _box(x, y, -0.9, 0.9, -0.2, 0.2),  # H
        lambda: (x / 0.95) ** 2 + (y / 0.4) ** 2 < 1,                                 # flat ellipse
        lambda: _box(x, y, -0.9, 0.1, -0.22, 0.22) | ((x > 0.1) & (x < 0.9) & (np.abs(y) < 0.75 * (0.9 - x))),  # arrow
        lambda: _box(x, y, -0.8, 0.8, -0.8, 0.8) & ~_box(x, y, -0.35, 0.35, -0.9, 0.35),  # U
        lambda: (r < 0.9) & (y > 0.0) | _box(x, y, -0.9, 0.9, -0.15, 0.0),           # half disc
        lambda: _box(x, y, -0.9, 0.9, -0.9, -0.5) | _box(x, y, -0.9, 0.9, 0.5, 0.9) | _box(x, y, -0.2, 0.2, -0.9, 0.9),  # I-beam
    ]
    return shapes[index]()


# The 16 textures as 4x4 tiles ('#' = first colour). Each covers half the tile, so a texture's mean
# colour is mid-grey, and no two are equal up to a shift (phase) or a swap of colours (tested).
TEXTURE_TILES = (
    ("####", "....", "####", "...."),   # horizontal stripes, 1 px
    ("#.#.", "#.#.", "#.#.", "#.#."),   # vertical stripes, 1 px
    ("#.#.", ".#.#", "#.#.", ".#.#"),   # checkerboard, 1 px
    ("####", "####", "....", "...."),   # horizontal stripes, 2 px
    ("##..", "##..", "##..", "##.."),   # vertical stripes, 2 px
    ("##..", "##..", "..##", "..##"),   # checkerboard, 2 px
    ("##..", ".##.", "..##", "#..#"),   # diagonal stripes
    ("##..", "#..#", "..##", ".##."),   # anti-diagonal stripes
    ("##..", "..##", "##..", "..##"),   # staggered dashes
    ("#.#.", "#.#.", ".#.#", ".#.#"),   # staggered dots
    ("..##", ".##.", "..##", ".##."),   # zigzag
    ("....", ".#.#", "####", "#.#."),   # fringe
    ("####", "##..", "....", "..##"),   # bricks
    ("####", "##..", "##..", "...."),   # L blocks
    ("###.", "#...", "...#", ".###"),   # corners
    ("#.#.", "####", "#.#.", "...."),   # comb
)
# The texture-swap pool: 8 more tiles, half covered, distinct from every class texture and from each other up
# to phase and inversion (tested), drawn in hues between the classes' (texture_colours).
POOL_TILES = (
    ("###.", "#...", "#...", "###."),   # brackets
    ("#...", "##..", "###.", "##.."),   # sawtooth
    ("###.", "##..", "..##", "#..."),   # steps
    ("#.#.", "#.#.", "##..", "##.."),   # stripes over blocks
    ("####", "..#.", "###.", "...."),   # weave
    ("##.#", "#...", ".#..", "###."),   # scatter
    (".###", "###.", "#.#.", "...."),   # herringbone
    (".#..", "###.", ".#..", "#.##"),   # crosses
)
# Texture indices: 0-15 are the classes' own (texture k of class k), 16-23 the pool no class uses.
POOL = tuple(range(len(TEXTURE_TILES), len(TEXTURE_TILES) + len(POOL_TILES)))


def texture_pattern(index: int, size: int, phase: tuple[int, int] = (0, 0), scale: int = 1) -> np.ndarray:
    """Boolean size x size pattern of texture `index` (a pool texture from 16 on), shifted by `phase` (px),
    each tile cell scale px."""
    tile = np.array([[cell == "#" for cell in row] for row in (TEXTURE_TILES + POOL_TILES)[index]])
    y, x = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    return tile[((y + phase[0]) // scale) % 4, ((x + phase[1]) // scale) % 4]


def _pattern(index: int, size: int, rng: np.random.Generator, scale: int = 1) -> np.ndarray:
    """Texture `index` at a random phase."""
    return texture_pattern(index, size, (int(rng.integers(0, 4 * scale)), int(rng.integers(0, 4 * scale))), scale)


def texture_colours(index: int, contrast: float = 0.45) -> tuple[np.ndarray, np.ndarray]:
    """Complementary colour pair of texture `index`: distinct hues, the same mid-grey mean.

    contrast: each channel's largest distance from mid-grey (0.45 = vivid; small = a faint texture). The
    classes' 16 hues are k/16; a pool texture's lies half-way between two of them."""
    pool = index >= len(TEXTURE_TILES)
    hue = ((index - len(TEXTURE_TILES) if pool else index) * 7 % 16 + 0.5 * pool) / 16
    rgb = 0.5 + contrast * np.cos(2 * np.pi * (hue + np.array([0.0, 1 / 3, 2 / 3])))
    return rgb, 1.0 - rgb


def draw(shape: int, texture: int, size: int, rng: np.random.Generator, max_rotation_deg: float = 45.0,
         min_scale: float = 0.6, texture_scale: int = 1, texture_contrast: float = 0.45) -> np.ndarray:
    """One uint8 HxWx3 image: `shape` filled with `texture` on a plain background of a random colour."""
    x, y = _rotated_grid(size, rng, max_rotation_deg, min_scale)
    inside = _silhouette(shape, x, y)
    first, second = texture_colours(texture, texture_contrast)
    fill = np.where(_pattern(texture, size, rng, texture_scale)[..., None], first, second)
    background = rng.uniform(0.0, 1.0, size=3)
    background = background + (rng.uniform(0.25, 0.5) * np.sign(background - 0.5))   # keep off mid-grey
    image = np.where(inside[..., None], fill, np.clip(background, 0.0, 1.0))
    image = image + rng.normal(0.0, 0.02, size=image.shape)
    return (np.clip(image, 0.0, 1.0) * 255).round().astype(np.uint8)


def _save_png(image: np.ndarray, path) -> None:
    Image.fromarray(image).save(path, format="PNG")


def _texture_match(texture_match: float | dict) -> dict:
    if not isinstance(texture_match, dict):
        texture_match = {split: texture_match for split in NATURAL_SPLITS}
    for split, value in texture_match.items():
        if split not in NATURAL_SPLITS or not 0.0 <= value <= 1.0:
            raise ValueError(f"texture_match[{split!r}] = {value}: splits are {list(NATURAL_SPLITS)}, values in [0, 1]")
    return texture_match


def _natural_draws(split: str, n: int, texture_match: dict, seed: int):
    """(relative path, shape label, texture, rng) of every image of a natural split, in the order they are drawn;
    `draw(label, texture, ..., rng)` renders each. One generator per split: a split does not change when
    another's size does."""
    rng = np.random.default_rng([seed, NATURAL_SPLITS.index(split)])
    for label, category in enumerate(CATEGORIES):
        for k in range(n):
            texture = label
            if rng.random() >= texture_match.get(split, 1.0):
                texture = (label + rng.integers(1, len(CATEGORIES))) % len(CATEGORIES)
            yield f"{category}/{category}_{k:05d}.png", label, int(texture), rng


def generate_world(out, *, image_size: int, per_class: dict, texture_match: float | dict, conflict_per_texture: int,
                   seed: int, max_rotation_deg: float = 45.0, min_scale: float = 0.6,
                   texture_scale: int = 1, texture_contrast: float = 0.45) -> dict:
    """Write every split and the cue-conflict folder under `out`; returns the counts.

    texture_match: one probability for every natural split, or one per split.
    texture_scale: px per cell of the textures' 4x4 tiles (1 = fine 1-2 px patterns).
    texture_contrast: how far a texture's two colours lie from mid-grey (0 < contrast <= 0.5).
    """
    out = Path(out)
    if not (isinstance(texture_scale, int) and texture_scale >= 1):
        raise ValueError(f"texture_scale = {texture_scale!r}: give a whole number of px >= 1")
    if not 0.0 < texture_contrast <= 0.5:
        raise ValueError(f"texture_contrast = {texture_contrast}: give a value in (0, 0.5]")
    unknown = sorted(set(per_class) - set(NATURAL_SPLITS))
    if unknown:
        raise ValueError(f"per_class has unknown splits {unknown}; the world's splits are {list(NATURAL_SPLITS)}")
    texture_match = _texture_match(texture_match)
    counts = {}
    for split in NATURAL_SPLITS:
        for category in CATEGORIES:
            (out / split / category).mkdir(parents=True, exist_ok=True)
        for relative, label, texture, rng in _natural_draws(split, per_class.get(split, 0), texture_match, seed):
            _save_png(draw(label, texture, image_size, rng, max_rotation_deg, min_scale, texture_scale, texture_contrast),
                      out / split / relative)
        counts[split] = per_class.get(split, 0) * len(CATEGORIES)
    rng = np.random.default_rng([seed, len(NATURAL_SPLITS)])
    for shape, shape_name in enumerate(CATEGORIES):
        folder = out / "cue_conflict" / shape_name
        folder.mkdir(parents=True, exist_ok=True)
        for texture, texture_name in enumerate(CATEGORIES):
            for i in range(1, conflict_per_texture + 1):
                image = draw(shape, texture, image_size, rng, max_rotation_deg, min_scale, texture_scale, texture_contrast)
                _save_png(image, folder / f"{shape_name}{i}-{texture_name}{i}.png")
    counts["cue_conflict"] = len(CATEGORIES) ** 2 * conflict_per_texture
    return counts


def generate_texture_swap(out, world, *, split: str, image_size: int, per_class: dict, texture_match: float | dict,
                          seed: int, max_rotation_deg: float = 45.0, min_scale: float = 0.6, texture_scale: int = 1,
                          texture_contrast: float = 0.45, **_other_world_settings) -> dict:
    """Re-render every image of the world's `split` with a pool texture in place of its own: the same shape,
    pose, background and pixel noise (the draw replays the world's generator; each replayed original is checked
    against the file under `world`, so a world made with other settings is refused). Writes
    `out/<split>/<category>/<file>.png`; returns each image's pool texture (index into POOL's tiles) by path."""
    out, world = Path(out), Path(world)
    texture_match = _texture_match(texture_match)
    pool_rng = np.random.default_rng([seed, len(NATURAL_SPLITS) + 1])  # after the cue-conflict folder's stream
    textures = {}
    for category in CATEGORIES:
        (out / split / category).mkdir(parents=True, exist_ok=True)
    for relative, label, texture, rng in _natural_draws(split, per_class.get(split, 0), texture_match, seed):
        twin = copy.deepcopy(rng)   # the same draws from here on: pose, phase, background and noise
        original = draw(label, texture, image_size, rng, max_rotation_deg, min_scale, texture_scale, texture_contrast)
        on_disk = world / split / relative
        if not on_disk.is_file() or not np.array_equal(np.asarray(Image.open(on_disk).convert("RGB")), original):
            raise ValueError(f"{on_disk} is not the image these world settings draw: the texture swap replays the "
                             f"world's generation, so it needs the world made with the same settings")
        pool_texture = POOL[int(pool_rng.integers(len(POOL)))]
        _save_png(draw(label, pool_texture, image_size, twin, max_rotation_deg, min_scale, texture_scale, texture_contrast),
                  out / split / relative)
        textures[f"{split}/{relative}"] = pool_texture - len(TEXTURE_TILES)
    return textures

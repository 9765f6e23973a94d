"""The checks of vision/diagnostics.py: BatchNorm re-estimation, masking a copy, the linear probe."""

import torch
from torch import nn

from subtask_induction.vision.diagnostics import apply_masks, linear_probe_accuracy, reestimate_batchnorm


class Batches:
    """What reestimate_batchnorm reads from an ImageSet: batches(batch_size, seed=, shuffle=), in order here."""

    def __init__(self, images: torch.Tensor):
        self.images = images

    def batches(self, batch_size, *, seed=0, shuffle=False):
        for start in range(0, len(self.images), batch_size):
            yield self.images[start:start + batch_size], torch.zeros(len(self.images[start:start + batch_size]))


def test_batchnorm_statistics_average_the_batches_of_the_first_images_only():
    model = nn.Sequential(nn.BatchNorm2d(2))
    model[0].running_mean.fill_(5.0)
    images = torch.cat([torch.full((4, 2, 3, 3), 1.0), torch.full((4, 2, 3, 3), 100.0)])
    images[:4, 1] = torch.arange(4.0).view(4, 1, 1)  # channel 1: the images hold 0, 1, 2, 3
    out = reestimate_batchnorm(model, Batches(images), max_images=4, batch_size=2, seed=0, device="cpu")
    # two batches: {0, 1} and {2, 3}, 9 pixels each; BatchNorm keeps the unbiased variance per batch
    batch_var = torch.tensor([0.0] * 9 + [1.0] * 9).var()
    assert torch.allclose(out[0].running_mean, torch.tensor([1.0, 1.5]))
    assert torch.allclose(out[0].running_var, torch.stack([torch.tensor(0.0), batch_var]))
    assert not out.training
    assert model[0].running_mean.eq(5.0).all()  # the model given is left as it was


def test_masks_apply_to_a_copy():
    model = nn.Sequential(nn.Linear(3, 2))
    before = model[0].weight.detach().clone()
    mask = torch.tensor([[1, 0, 1], [0, 0, 1]], dtype=torch.bool)
    pruned = apply_masks(model, {"0.weight": mask})
    assert torch.equal(pruned[0].weight, before * mask)
    assert torch.equal(model[0].weight, before) and torch.equal(pruned[0].bias, model[0].bias)


def test_linear_probe_reads_class_information_and_only_that():
    generator = torch.Generator().manual_seed(0)
    centres = torch.randn(4, 8, generator=generator) * 3
    labels = torch.arange(4).repeat(25)
    train = centres[labels] + torch.randn(100, 8, generator=generator)
    test = centres[labels] + torch.randn(100, 8, generator=generator)
    assert linear_probe_accuracy(train, labels, test, labels, classes=4, seed=0) > 0.95
    noise = torch.randn(100, 8, generator=generator)
    assert linear_probe_accuracy(noise, labels, torch.randn(100, 8, generator=generator), labels, classes=4, seed=0) < 0.5
    assert (linear_probe_accuracy(train, labels, test, labels, classes=4, seed=1)
            == linear_probe_accuracy(train, labels, test, labels, classes=4, seed=1))

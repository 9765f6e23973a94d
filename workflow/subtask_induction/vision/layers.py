"""timm arguments that take a layer class, given by name in a config (a config holds no classes; torch-free, so
the config checks read it): name -> the class's name in timm.layers. The anti-aliased downsampling of Zhang 2019
("Making Convolutional Networks Shift-Invariant Again": blur, then subsample) is `aa_layer: blurpool`."""

LAYER_ARGUMENTS = {"aa_layer": {"blurpool": "BlurPool2d"}}

# A transfer variant's `batchnorm` (vision.transfer.variants.*.batchnorm): how the network it trains starts its
# BatchNorm layers, where not as its kind gives them (absent: fresh with timm's initialisation, or the base's with
# inherit_unmasked or kind full). The causes of SI's lost shape (docs/decisions.md, "Why SI loses the shape").
BATCHNORM_STARTS = {
    "unit_scales": "fresh, every scale 1: without timm's zero initialisation of each residual block's last "
                   "BatchNorm scale (which starts SI with its residual branches off)",
    "base_frozen": "the base's statistics and affine weights, frozen, in evaluation mode while the rest trains",
}
# The architectures whose normalisation is BatchNorm by default and whose timm constructor takes zero_init_last
BATCHNORM_ARCHS = ("resnet", "resnext", "wide_resnet", "seresnet")

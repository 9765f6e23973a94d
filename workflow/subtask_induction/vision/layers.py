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
# A transfer variant's `head` (vision.transfer.variants.*.head): where not as its kind gives it (absent: fresh, or the
# base's and trained with inherit_unmasked or kind full). The authors' code's vision transfer (docs/decisions.md, "SI as
# the authors' code ran it") loads the base whole and freezes every weight and bias of it, its classifier's included.
HEAD_STARTS = {"base_frozen": "the base's classifier head, frozen (no gradient)"}
# A transfer variant's `unkept` (masked kinds): the weights under a mask's zeros, where not the fresh network's own init
# trained. The authors' code redraws each masked conv's weight in place, uniform in ±1/√fan_in (fan_in = in_channels
# × kernel size, NeuroSurgeon's _init_subnet_transfer), and, the base frozen, never trains it.
UNKEPT_STARTS = {"authors_frozen": "drawn again uniform in ±1/√fan_in (the authors' code's re-initialisation), frozen"}

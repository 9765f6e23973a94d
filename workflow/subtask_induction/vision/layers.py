"""timm arguments that take a layer class, given by name in a config (a config holds no classes; torch-free, so
the config checks read it): name -> the class's name in timm.layers. The anti-aliased downsampling of Zhang 2019
("Making Convolutional Networks Shift-Invariant Again": blur, then subsample) is `aa_layer: blurpool`."""

LAYER_ARGUMENTS = {"aa_layer": {"blurpool": "BlurPool2d"}}

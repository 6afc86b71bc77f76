"""The ops behind ``gpugrad.nn.functional``: activations, convolution, pooling, padding,
upsampling, pixel shuffle, fold / unfold, grid_sample, normalisation, losses, embeddings."""

"""The `sample` profile's own inputs, built offline: `tiny_clip` (`babelforge eval_tiny_clip`, the tiny random
CLIPs) and `images` (`babelforge eval_images`, image sets drawn with PIL)."""

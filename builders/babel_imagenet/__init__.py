"""Babel-ImageNet: labels from multilingual senses (rules, candidates, reviews) and translated CLIP prompts."""

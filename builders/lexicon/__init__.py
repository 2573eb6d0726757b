"""WordNet 3.0 knowledge and multilingual senses (OMW wordnets, BabelNet)."""

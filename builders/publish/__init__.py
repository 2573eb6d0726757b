"""Dataset cards (Hugging Face layout) and publishing to the Hub."""

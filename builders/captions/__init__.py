"""MT captions: n-best NLLB translation, tagging (langid, script, COMETKiwi, chrF) and selection."""

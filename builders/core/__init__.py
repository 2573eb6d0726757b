"""Plumbing every area shares, knowing no dataset: config, io, languages, provenance, shards, runners, HTTP."""

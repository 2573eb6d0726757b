"""Commands over the whole pipeline rather than one dataset: `fetch` (the sources every stage
reads) and `taggers` (the tagger registry, read from every stage module of the command table)."""

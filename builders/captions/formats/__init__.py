"""The caption set's input formats, one module each: `xtd` (XTD / xFlickrCO JSON), `jsonl`,
`delimited` (CSV / TSV), `parquet` (a file or a folder of them), `table` (any of the three tables as
caption rows) and `img2dataset` (its Parquet output). `babelforge.captions.readers` is the entry
point that picks one; this package imports none of them, so a module that needs one format runs
only that one."""

"""Crossmodal-3600 (XM3600): 3,600 geographically diverse images with human captions in 36 languages,
fetched (`release`, `fetch_stage`), parsed and validated (`captions`, `xm3600_stage`) and carded (`dataset`)."""

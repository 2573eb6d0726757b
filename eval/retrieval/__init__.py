"""Text<->image retrieval recall@k per caption set and language: `metric` (ranks and recall in bounded
memory), `rows` (a model x caption set), `stage` (`babelforge eval_retrieval`), `task` (its spec)."""

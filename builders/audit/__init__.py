"""The audit: per-language checks of the labels, the report, review sheets and the changelog."""

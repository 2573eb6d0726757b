"""Loopback stand-ins of the services and files the full profile reads, for its full-size rehearsal."""

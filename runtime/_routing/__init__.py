"""Routing: from a text to an intent, its parameters and the skill that serves it.

The intent table (``config/intents.toml`` and the skills' own declarations), its keyword
prefilter, the router with its cache and the model's suggestion, what to ask when unsure, and
the checks on raw input.
"""

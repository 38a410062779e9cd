"""The lowest layer's helpers: logging, redaction, storage faults, the blog's layout, one loop.

Nothing here imports the rest of skillrt but ``skillrt.exceptions`` and ``skillrt.settings``'s
leaves; everything above may import it.
"""

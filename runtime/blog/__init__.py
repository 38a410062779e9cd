"""The blog: its files under one content root, post locks, posts and their frontmatter, the
full-text index and the entity graph.

What a skill reaches through ``ctx.files`` (``skillrt.blog.files.FileStore``), ``ctx.locks``
(``skillrt.blog.locks.FileLockManager``) and ``ctx.memory`` (``skillrt.blog.memory.BlogMemory``).
"""

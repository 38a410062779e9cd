"""Where tasks are kept: the state backend's protocol and its two implementations.

``embedded/`` keeps checkpoints, history and run locks in SQLite files in the state folder;
``postgres/`` keeps them in a PostgreSQL database shared by several workers. The task code sees
only the protocol (``skillrt._state.protocol``).
"""

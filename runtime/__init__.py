"""skillrt: durable, cancellable, resumable AI tasks."""

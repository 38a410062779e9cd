"""The task life cycle: the state machine, a task, its run, its endings and the inventory."""

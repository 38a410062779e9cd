"""What is kept for people: each session's turns and focus, and the history of tasks."""

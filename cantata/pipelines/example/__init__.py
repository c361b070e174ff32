"""A small pipeline to try Cantata on the embedded model: a screen in code, a quick early
reply, a structured read of the message, and a merged final reply."""

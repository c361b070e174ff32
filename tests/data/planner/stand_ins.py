"""The stand-in function of the planner's test pipelines: planned, never run."""


def function(ctx: object) -> str:
    return "planned, not run"

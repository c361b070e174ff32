"""The kill tests' function agent: a check whose output names the turn and iteration."""

from cantata import FunctionContext


def check(ctx: FunctionContext) -> dict[str, object]:
    return {"turn": ctx.turn, "iteration": ctx.iteration, "read": sorted(ctx.inputs)}

"""Output models of the factory's nine roles.

As in the coaching pipeline, each model is both the decoding constraint a role writes
under and the entry its code checks: strings are bounded so a grammar stays finite on
small models, and what only code may decide (that a request is refused for safety, a
finding blocks, a test passed, a version was deployed) is written by code
(`SkipJsonSchema` fields, or function agents' outputs).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

Need = Literal["reasoning", "code", "tool_use", "chat"]
FieldType = Literal["string", "integer", "number", "boolean", "list of strings"]
CheckKind = Literal["has_field", "equals", "contains", "count_at_least"]
Severity = Literal["blocking", "warning", "note"]
Half = Literal["dev", "heldout"]
Line = Annotated[str, Field(max_length=80)]


def text(limit: int, description: str = "") -> str:
    return Field("", max_length=limit, description=description)  # type: ignore[no-any-return,unused-ignore]


class Task(BaseModel):
    """orchestrator: the request as a task, or the reason it cannot be built."""

    model_config = ConfigDict(extra="ignore")

    feasible: bool = Field(True, description="false when Cantata cannot build it")
    reason: str = text(200, "why it cannot be built (when not feasible)")
    goal: str = text(200, "what the new agent does, in one sentence")
    constraints: list[Line] = Field(default_factory=list, max_length=4)
    plan: list[Line] = Field(default_factory=list, max_length=4)
    reply: SkipJsonSchema[str] = ""  # the early reply, written by code


class Check(BaseModel):
    """One property an output must have."""

    kind: CheckKind
    field: str = Field("", max_length=30)
    value: str = Field("", max_length=60)


# Bounds sized for a small model: six examples must fit in well under a thousand tokens,
# and each is one run of the new agent per iteration (the tester's time).
class Example(BaseModel):
    input: str = Field(min_length=1, max_length=160)
    checks: list[Check] = Field(min_length=1, max_length=2)
    half: SkipJsonSchema[Half] = "dev"  # assigned by code: alternate halves


class Requirements(BaseModel):
    """analyst: what goes in, what comes out, and acceptance examples."""

    input: str = text(120, "what the agent receives")
    output: str = text(120, "what it returns")
    examples: list[Example] = Field(min_length=6, max_length=6)


class OutputField(BaseModel):
    name: str = Field(pattern=r"^[a-z_][a-z0-9_]{0,30}$")
    type: FieldType = "string"
    description: str = Field("", max_length=80)


class Step(BaseModel):
    """One agent of a multi-step design; the last step writes the output."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,20}$")
    instructions: str = Field(max_length=240)


# Every string a role writes is bounded under the embedded grammar's repeat limit (256,
# backends/embedded.py), so the grammar itself ends a reply before max_tokens cuts it.
class Design(BaseModel):
    """architect: the new agent's shape."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{2,30}$")
    instructions: str = Field(max_length=240, description="the role's instructions")
    fields: list[OutputField] = Field(min_length=1, max_length=5)
    needs: Need = "chat"
    tool: bool = Field(False, description="whether a Python tool function is needed")
    tool_purpose: str = text(120)
    steps: list[Step] = Field(default_factory=list, max_length=2)


class Artefact(BaseModel):
    """What Cantata assembles into a pipeline folder (assembly.py): the builder's and the
    fixer's stored output. Neither writes all of it (BuiltArtefact, FixedArtefact)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{2,30}$")
    instructions: str = Field(max_length=240)
    fields: list[OutputField] = Field(min_length=1, max_length=5)
    steps: list[Step] = Field(default_factory=list, max_length=2)
    needs: Need = "chat"
    tool_code: str = Field("", max_length=256, description="Python defining run(value) -> JSON, or empty")
    changes: str = text(160, "fixer: what was changed and why")


# What code derives from the design (name, fields, steps, needs: roles.builder_check) is
# not the builder's to write: its grammar is two strings, small enough for a 135M model.
class BuiltArtefact(Artefact):
    """builder: the instructions and the tool code; code fills the rest from the design."""

    name: SkipJsonSchema[str] = Field("", pattern=r"^[a-z][a-z0-9-]{2,30}$")
    instructions: str = Field(max_length=240, description="the agent's instructions, written to it")
    fields: SkipJsonSchema[list[OutputField]] = Field(default_factory=list, max_length=5)
    steps: SkipJsonSchema[list[Step]] = Field(default_factory=list, max_length=2)
    needs: SkipJsonSchema[Need] = "chat"
    changes: SkipJsonSchema[str] = Field("", max_length=160)


class FixedArtefact(Artefact):
    """fixer: instructions, fields and tool code, patched; name, steps and needs are kept."""

    name: SkipJsonSchema[str] = Field("", pattern=r"^[a-z][a-z0-9-]{2,30}$")
    steps: SkipJsonSchema[list[Step]] = Field(default_factory=list, max_length=2)
    needs: SkipJsonSchema[Need] = "chat"


class Finding(BaseModel):
    severity: Severity
    where: str = Field("", max_length=40)
    problem: str = Field(max_length=160)


class Review(BaseModel):
    """critic: the model's review plus the static checks' findings (code)."""

    findings: list[Finding] = Field(default_factory=list, max_length=3)
    static: SkipJsonSchema[list[Finding]] = []
    blocking: SkipJsonSchema[bool] = False


class TestResult(BaseModel):
    id: int
    half: Half
    passed: bool
    reason: str = ""


class TestReport(BaseModel):
    """tester (code): the examples run on the new agent. Held-out failures carry no detail:
    the fixer, who reads this, must not learn from them."""

    dev_passed: int = 0
    dev_total: int = 0
    heldout_passed: int = 0
    heldout_total: int = 0
    dev_failures: list[TestResult] = []
    heldout_failed_ids: list[int] = []
    error: str = ""

    @property
    def all_passed(self) -> bool:
        return (
            not self.error
            and self.dev_total + self.heldout_total > 0
            and self.dev_passed == self.dev_total
            and self.heldout_passed == self.heldout_total
        )


class Card(BaseModel):
    """documenter: the model's summary; code adds the facts (fields, tests, cost)."""

    summary: str = Field(max_length=240)
    limits: list[Line] = Field(default_factory=list, max_length=3)
    card: SkipJsonSchema[str] = ""


class Deployment(BaseModel):
    """deployer (code): deployed or not, and why."""

    deployed: bool
    name: str = ""
    version: int | None = None
    forced: bool = False
    reason: str = ""
    failing_tests: list[str] = []
    blocking: list[str] = []  # the critic's blocking findings (its static checks)
    rules: list[str] = []  # the deployer's own rules that held it back (the tests' quality)
    draft: str = ""  # the folder of the agent that was not deployed, to read, run or fix
    reply: str = ""

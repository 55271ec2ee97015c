"""Admin rules for MCP calls: the policy file's format, who a rule applies to, and the verdicts.

Pure (no Galaxy imports): ``load_policy`` parses and validates the YAML file, naming the line
and field of any mistake (a name that is neither a served tool nor a class among them); a tool
is known by its row of facts (``core.tool_facts``); ``Policy`` answers, for a caller (``Caller``: email, admin, roles,
groups), which MCP tools it may call, which Galaxy tools it may run, how many jobs one call may
create, its rate limits (``RateLimiter``, in this process's memory) and which result fields are
removed. The format is fixed in doc/admin-guide.md; mcp.policy applies it to every tool call.
"""

import fnmatch
import threading
import time
from collections import deque
from collections.abc import (
    Collection,
    Iterable,
    Mapping,
)
from dataclasses import (
    dataclass,
    field,
)

import yaml

from galaxy_mcp_analysis.core.tool_facts import (
    BUILT_IN_TOOLSETS,
    CLASSES,
    ToolFacts,
)


def built_in_toolset(name: str, facts: Mapping[str, ToolFacts]) -> tuple[str, ...] | None:
    """The members of a built-in tool set (``core``): the tools whose facts name it (``ToolFacts.toolsets``)."""
    if name not in BUILT_IN_TOOLSETS:
        return None
    return tuple(tool for tool, row in facts.items() if name in row.toolsets)

_WHO_WORDS = ("everyone", "admins", "non_admins")
_WHO_KEYS = ("users", "roles", "groups")
_MCP_TOOL_FIELDS = ("deny_mcp_tools", "allow_mcp_tools", "confirm_mcp_tools")
_LIST_FIELDS = (*_MCP_TOOL_FIELDS, "allow_galaxy_tools", "deny_galaxy_tools")
_LIMIT_FIELDS = ("max_jobs_per_call", "calls_per_minute", "invocations_per_hour")
_RULE_FIELDS = ("name", "who", "reason", *_LIST_FIELDS, *_LIMIT_FIELDS, "mask_fields")


class PolicyError(ValueError):
    """The policy file is not valid; the message names its line and field."""


@dataclass(frozen=True)
class Caller:
    email: str | None
    is_admin: bool = False
    roles: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Rule:
    name: str
    who: str | dict[str, tuple[str, ...]]
    reason: str = ""
    deny_mcp_tools: tuple[str, ...] = ()
    allow_mcp_tools: tuple[str, ...] | None = None
    allow_galaxy_tools: tuple[str, ...] | None = None
    deny_galaxy_tools: tuple[str, ...] = ()
    max_jobs_per_call: int | None = None
    calls_per_minute: int | None = None
    invocations_per_hour: int | None = None
    mask_fields: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: MCP tools or classes whose calls ask the person first (core.consent; mcp.consent asks).
    confirm_mcp_tools: tuple[str, ...] = ()

    def applies_to(self, caller: Caller) -> bool:
        if self.who == "everyone":
            return True
        if self.who == "admins":
            return caller.is_admin
        if self.who == "non_admins":
            return not caller.is_admin
        assert isinstance(self.who, dict)
        if caller.email and caller.email.lower() in {email.lower() for email in self.who.get("users", ())}:
            return True
        return bool(caller.roles & set(self.who.get("roles", ()))) or bool(
            caller.groups & set(self.who.get("groups", ()))
        )


@dataclass(frozen=True)
class Refusal:
    """Why a call is refused: FORBIDDEN, or RATE_LIMITED with the seconds to wait."""

    rule: str
    reason: str
    retry_after_seconds: int | None = None

    @property
    def rate_limited(self) -> bool:
        return self.retry_after_seconds is not None


def _matching(tool: ToolFacts, arguments, entries: Iterable[str]) -> str | None:
    """The first entry (a tool name or a class of ``tool.classes``) that names this call of ``tool``."""
    classes = tool.classes(arguments)
    return next((entry for entry in entries if entry == tool.name or entry in classes), None)


@dataclass(frozen=True)
class GalaxyTool:
    """A Galaxy tool as run: its id (a ToolShed tool's guid names one version) and its short id (the id in
    its XML, the same for every version); a rule's pattern matches either."""

    id: str
    section: str | None = None
    short_id: str | None = None

    def matches(self, entries: Iterable[str]) -> str | None:
        names = [self.id] + ([self.short_id] if self.short_id and self.short_id != self.id else [])
        for entry in entries:
            if entry.startswith("section:"):
                if self.section is not None and entry[len("section:"):] == self.section:
                    return entry
            elif any(fnmatch.fnmatchcase(name, entry) for name in names):
                return entry
        return None


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...] = ()
    toolsets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def toolset(self, name: str, facts: Mapping[str, ToolFacts]) -> tuple[str, ...] | None:
        """A tool set's members: a built-in one's from the tools' facts, else the policy file's."""
        built_in = built_in_toolset(name, facts)
        return built_in if built_in is not None else self.toolsets.get(name)

    def applying(self, caller: Caller) -> list[Rule]:
        return [rule for rule in self.rules if rule.applies_to(caller)]

    def check_tool(self, caller: Caller, tool: ToolFacts, arguments: dict | None = None) -> Refusal | None:
        """A call of ``tool`` with ``arguments``, or (None) the tool as tools/list shows it."""
        rules = self.applying(caller)
        for rule in rules:  # a deny anywhere wins
            entry = _matching(tool, arguments, rule.deny_mcp_tools)
            if entry:
                return Refusal(rule.name, _reason(rule, f"{tool.name} is denied ({entry})"))
        allowing = [rule for rule in rules if rule.allow_mcp_tools is not None]
        if allowing and not any(_matching(tool, arguments, rule.allow_mcp_tools) for rule in allowing):
            return Refusal(allowing[0].name, _reason(allowing[0], f"{tool.name} is not among the allowed MCP tools"))
        return None

    def confirmation(self, caller: Caller, tool: ToolFacts, arguments: dict | None) -> tuple[Rule, str] | None:
        """The first of the caller's rules whose ``confirm_mcp_tools`` names this call, with the entry naming it."""
        for rule in self.applying(caller):
            entry = _matching(tool, arguments, rule.confirm_mcp_tools)
            if entry:
                return rule, entry
        return None

    def asks_consent(self) -> bool:
        """Whether any rule asks the person before a call (else the consent middleware steps aside)."""
        return any(rule.confirm_mcp_tools for rule in self.rules)

    def check_galaxy_tools(self, caller: Caller, galaxy_tools: Iterable[GalaxyTool]) -> Refusal | None:
        rules = self.applying(caller)
        galaxy_tools = list(galaxy_tools)
        for gx_tool in galaxy_tools:
            for rule in rules:
                entry = gx_tool.matches(rule.deny_galaxy_tools)
                if entry:
                    return Refusal(rule.name, _reason(rule, f"Galaxy tool {gx_tool.id} is denied ({entry})"))
            for rule in rules:
                if rule.allow_galaxy_tools is not None and not gx_tool.matches(rule.allow_galaxy_tools):
                    return Refusal(rule.name, _reason(rule, f"Galaxy tool {gx_tool.id} is not among the allowed tools"))
        return None

    def limit(self, caller: Caller, name: str) -> tuple[int, str] | None:
        """The smallest value of a limit among the caller's rules, and the rule that sets it."""
        found = [(getattr(rule, name), rule.name) for rule in self.applying(caller) if getattr(rule, name) is not None]
        return min(found) if found else None

    def check_jobs(self, caller: Caller, jobs_expected: int) -> Refusal | None:
        limit = self.limit(caller, "max_jobs_per_call")
        if limit and jobs_expected > limit[0]:
            rule = self._rule(limit[1])
            what = f"the call would create {jobs_expected} jobs; at most {limit[0]} per call"
            return Refusal(rule.name, _reason(rule, what))
        return None

    def masked_fields(self, caller: Caller, tool_name: str) -> set[str]:
        masked: set[str] = set()
        for rule in self.applying(caller):
            masked.update(rule.mask_fields.get(tool_name, ()))
            masked.update(rule.mask_fields.get("*", ()))
        return masked

    def needs_jobs_count(self, caller: Caller) -> bool:
        return self.limit(caller, "max_jobs_per_call") is not None

    def has_rate_limits(self, caller: Caller) -> bool:
        return any(self.limit(caller, name) is not None for name in ("calls_per_minute", "invocations_per_hour"))

    def needs_galaxy_tools(self, caller: Caller) -> bool:
        return any(rule.allow_galaxy_tools is not None or rule.deny_galaxy_tools for rule in self.applying(caller))

    def _rule(self, name: str) -> Rule:
        return next(rule for rule in self.rules if rule.name == name)


def _reason(rule: Rule, what: str) -> str:
    return f"{what}. {rule.reason}".strip() if rule.reason else f"{what}."


class RateLimiter:
    """Calls per minute and invocations per hour per user, in this process's memory.

    ``judge`` is the counting itself, over the windows a ``stamps`` function hands it; a subclass
    may keep those windows elsewhere (mcp.rate_limits keeps them in files every process shares).
    """

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._lock = threading.Lock()
        self._calls: dict[tuple[str, str], deque] = {}

    def check(self, policy: Policy, caller: Caller, user_key: str, tool: ToolFacts) -> Refusal | None:
        with self._lock:
            return self.judge(policy, caller, tool,
                              lambda limit_name: self._calls.setdefault((user_key, limit_name), deque()))

    def judge(self, policy: Policy, caller: Caller, tool: ToolFacts, stamps_of) -> Refusal | None:
        """Refuse the call if a window is full, else count it in every window it falls under."""
        windows = [("calls_per_minute", 60.0, True)]
        windows.append(("invocations_per_hour", 3600.0, tool.invokes_workflows))
        now = self.clock()
        counted = []
        for limit_name, window, counts in windows:
            limit = policy.limit(caller, limit_name)
            if not (limit and counts):
                continue
            stamps = stamps_of(limit_name)
            while stamps and stamps[0] <= now - window:
                stamps.popleft()
            if len(stamps) >= limit[0]:
                wait = max(1, int(stamps[0] + window - now + 0.999))
                rule = policy._rule(limit[1])
                what = f"at most {limit[0]} {limit_name.replace('_', ' ')}"
                return Refusal(rule.name, _reason(rule, what), retry_after_seconds=wait)
            counted.append(stamps)
        for stamps in counted:  # a refused call is not counted
            stamps.append(now)
        return None


# --- parsing ---------------------------------------------------------------------------------------

def load_policy(path: str, tools: Collection[str]) -> Policy:
    """The policy file at ``path``; ``tools``: the names of the served MCP tools (a rule may name no other)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise PolicyError(f"policy file {path}: cannot be read ({error.strerror})") from None
    return parse_policy(text, tools, source=path)


def parse_policy(text: str, tools: Collection[str], source: str = "policy") -> Policy:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise PolicyError(f"{source}{line}: not valid YAML ({getattr(error, 'problem', error)})") from None
    if root is None:
        return Policy()
    at = _Where(source, frozenset(tools))
    top = at.mapping(root, "the file", ("toolsets", "rules"))
    toolsets = {}
    if "toolsets" in top:
        for name_node, value in at.mapping(top["toolsets"], "toolsets", None).items():
            if name_node in BUILT_IN_TOOLSETS:
                raise at.error(top["toolsets"], f"toolsets.{name_node}",
                               f"{name_node} is built in and cannot be redefined")
            toolsets[name_node] = at.tool_names(value, f"toolsets.{name_node}", ())
    rules = []
    if "rules" in top:
        node = top["rules"]
        if not isinstance(node, yaml.SequenceNode):
            raise at.error(node, "rules", "must be a list of rules")
        for index, rule_node in enumerate(node.value):
            rules.append(at.rule(rule_node, f"rules[{index}]"))
    names = [rule.name for rule in rules]
    duplicate = next((name for name in names if names.count(name) > 1), None)
    if duplicate:
        raise PolicyError(f"{source}: rules: the name {duplicate!r} is used twice")
    return Policy(rules=tuple(rules), toolsets=toolsets)


class _Where:
    def __init__(self, source: str, tools: frozenset[str]):
        self.source = source
        self.tools = tools

    def error(self, node, where: str, problem: str) -> PolicyError:
        return PolicyError(f"{self.source} line {node.start_mark.line + 1}: {where}: {problem}")

    def mapping(self, node, where: str, allowed) -> dict:
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, where, "must be a mapping")
        result = {}
        for key, value in node.value:
            name = self.scalar(key, where)
            if allowed is not None and name not in allowed:
                raise self.error(key, f"{where}.{name}" if where != "the file" else name,
                                 f"unknown key; expected one of {', '.join(allowed)}")
            result[name] = value
        return result

    def scalar(self, node, where: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.value == "":
            raise self.error(node, where, "must be a non-empty text")
        return node.value

    def strings(self, node, where: str) -> tuple[str, ...]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, where, "must be a list")
        return tuple(self.scalar(item, where) for item in node.value)

    def tool_names(self, node, where: str, classes: tuple[str, ...]) -> tuple[str, ...]:
        """A list of served MCP tool names (or ``classes``): a misspelt name would deny or allow nothing."""
        names = self.strings(node, where)
        for item, name in zip(node.value, names):
            if name not in self.tools and name not in classes:
                also = f" or a class ({', '.join(classes)})" if classes else ""
                raise self.error(item, where, f"unknown MCP tool {name!r}; name a tool this server serves{also}")
        return names

    def masks(self, node, where: str) -> dict[str, tuple[str, ...]]:
        masks = self.mapping(node, where, None)
        for key, _ in node.value:
            if key.value not in self.tools and key.value != "*":
                raise self.error(key, where, f"unknown MCP tool {key.value!r}; name a tool this server serves or \"*\"")
        return {tool: self.strings(value, f"{where}.{tool}") for tool, value in masks.items()}

    def integer(self, node, where: str) -> int:
        text = self.scalar(node, where)
        if not text.isdigit() or int(text) < 1:
            raise self.error(node, where, f"must be a whole number of at least 1, not {text!r}")
        return int(text)

    def who(self, node, where: str):
        if isinstance(node, yaml.ScalarNode):
            if node.value not in _WHO_WORDS:
                expected = f"must be one of {', '.join(_WHO_WORDS)} or a mapping of {', '.join(_WHO_KEYS)}"
                raise self.error(node, where, expected)
            return node.value
        return {key: self.strings(value, f"{where}.{key}")
                for key, value in self.mapping(node, where, _WHO_KEYS).items()}

    def rule(self, node, where: str) -> Rule:
        fields_ = self.mapping(node, where, _RULE_FIELDS)
        for required in ("name", "who"):
            if required not in fields_:
                raise self.error(node, f"{where}.{required}", "is required")
        values: dict = {"name": self.scalar(fields_["name"], f"{where}.name"),
                        "who": self.who(fields_["who"], f"{where}.who")}
        if "reason" in fields_:
            values["reason"] = self.scalar(fields_["reason"], f"{where}.reason")
        for name in _LIST_FIELDS:
            if name in fields_ and name in _MCP_TOOL_FIELDS:
                values[name] = self.tool_names(fields_[name], f"{where}.{name}", CLASSES)
            elif name in fields_:
                values[name] = self.strings(fields_[name], f"{where}.{name}")
        for name in _LIMIT_FIELDS:
            if name in fields_:
                values[name] = self.integer(fields_[name], f"{where}.{name}")
        if "mask_fields" in fields_:
            values["mask_fields"] = self.masks(fields_["mask_fields"], f"{where}.mask_fields")
        return Rule(**values)

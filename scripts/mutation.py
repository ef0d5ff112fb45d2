"""The checker's teeth, measured (issue 38): cosmic-ray's mutants of the engine's rule
modules, each judged by the bounded check (``scripts/mutation.sh`` runs this).

Each mutant is one small change cosmic-ray makes to one module (a comparison turned
round, a constant changed, a condition negated, a loop skipped ...); it is *killed* when
the bounded check fails with it in place, ``charleston-fsm check --bounded --fail-fast``
(the bounded check's verdict, stopped at its first failure: docs/mutation.md). A
mutant the check passes *survives*: a change to the rules the checker cannot see, to be
killed by a new property or explained as equivalent (docs/mutation.md lists each).

A mutant is judged only by the rulesets whose check runs the line it changed: the
baseline (the unmutated check, which must pass) runs each ruleset's bounded check once
under a line tracer, and a mutant of a line no ruleset's check runs is *unreached* (a
survivor: the check runs exactly as without it, and the run is deterministic, its
hash seed fixed); one of a line only ``four_winds`` runs is judged by
``check --bounded --fail-fast --ruleset four_winds`` alone. ``check --bounded`` fails
exactly when one of its rulesets' does (it explores them apart and judges the crossings
per ruleset), so the verdict is the whole bounded check's.

It works on a copy of the committed tree, HEAD (each mutant is written into the copy's module,
which is put back after; the worktree is never touched), one mutant and one process at
a time: the machine is shared. It prints a line per mutant as it goes (outcome, seconds, the tally
and the time left at the pace so far), then the score per module and every survivor
with its line before and after. ``--report FILE`` keeps every mutant's outcome as JSON
lines; ``--rerun FILE`` runs again the survivors a report lists (after a new property).

Needs cosmic-ray (the ``test`` extra).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = "charleston_fsm/engine"
#: the rule modules (issue 38: guards, checks, resolution, charts, rulesets, turns), then
#: the seats' and steps' arithmetic the charts read
RULE_MODULES = (
    f"{ENGINE}/guards.py",
    f"{ENGINE}/checks.py",
    f"{ENGINE}/resolution.py",
    f"{ENGINE}/turns.py",
    f"{ENGINE}/rulesets.py",
    f"{ENGINE}/charts/standard/chart.py",
    f"{ENGINE}/charts/standard/options.py",
    f"{ENGINE}/charts/shapes.py",
    f"{ENGINE}/charts/probe.py",
    f"{ENGINE}/charts/four_winds.py",
    f"{ENGINE}/charts/standard/table.py",
    f"{ENGINE}/steps.py",
    f"{ENGINE}/seats.py",
)
RULESETS = ("nmjl", "house", "four_winds")
#: the kill test: the bounded check, soonest, of one ruleset (``{rulesets}``:
#: ``--ruleset NAME``) or all (``{rulesets}`` empty: every ruleset's first commands are
#: then explored before any ruleset in full); ``{failures}``: where it writes a failure
KILL_TEST = "{bin}/charleston-fsm check --bounded --fail-fast {rulesets} --failures {failures}"
#: the baseline, per ruleset: the bounded check in this process, its engine lines traced
#: (what a mutant must change to be seen at all)
TRACED = """
import json, sys, threading
targets = {path: set() for path in json.loads(sys.argv[1])}
def local(frame, event, arg):
    if event == "line":
        targets[frame.f_code.co_filename].add(frame.f_lineno)
    return local
def traced(frame, event, arg):
    if frame.f_code.co_filename in targets:
        targets[frame.f_code.co_filename].add(frame.f_lineno)
        return local
    return None
sys.settrace(traced)
threading.settrace(traced)
try:
    from charleston_fsm.cli import app
    app(args=sys.argv[3:])
finally:
    sys.settrace(None)
    with open(sys.argv[2], "w") as out:
        json.dump({path: sorted(lines) for path, lines in targets.items()}, out)
"""
#: operators left out: arithmetic the rule modules hardly use (bit shifts, powers ...),
#: decorators (``@enforces`` only marks a rule), exception swaps and variable juggling:
#: noise, not rule defects
EXCLUDED_OPERATORS = (
    r"core/ReplaceBinaryOperator_.*_(Pow|RShift|LShift|BitOr|BitAnd|BitXor|FloorDiv|Div|Mod)",
    r"core/ReplaceBinaryOperator_(Pow|RShift|LShift|BitOr|BitAnd|BitXor|FloorDiv|Div|Mod)_.*",
    r"core/RemoveDecorator",
    r"core/ExceptionReplacer",
    r"core/VariableInserter",
    r"core/VariableReplacer",
)
#: of a comparison's replacements, the few that the others add nothing to (Kaminski,
#: Ammann and Offutt's sufficient set for relational operators, less "always true" and
#: "always false", which AddNot's negated condition stands for): ``==`` to ``!=``, ``<=``,
#: ``>=``; ``<`` to ``<=``, ``!=``; ``is`` to ``is not`` ... The rest turn an identity
#: into an order (a TypeError or a coincidence on seats and strings) or repeat one of these
SUFFICIENT_COMPARISONS = frozenset(
    {
        *("Eq_NotEq", "Eq_LtE", "Eq_GtE", "NotEq_Eq", "NotEq_Lt", "NotEq_Gt"),
        *("Lt_LtE", "Lt_NotEq", "LtE_Lt", "LtE_Eq", "Gt_GtE", "Gt_NotEq", "GtE_Gt", "GtE_Eq"),
        *("Is_IsNot", "IsNot_Is", "In_NotIn", "NotIn_In"),
    }
)
COMPARISON = "core/ReplaceComparisonOperator_"


@dataclass
class Outcome:
    """One mutant and what the kill test made of it."""

    module: str
    line: int
    column: int
    operator: str
    occurrence: int
    definition: str
    #: the last line of the code it changes
    end_line: int = 0
    #: killed (the check failed; a mutant that does not even import too), timeout (the
    #: check did not end in time: killed too), survived, unreached (survived: no
    #: ruleset's check runs its lines) or equivalent (survived, not run: a
    #: ``TYPE_CHECKING`` block made to run)
    verdict: str = ""
    seconds: float = 0.0
    #: the rulesets whose check runs its lines (those it was judged by)
    rulesets: list[str] = field(default_factory=list)
    #: what killed it: the check's first failure (a property and its rules, a crash, an
    #: uncrossed transition)
    failed: str = ""
    before: str = ""
    after: str = ""

    @property
    def killed(self) -> bool:
        return self.verdict in ("killed", "timeout")

    def where(self) -> str:
        short = self.module.removeprefix(ENGINE + "/")
        return f"{short}:{self.line} ({self.definition}) {self.operator.removeprefix('core/')}"


def mutants(modules: Sequence[str], root: Path) -> list[Outcome]:
    """Every mutant cosmic-ray makes of ``modules`` (paths under ``root``), module by
    module in their order, by line, the excluded operators left out."""
    from cosmic_ray.ast import ast_nodes, get_ast_from_path
    from cosmic_ray.ast.ast_query import ASTQuery
    from cosmic_ray.plugins import get_operator, operator_names

    excluded = re.compile("|".join(f"(?:{e})" for e in EXCLUDED_OPERATORS))
    found: list[Outcome] = []
    for module in modules:
        tree = get_ast_from_path(root / module)
        for name in operator_names():
            if excluded.match(name):
                continue
            if (
                name.startswith(COMPARISON)
                and name[len(COMPARISON) :] not in SUFFICIENT_COMPARISONS
            ):
                continue
            operator = get_operator(name)()
            positions = (
                (node, start, end)
                for node in ast_nodes(tree)
                for start, end in operator.mutation_positions(node)
            )
            for occurrence, (node, start, end) in enumerate(positions):
                definition = ASTQuery(node).get_definition_name() or "<module>"
                found.append(
                    Outcome(module, start[0], start[1], name, occurrence, definition, end[0])
                )
    order = list(modules)
    return sorted(
        found, key=lambda m: (order.index(m.module), m.line, m.column, m.operator, m.occurrence)
    )


def mutated_source(source: str, outcome: Outcome) -> str:
    """``source`` with ``outcome``'s mutation applied."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    code = mutate_code(source, get_operator(outcome.operator)(), outcome.occurrence)
    if code is None:
        raise ValueError(f"no mutation {outcome.where()} #{outcome.occurrence}")
    return str(code)


def changed_lines(before: str, after: str) -> tuple[str, str]:
    """The first line that differs, before and after (stripped)."""
    for old, new in zip(before.splitlines(), after.splitlines(), strict=False):
        if old != new:
            return old.strip(), new.strip()
    return "", ""


def copy_tree(root: Path, into: Path) -> None:
    """The committed tree of ``root`` (its HEAD: what the run is a measure of), compiled,
    into ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", "HEAD"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    # each mutant's run then compiles only the module it changed (the kill test runs
    # without writing bytecode)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(into / "charleston_fsm")], check=True
    )


@dataclass
class Judge:
    """How mutants are judged: the copy, the kill test and what each ruleset reaches."""

    work: Path
    scratch: Path
    command: str
    env: dict[str, str]
    #: per ruleset: the baseline's seconds (traced) and the lines it ran, by module
    baseline: dict[str, float] = field(default_factory=dict)
    reached: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    timeout: float = 0.0

    def run(self, argv: list[str], timeout: float) -> tuple[str, float, str]:
        """Run a command in the scratch directory: (``passed``, ``failed`` or
        ``timeout``, seconds, its output)."""
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            env=self.env,
            cwd=self.scratch,  # not the worktree: a failure's files are written here
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a timeout ends the whole process group
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return "timeout", time.perf_counter() - started, ""
        verdict = "passed" if proc.returncode == 0 else "failed"
        return verdict, time.perf_counter() - started, out.decode(errors="replace")

    def trace_baseline(self, modules: Iterable[str], cache: Path | None = None) -> str | None:
        """Each ruleset's bounded check on the unmutated copy, traced: it must pass (or
        every mutant would look killed). Returns why not, or ``None``. ``cache``: a file
        that keeps what it found, for a later run on the same tree (same package files)."""
        tree = _tree_hash(self.work)
        if cache is not None and cache.exists():
            kept = json.loads(cache.read_text())
            if kept["tree"] == tree and set(modules) <= set(kept["modules"]):
                self.baseline = kept["baseline"]
                self.reached = {
                    r: {m: set(lines) for m, lines in by_module.items()}
                    for r, by_module in kept["reached"].items()
                }
                print(f"baseline: as traced before ({cache}, the same tree)", flush=True)
                return None
        modules = sorted(set(modules) | set(RULE_MODULES))
        paths = {str(self.work / m): m for m in modules}
        for ruleset in RULESETS:
            lines = self.scratch / f"reached-{ruleset}.json"
            argv = [sys.executable, "-c", TRACED, json.dumps(list(paths)), str(lines)]
            argv += ["check", "--bounded", "--ruleset", ruleset, "--jobs", "1"]
            argv += ["--failures", str(self.scratch)]
            result, seconds, out = self.run(argv, 3600)
            if result != "passed":
                return f"the baseline of {ruleset} {result} ({seconds:.0f} s):\n{out}"
            found = json.loads(lines.read_text())
            self.reached[ruleset] = {paths[p]: set(found[p]) for p in found}
            self.baseline[ruleset] = seconds
            print(f"baseline {ruleset}: passed in {seconds:.1f} s (traced)", flush=True)
        if cache is not None:
            reached = {r: {m: sorted(v) for m, v in b.items()} for r, b in self.reached.items()}
            kept = {"tree": tree, "modules": modules, "baseline": self.baseline}
            cache.write_text(json.dumps(kept | {"reached": reached}))
        return None

    def judge(self, outcome: Outcome) -> None:
        """Apply ``outcome``'s mutant in the copy, run the kill test of each ruleset whose
        check runs its lines (the fastest first, up to the first that fails), put the
        module back."""
        lines = set(range(outcome.line, max(outcome.line, outcome.end_line) + 1))
        outcome.rulesets = [
            r
            for r in sorted(RULESETS, key=lambda r: self.baseline[r])
            if lines & self.reached[r].get(outcome.module, set())
        ]
        path = self.work / outcome.module
        original = path.read_text()
        mutated = mutated_source(original, outcome)
        outcome.before, outcome.after = changed_lines(original, mutated)
        if not outcome.rulesets:
            outcome.verdict = "unreached"
            return
        if outcome.before.startswith("if TYPE_CHECKING:"):
            # imports and stubs for the type checker, made at run time: nothing the check
            # can see (docs/mutation.md: both were run once, and survived)
            outcome.verdict = "equivalent"
            return
        outcome.verdict, outcome.seconds = "survived", 0.0
        # a mutant every ruleset's check runs: one run of them all (their first commands
        # first); else one ruleset after another
        every = len(outcome.rulesets) == len(RULESETS)
        try:
            path.write_text(mutated)
            for ruleset in [""] if every else outcome.rulesets:
                argv = self.command.format(
                    bin=Path(sys.executable).parent,
                    rulesets=f"--ruleset {ruleset}" if ruleset else "",
                    failures=self.scratch,
                ).split()
                spent = sum(self.baseline.values()) if every else self.baseline[ruleset]
                timeout = self.timeout or max(60.0, 2 * spent)
                result, seconds, out = self.run(argv, timeout)
                outcome.seconds += seconds
                if result != "passed":
                    outcome.failed = _first_failure(out)
                    outcome.verdict = "killed" if result == "failed" else "timeout"
                    break
        finally:
            path.write_text(original)


def _first_failure(out: str) -> str:
    """The check's first failure in its output: the line naming the property and its
    rules, an uncrossed transition, or the exception of a crash."""
    lines = [line.strip() for line in out.splitlines()]
    for line in lines:
        if re.match(r"[a-z_]+ \(.*\): ", line) or line.startswith("uncrossed"):
            return line[:200]
    errors = [line for line in lines if re.match(r"\w+(Error|Exception|Iteration)\b", line)]
    return errors[-1][:200] if errors else "the check exited non-zero"


def _tree_hash(work: Path) -> str:
    """What the package's files hold, in one digest."""
    digest = hashlib.sha256()
    for path in sorted((work / "charleston_fsm").rglob("*.py")):
        digest.update(str(path.relative_to(work)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    if minutes >= 60:
        return f"{minutes // 60}:{minutes % 60:02}:{secs:02}"
    return f"{minutes}:{secs:02}"


def score(outcomes: list[Outcome]) -> str:
    killed = sum(o.killed for o in outcomes)
    total = len(outcomes)
    return f"{killed}/{total} killed ({100 * killed / max(total, 1):.0f} %)"


def summary(outcomes: list[Outcome]) -> list[str]:
    """The score per module and in all, then every survivor."""
    lines = [
        "",
        "module                  mutants  killed  survived  (unreached)  timeout  seconds",
    ]
    by_module: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_module.setdefault(o.module, []).append(o)
    for module, group in [*by_module.items(), ("all", outcomes)]:
        lines.append(
            f"{module.removeprefix(ENGINE + '/'):22}  {len(group):7}  "
            f"{sum(o.killed for o in group):6}  {sum(not o.killed for o in group):8}  "
            f"{sum(o.verdict == 'unreached' for o in group):11}  "
            f"{sum(o.verdict == 'timeout' for o in group):7}  "
            f"{sum(o.seconds for o in group):7.0f}"
        )
    lines.append(f"mutation score: {score(outcomes)}")
    survivors = [o for o in outcomes if not o.killed]
    if survivors:
        lines.append("surviving mutants (docs/mutation.md explains or kills each):")
        for o in survivors:
            how = o.verdict if o.verdict != "survived" else ", ".join(o.rulesets)
            lines.append(f"  {o.where()} #{o.occurrence} [{how}]: {o.before}  ->  {o.after}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: the rule modules)")
    parser.add_argument(
        "--test",
        default=KILL_TEST,
        help="the kill test of one ruleset (default: %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=0,
        help="seconds a mutant's test of one ruleset may run (default: twice its baseline's)",
    )
    parser.add_argument("--report", type=Path, help="write every outcome here (JSON lines)")
    parser.add_argument("--rerun", type=Path, help="run again the survivors of this report")
    parser.add_argument("--limit", type=int, default=0, help="only the first N mutants")
    parser.add_argument(
        "--from-line",
        type=int,
        default=0,
        help="only the mutants at this line or after (a sitting stopped there, resumed)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="keep the traced baseline in this file, and use it when the tree is the same",
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="charleston-mutation.") as tmp:
        work, scratch = Path(tmp).resolve() / "tree", Path(tmp).resolve() / "scratch"
        work.mkdir()
        scratch.mkdir()
        copy_tree(ROOT, work)
        if args.rerun:
            rows = [json.loads(line) for line in args.rerun.read_text().splitlines() if line]
            todo = [
                Outcome(**{**r, "verdict": "", "seconds": 0.0, "rulesets": [], "failed": ""})
                for r in rows
                if r["verdict"] in ("survived", "unreached", "equivalent")
            ]
        else:
            todo = mutants(args.modules or RULE_MODULES, work)
        todo = [o for o in todo if o.line >= args.from_line]
        if args.limit:
            todo = todo[: args.limit]
        # the same exploration order in every run (sets of strings iterate by their hash)
        env = dict(os.environ, PYTHONPATH=str(work), PYTHONDONTWRITEBYTECODE="1")
        env |= {"PYTHONHASHSEED": "0"}
        env.pop("PYTHONSAFEPATH", None)
        judge = Judge(work, scratch, args.test, env, timeout=args.timeout)
        where = subprocess.run(
            [sys.executable, "-c", "import charleston_fsm; print(charleston_fsm.__file__)"],
            env=env,
            cwd=scratch,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not where.startswith(str(work)):
            print(f"the copy is not what runs ({where}): mutants would not count", file=sys.stderr)
            return 2
        modules = sorted({o.module for o in todo})
        print(f"{len(todo)} mutants of {len(modules)} module(s)", flush=True)
        why = judge.trace_baseline(modules, args.baseline)
        if why is not None:
            print(why, file=sys.stderr)
            return 2
        started = time.perf_counter()
        report = args.report.open("w") if args.report else None
        try:
            for index, outcome in enumerate(todo, start=1):
                judge.judge(outcome)
                if report is not None:
                    report.write(json.dumps(asdict(outcome)) + "\n")
                    report.flush()
                elapsed = time.perf_counter() - started
                left = elapsed / index * (len(todo) - index)
                print(
                    f"[{index:>4}/{len(todo)}] {outcome.verdict:9} {outcome.seconds:6.1f} s  "
                    f"{outcome.where()} #{outcome.occurrence}  |  {score(todo[:index])}, "
                    f"{_clock(elapsed)} elapsed, ~{_clock(left)} left",
                    flush=True,
                )
        finally:
            if report is not None:
                report.close()
    print("\n".join(summary(todo)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

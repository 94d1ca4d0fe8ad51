"""``scripts/verify``: the protocol model with many more examples than CI, or against deliberately broken scripts.

    scripts/verify [--examples N] [--steps N] [--seed N] [--jobs N]
    scripts/verify --mutants [--examples N] [--seed N] [--jobs N] [--only MUTANT ...]

Each job runs its share of the examples against its own redis-server, with the seed printed so a failure can be
replayed (``--seed``). ``--mutants`` copies the ``.lua`` files to a temporary directory, breaks one thing in the copy,
builds the library from that directory (``library.build``, given to ``Store``), and shows the model fails; the tree is
never touched.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from importlib import resources
from pathlib import Path

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.errors import FlakyStrategyDefinition
from hypothesis.stateful import get_state_machine_test

from tests.model import machine
from tests.model.mutants import MUTANTS, Mutant

CHUNK = 250  # sequences per seed within one job
#: Sequences a mutant may take to be caught. Some show only in a rare chain (a frozen printer, a peer's reclaim and
#: print, a late wake): over seeds they took up to 500 sequences; each stops at its first counterexample.
MUTANT_EXAMPLES = 2000


def _settings(examples: int, steps: int, shrink: bool = True) -> settings:
    return settings(
        phases=[Phase.explicit, Phase.generate, Phase.shrink] if shrink else [Phase.explicit, Phase.generate],
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def _explore(
    job: int, examples: int, steps: int, run_seed: int, scripts_dir: Path | None, shrink: bool = True
) -> dict[str, object]:
    """Run ``examples`` sequences on a redis-server of this process's own; what was covered, and the failure if any."""
    logging.getLogger("agent").setLevel(logging.CRITICAL)  # the agents' own warnings are the model's faults
    cpu_before = _cpu_seconds()
    with tempfile.TemporaryDirectory(prefix=f"verify{job}-") as tmp:
        server = machine.model_server(Path(tmp) / "redis")
        server.start()
        world = machine.ModelWorld(server, Path(tmp), scripts_dir)
        machine.WORLD = world
        failure = ""
        unreplayable = 0
        try:
            done = 0
            chunk = 0
            while done < examples and not failure:
                # In chunks, each its own seed: a chunk whose replay diverged (FlakyStrategyDefinition) is reported
                # and the run goes on, rather than one such chunk ending it.
                share = min(CHUNK, examples - done)
                before = world.sequences
                try:
                    test = get_state_machine_test(machine.ProtocolModel, settings=_settings(share, steps, shrink))
                    seed(run_seed * 1000 + chunk)(test)()
                except FlakyStrategyDefinition:
                    unreplayable += 1
                except Exception as exc:  # noqa: BLE001 - any failure of the model is the result, reported whole
                    # Hypothesis adds the shrunk sequence of steps as the exception's notes: the counterexample.
                    # Several distinct failures come as one ExceptionGroup, each with its own shrunk steps.
                    subs = list(getattr(exc, "exceptions", ())) or [exc]
                    notes = "\n".join(
                        f"--- {type(e).__name__}: {e}\n" + "\n".join(getattr(e, "__notes__", ())) for e in subs
                    )
                    failure = f"{type(exc).__name__}: {exc}" + (f"\n{notes}" if notes else "")
                done += max(share, world.sequences - before)
                chunk += 1
        finally:
            machine.WORLD = None
            server.stop()
    return {
        "sequences": world.sequences,
        "steps": world.steps,
        "coverage": dict(world.coverage),
        "failure": failure if world.failures else "",
        "harness_error": "" if world.failures else failure,
        "unreplayable": unreplayable,
        "first_broken": world.failures[0] if world.failures else "",
        "counterexample_steps": world.last_sequence_steps,
        "cpu_seconds": _cpu_seconds() - cpu_before,
    }


def _cpu_seconds() -> float:
    """CPU time of this process and of its children reaped so far (its redis-server, once stopped)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _explore_star(args: tuple[int, int, int, int, Path | None]) -> dict[str, object]:
    return _explore(*args)


def verify(examples: int, steps: int, run_seed: int, jobs: int) -> int:
    print(f"scripts/verify: {examples} sequences of up to {steps} steps, {jobs} job(s), seed {run_seed}")
    started = time.monotonic()
    shares = [examples // jobs + (1 if i < examples % jobs else 0) for i in range(jobs)]
    work = [(i, share, steps, run_seed + i, None) for i, share in enumerate(shares)]
    if jobs == 1:
        results = [_explore_star(work[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            results = pool.map(_explore_star, work)
    seconds = time.monotonic() - started
    coverage: Counter[str] = Counter()
    for result in results:
        coverage.update(result["coverage"])  # type: ignore[arg-type]
    sequences = sum(int(r["sequences"]) for r in results)  # type: ignore[call-overload]
    total_steps = sum(int(r["steps"]) for r in results)  # type: ignore[call-overload]
    cpu = sum(float(r["cpu_seconds"]) for r in results)  # type: ignore[arg-type]
    print(
        f"{sequences} sequences, {total_steps} steps in {seconds:.0f} s ({sequences / seconds:.1f} a second); "
        f"{cpu:.0f} CPU seconds with the redis-servers ({sequences / max(cpu, 1e-9):.1f} sequences a CPU second)"
    )
    print("rules covered:")
    for rule, count in sorted(coverage.items()):
        print(f"  {count:8d}  {rule}")
    failed = [r for r in results if r["failure"] or r["harness_error"]]
    unreplayable = sum(int(r["unreplayable"]) for r in results)  # type: ignore[call-overload]
    if unreplayable:
        print(f"{unreplayable} chunk(s) stopped early: a replay diverged (the model depends on the run's pace there)")
    for i, result in enumerate(results):
        if result["failure"]:
            print(f"job {i} (seed {run_seed + i}) FAILED: {result['first_broken']}")
            print(f"  {str(result['failure'])[-12000:]}")
        elif result["harness_error"]:
            print(f"job {i} (seed {run_seed + i}) the model itself failed: {result['harness_error']}")
    if not failed:
        print("every invariant held after every step")
    return 1 if failed else 0


def copy_scripts(into: Path) -> Path:
    """The package's ``.lua`` files, copied (the loader reads them from there)."""
    source = resources.files("protocol")
    for entry in source.iterdir():
        if entry.name.endswith(".lua"):
            (into / entry.name).write_text(entry.read_text(encoding="utf-8"), encoding="utf-8")
    return into


def apply(mutant: Mutant, directory: Path) -> None:
    path = directory / mutant.file
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.find) != 1:
        raise SystemExit(f"mutant {mutant.name}: {mutant.file} no longer holds its target once; update mutants.py")
    path.write_text(text.replace(mutant.find, mutant.replace), encoding="utf-8")


def _run_mutant(args: tuple[Mutant, int, int, int]) -> dict[str, object]:
    """One mutant on a copy of the scripts, in a process of its own."""
    mutant, examples, steps, run_seed = args
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as tmp:
        directory = copy_scripts(Path(tmp))
        apply(mutant, directory)
        # Not shrunk: each replay of a counterexample restarts agents and Redis, and minutes of shrinking per
        # mutant say nothing more than "caught"; the steps shown are those of the first failing sequence.
        return _explore(0, examples, steps, run_seed, directory, shrink=False)


def mutants(examples: int, steps: int, run_seed: int, only: list[str] | None = None, jobs: int = 2) -> int:
    print(f"scripts/verify --mutants: up to {examples} sequences each, seed {run_seed}, {jobs} job(s)")
    unknown = sorted(set(only or ()) - {m.name for m in MUTANTS})
    if unknown:
        raise SystemExit(f"--only: no mutant named {', '.join(unknown)} (see tests/model/mutants.py)")
    chosen = [m for m in MUTANTS if not only or m.name in only]
    for mutant in chosen:  # a target gone from its script is reported before any run
        with tempfile.TemporaryDirectory() as tmp:
            apply(mutant, copy_scripts(Path(tmp)))
    rows = []
    # Each mutant stops at its first counterexample, in a process of ``jobs`` with its own redis-server; the results
    # are printed in the list's order.
    with multiprocessing.get_context("spawn").Pool(max(1, jobs)) as pool:
        work = [(mutant, examples, steps, run_seed) for mutant in chosen]
        for mutant, result in zip(chosen, pool.imap(_run_mutant, work), strict=True):
            caught = bool(result["failure"])
            rows.append((mutant, caught, result))
            print(
                f"  {mutant.name:24s} {'caught' if caught else 'NOT CAUGHT'} after {result['sequences']} sequence(s)"
                + (f" in {result['counterexample_steps']} steps: {str(result['first_broken'])[:90]}" if caught else ""),
                flush=True,
            )
    print()
    print(f"| {'mutant':24s} | what it breaks{' ' * 46} | caught | steps to counterexample |")
    print(f"|{'-' * 26}|{'-' * 62}|--------|-------------------------|")  # steps of the first failing sequence
    for mutant, caught, result in rows:
        steps_text = str(result["counterexample_steps"]) if caught else "-"
        print(f"| {mutant.name:24s} | {mutant.breaks[:60]:60s} | {'yes' if caught else 'NO':6s} | {steps_text:>23s} |")
    missed = [m.name for m, caught, _ in rows if not caught]
    if missed:
        print(f"not caught: {', '.join(missed)}")
    return 1 if missed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, help="sequences to run (default 10000; 2000 per mutant at most)")
    parser.add_argument("--steps", type=int, default=40, help="steps per sequence at most (default 40)")
    parser.add_argument("--seed", type=int, help="replay a run (printed at its start)")
    parser.add_argument("--jobs", type=int, default=2, help="processes, each with its own redis-server (default 2)")
    parser.add_argument("--mutants", action="store_true", help="break a copy of the scripts, one way at a time")
    parser.add_argument("--only", action="append", metavar="MUTANT", help="with --mutants: just this one (repeatable)")
    args = parser.parse_args(argv)
    run_seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    if args.mutants:
        return mutants(args.examples or MUTANT_EXAMPLES, args.steps, run_seed, args.only, max(1, args.jobs))
    return verify(args.examples or 10_000, args.steps, run_seed, max(1, args.jobs))


if __name__ == "__main__":
    sys.exit(main())

"""fpcert.mutate: the mutation score of a Python kernel — the suite of a certify entry run on every fault fpcert can
make around the callable, a closed kernel (docs/mutation.md, "Faults made around a closed kernel"; docs/python.md,
"Mutation score"). Each mutant is judged as `fpcert mutate` judges a registered kernel's: killed for its own fault,
killed by another check only, surviving, or not applicable (with the reason)."""
import json as _json

from . import _fpcert
from .rows import _pkg


class MutationResults:
    """A mutation run (the model of `fpcert mutate --json`): ``.score`` (killed for their own fault / applicable; None when
    no fault applies), ``.mutants`` (dicts: fault, outcome, case, detail), ``.applicable``, ``.killed``, ``.text()``,
    ``.results`` (the fpcert.Results of the run: its writers, and the unmutated kernel's cases)."""

    def __init__(self, results):
        self.results = results
        self.json = results.json
        (self._score,) = self.json["mutation"]

    mutants = property(lambda self: self._score["mutants"])
    applicable = property(lambda self: [m for m in self.mutants if m["outcome"] != "not_applicable"])
    killed = property(lambda self: [m for m in self.mutants if m["outcome"] == "killed"])
    score = property(lambda self: len(self.killed) / len(self.applicable) if self.applicable else None)

    def text(self) -> str:
        return _fpcert.mutation_text(_json.dumps(self.json))

    def __repr__(self):
        s = "no applicable fault" if self.score is None else f"{len(self.killed)}/{len(self.applicable)} ({100 * self.score:.1f} %)"
        return f"<fpcert.MutationResults {self._score['kernel']} on {self.json['suite']}: {s}>"


def mutate(entry, fn, *args, faults=None, all_cases: bool = False, json=None, junit=None, html=None, **declaration) -> MutationResults:
    """The mutation score of ``fn`` under ``entry``'s declaration: ``entry`` is one of fpcert's certify entries for a
    declared kernel (certify_attention, certify_attention_backward, certify_softmax, certify_norm, certify_softmax_backward,
    certify_norm_backward, certify_reduction), called as ``entry(fn, *args, **declaration)``; instead of certifying, its suite runs
    on ``fn`` and on every mutant of it: ``fn`` wrapped by a fault fpcert makes around a closed kernel (its inputs changed
    before the call, its outputs after, or the call made with other arguments: docs/mutation.md). ``faults``: fault ids to
    run (default: every fault of the operation); ``all_cases``: every case on every mutant (default: a mutant stops at its
    first kill). A case the unmutated ``fn`` does not pass judges no mutant. Returns MutationResults; ``json``/``html``
    write the run (`fpcert report` reads it)."""
    _fpcert.set_mutation(True, ",".join(faults or ()), bool(all_cases))
    try:
        res = entry(fn, *args, **declaration)
    finally:
        _fpcert.set_mutation(False, "", False)
    if res.json.get("kind") != "mutation" or len(res.json.get("mutation", ())) != 1:
        raise _pkg().InputError(f"fpcert.mutate: {getattr(entry, '__name__', entry)} did not run a mutation score (not a certify entry "
                                "of a declared kernel)")
    for path, write in ((json, res.write_json), (junit, res.write_junit), (html, res.write_html)):
        if path:
            write(path)
    return MutationResults(res)

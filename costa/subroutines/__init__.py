"""FaSTA*: observations that persist → context features → induction → verification → rule table; fast–slow executor.

Modules: `features` (typed context of a subtask), `rules` (the versioned rule table), `observations` (SQLite tool
runs, traces, learned rules), `inducer` (statistical and LLM proposals), `verifier` (B(Δ) = ΔC% − ΔQ% < 0 on fresh
samples), `executor` (run the best applicable subroutine, check every step, fall back to the local A*).
"""

"""One turn: its records, the step executor, graphs and pointing, the one search, the memo of tool runs, the search
phases and the ending they share.

- `records`: `UserRegion`, `TurnConfig` (α, threshold, mode, reflection, accept), `TurnState`, `FinalStep`,
  `SubtaskResult`, `PhaseResult`, `step_params`, `summarise`.
- `memo`: `RunMemo`, the per-turn memo of tool runs (tool, subtask, parameters, input state).
- `executor`: `StepExecutor`, which runs, times and checks one step for every search of the turn.
- `graphs`: the plan's and one subtask's tool graphs; what the user must point at first.
- `search`: `TurnContext` and `run_search`, the one search every mode, retry and fallback uses.
- `phase`: the whole-plan search phase (lazy or eager A*); fast–slow's is `costa.subroutines.executor`.
- `ending`: `end_turn`, the ending every mode shares (unverified targets, reflection, `SubtaskDone`, `TurnDone`).

`costa.agent.run_turn` puts them together. Nothing heavy is imported here, and this package imports nothing from
`costa.agent`, `costa.reflect.loop` (except the ending) or `costa.subroutines`.
"""

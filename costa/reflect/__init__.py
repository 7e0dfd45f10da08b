"""Multi-expert reflection and cross-turn memory (IMAGAgent, arXiv 2603.29602).

- `protocol`: τ_sr, τ_it, dimensions, rubrics from tool_tables/reflection.yaml; judgement records; the mean.
- `experts`: offline experts (instruction, preservation, perception).
- `vlm_experts`: VLM experts and the LLM aggregator through `costa.llm_client`.
- `loop`: `reflect_turn`, the judge → retry-with-feedback → best-of loop `costa.agent.run_turn` calls.
- `memory`: per-session memory of turns (plan, accepted masks, feedback), reference resolution, planner summary.

Nothing heavy is imported here.
"""

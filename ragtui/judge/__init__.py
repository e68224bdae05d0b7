"""Judging again: an HTTP client for Ollama / OpenAI-compatible judges, prompts, metrics, batches.

No UI imports here; the CLI (`ragtui.commands.judge`) and the TUI call the same async API:

    from ragtui.config import load_config
    from ragtui.judge.runner import judge_run, rejudge_case, noise_reruns

    judge = load_config(store.folder).judge("local")        # or config.adhoc_judge(...)
    result = await judge_run(store, run_id, judge, metrics=["faithfulness"], progress=cb)
    result, case = await rejudge_case(store, run_id, case_id, judge)
    results = await noise_reruns(store, run_id, judge, times=3, progress=cb2)  # cb2(i, p)

`progress` gets a `Progress` snapshot (done, total, scored, parse_failures, errors, cached)
on the event loop after every case; cancelling the task stops the batch cleanly (finished
cases stay in the file, the next call resumes). `JudgeUnreachable` (a RagtuiError) means the
server is not there. `ragtui.judge.noise.rerun_noise` gives the noise floor of a set of runs.
"""

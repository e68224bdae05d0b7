"""RAGAS `EvaluationResult.traces` saved as JSON: per-case faithfulness verdicts become claims.

`result.traces` is a list (one item per case) of {metric: {prompt_name: {input, output}}}.
Pydantic outputs reach JSON either as dicts (`model_dump`) or as reprs (`default=str`), e.g.
"statements=[StatementFaithfulnessAnswer(statement='...', reason='...', verdict=1)]"; both
are read, the reprs with `ast` (parsed, never evaluated).
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path
from typing import Any

from ragtui.core.model import Claim
from ragtui.importers._common import fail, load_json, read_bytes
from ragtui.importers.base import ImportFormatError

_PROMPT_KEY = re.compile(r'"\w+_prompt"\s*:\s*\{\s*"input"')
NLI_PROMPTS = ("n_l_i_statement_prompt", "nli_statement_prompt", "nli_statements_message")


def looks_like_traces(text: str) -> bool:
    return text.lstrip().startswith("[") and bool(_PROMPT_KEY.search(text[:65536]))


def _from_repr(text: str) -> Any:
    """Keyword reprs of pydantic models as dicts and lists: `a=1 b=[M(x='y')]`."""
    # pydantic's repr separates fields by spaces; as call arguments they need commas
    node = ast.parse("_(" + _commas(text) + ")", mode="eval").body
    return _node(node)


def _commas(text: str) -> str:
    # insert a comma before each top-level ` name=` so "a=1 b=2" parses as call keywords
    out, depth, quote, i = [], 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch in "([{":
            depth += 1
            out.append(ch)
        elif ch in ")]}":
            depth -= 1
            out.append(ch)
        elif ch == " " and depth == 0 and re.match(r" [A-Za-z_]\w*=", text[i:]):
            out.append(", ")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _node(node: ast.AST) -> Any:
    if isinstance(node, ast.Call):
        return {kw.arg: _node(kw.value) for kw in node.keywords if kw.arg}
    if isinstance(node, ast.List | ast.Tuple):
        return [_node(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _node(k): _node(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None
        }
    return ast.literal_eval(node)


def _as_data(value: Any) -> Any:
    if isinstance(value, str):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # odd escapes in quoted text are data
                return _from_repr(value)
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
            return {}
    return value


def _trace_question(item: dict[str, Any]) -> str | None:
    for prompts in item.values():
        if not isinstance(prompts, dict):
            continue
        for prompt in prompts.values():
            data = _as_data(prompt.get("input")) if isinstance(prompt, dict) else None
            if isinstance(data, dict) and isinstance(data.get("question"), str):
                return data["question"]
    return None


def _claims_of(item: dict[str, Any]) -> list[Claim]:
    faith = item.get("faithfulness")
    if not isinstance(faith, dict):
        return []
    for name in NLI_PROMPTS:
        prompt = faith.get(name)
        if not isinstance(prompt, dict):
            continue
        output = _as_data(prompt.get("output"))
        statements = output.get("statements") if isinstance(output, dict) else output
        claims = []
        for st in statements if isinstance(statements, list) else []:
            if not isinstance(st, dict) or not isinstance(st.get("statement"), str):
                continue
            verdict = st.get("verdict")
            label = "SUPPORTED" if verdict in (1, True, "1", "yes") else "UNSUPPORTED"
            reason = st.get("reason")
            claims.append(
                Claim(
                    metric="faithfulness",
                    text=st["statement"],
                    verdict=label,
                    reason=reason if isinstance(reason, str) else None,
                )
            )
        return claims
    return []


def load_claims(path: Path, questions: list[str], *, strict: bool) -> dict[int, list[Claim]]:
    """Claims per case index. `strict` (a file the user named): a mismatch is an error;
    otherwise (a guessed sibling file) a file that does not line up is ignored."""
    try:
        data = load_json(path, read_bytes(path))
    except ImportFormatError:
        if strict:
            raise
        return {}  # an unreadable guessed sibling is not the user's file: skip it
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        if strict:
            raise fail(
                path, "traces: expected a JSON list with one object per case (result.traces)"
            )
        return {}
    if len(data) != len(questions):
        if strict:
            raise fail(
                path, f"traces: {len(data)} entries, but the results have {len(questions)} cases"
            )
        return {}
    out: dict[int, list[Claim]] = {}
    for i, item in enumerate(data):
        question = _trace_question(item)
        if question is not None and " ".join(question.split()) != " ".join(questions[i].split()):
            if strict:
                raise fail(
                    path,
                    f"traces: entry {i + 1} is for {question[:50]!r}, not {questions[i][:50]!r}",
                )
            return {}
        claims = _claims_of(item)
        if claims:
            out[i] = claims
    return out

"""The `openai` model: any OpenAI-compatible chat-completions endpoint, checked, with the extractive rule as
its visible fallback.

Modules, lowest first: `exchange` (one endpoint: the HTTP exchange, the context window, structured output,
the server's errors), `prompts` (what each stage is asked), `replies` (what a reply must be), `evidence`
(untrusted text fenced, chosen and cut to fit) and `model` (`OpenAIModel`: each stage's prompt, and what
happens when its answer is no good). The interface it implements is `engine.models`.
"""

from __future__ import annotations

from research_engine.engine.openai.exchange import MODEL_RETRY, configured_endpoint
from research_engine.engine.openai.model import OpenAIModel

__all__ = ["MODEL_RETRY", "OpenAIModel", "configured_endpoint"]

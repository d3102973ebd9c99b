"""The agentic front end (docs/agent.md): any language translated into the Affine Loop IR by
an LLM behind an OpenAI-compatible endpoint, accepted only once the IR's outputs match the
source program's (or its reference's) golden outputs. Replies are parsed and checked by the
C++ core and run by Solar's executor: never executed as Python."""

from .client import Endpoint, EndpointError
from .translate import Translation, TranslationError, translate

__all__ = ["Endpoint", "EndpointError", "Translation", "TranslationError", "translate"]

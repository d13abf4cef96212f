"""Which road a standalone question takes: the data (SQL) or the documents. Decided after the
condense step, on the condensed question, so "Còn ở Đà Nẵng thì sao?" after a question about the
data is read as that question about Đà Nẵng.

Cheap and explainable: one query embedding (shared with retrieval through the query-vector cache)
against exemplars of data questions and of document questions, whether the question names the
schema (table and column names, the notes' marked phrases), whether it asks for a count, a sum, a
ranking or a list, and, for a terse follow-up, the road the previous turn took. The rule itself
(:func:`decide_road`) is a pure function of those signals.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from engines.conversation.router import DEFAULT_EXAMPLES, DOCS
from engines.sql.guard import is_question, request_problem
from engines.text import normalize

SQL = "sql"

#: Data questions: counting, summing, averaging, ranking and listing over business records. Generic
#: on purpose (no table of ours is named), in Vietnamese and English.
SQL_EXEMPLARS: tuple[str, ...] = (
    "Có bao nhiêu khách hàng ở mỗi thành phố?",
    "Tổng số dư tiền gửi theo từng chi nhánh là bao nhiêu?",
    "Chi nhánh nào có tổng dư nợ cho vay cao nhất?",
    "Liệt kê 5 khách hàng có số dư lớn nhất.",
    "Số tiền vay trung bình của mỗi sản phẩm là bao nhiêu?",
    "Đếm số khoản vay quá hạn được mở trong năm nay.",
    "Mỗi chi nhánh có bao nhiêu nhân viên?",
    "Doanh số tháng trước của từng khu vực là bao nhiêu?",
    "Xếp hạng các chi nhánh theo số hợp đồng mới.",
    "Có bao nhiêu đơn hàng được tạo trong quý 3?",
    "How many customers are there in each city?",
    "What is the total deposit balance per branch?",
    "Which branch has the highest outstanding loan amount?",
    "List the top 5 customers by balance.",
    "What is the average loan amount for each product?",
    "Count the overdue loans opened this year.",
    "How many employees work at each branch?",
    "Show monthly sales by region for last year.",
    "Rank the branches by number of new contracts.",
    "What share of orders were cancelled last quarter?",
)

#: Asking for an aggregate, a ranking or a list, whatever it is about.
_CUES = re.compile(
    r"(?iu)\b(?:tổng(?:\s+số|\s+cộng)?|trung\s+bình|bình\s+quân|(?:nhiều|ít|cao|thấp|lớn|nhỏ)(?:\s+\w+){0,3}?\s+nhất|"
    r"xếp\s+hạng|đếm|số\s+lượng|liệt\s+kê|danh\s+sách|top\s*\d+|"
    r"bao\s+nhiêu\s+phần\s+trăm|tỉ\s+lệ|tỷ\s+lệ|xếp\s+theo|sắp\s+xếp|theo\s+thứ\s+tự|(?:từng|mỗi)\s+(?:tháng|quý|năm)|"
    r"how\s+many|total|sum|average|highest|lowest|largest|smallest|most|least|rank(?:ing|ed)?|"
    r"percent(?:age)?|ratio|sorted\s+by|per\s+(?:month|quarter|year)|"
    r"count|list|top)\b")
#: Words between "bao nhiêu" and a term that make it ask for something else: a unit ("bao nhiêu tuổi thì khách
#: hàng …", "bao nhiêu ngày để khách hàng …") or a joint of the sentence.
_NOT_COUNTED = (r"(?:ngày|tuổi|tiền|lần|tháng|năm|tuần|giờ|phút|phần\s+trăm|days?|years?|times?|thì|để|mà|là|được|"
                r"khi|nếu|then|for|before|until)")
#: "bao nhiêu" / "how much" / "number of" count only before a schema term ("bao nhiêu khách hàng", "bao nhiêu
#: đơn bị khách trả", not "bao nhiêu ngày phép"): "số" and "number of" right before it, "bao nhiêu" and "how
#: many" within two words of it.
_COUNT_LEAD = re.compile(r"(?iu)\b(?:(?:(?:có\s+)?bao\s+nhiêu|how\s+(?:much|many))\s+(?:the\s+|các\s+|những\s+)?"
                         r"(?:(?!" + _NOT_COUNTED + r"\b)\w+\s+){0,2}|(?:số|number\s+of)\s+(?:the\s+|các\s+|những\s+)?)$")
#: A schema term naming one record: "đơn hàng số 250", "order #250", "khách hàng mã KH001", "chi nhánh HN01".
_RECORD = re.compile(r"(?u)^\s*(?:(?i:số|mã|id|no\.?|number|#)\s*#?[\w-]*\d[\w-]*|[A-Z]{1,4}-?\d{2,}\b)")
#: Words of a follow-up short enough to lean on the previous turn.
TERSE_WORDS = 7


@dataclass(frozen=True)
class RoadSignals:
    sql_similarity: float = 0.0  # mean cosine of the closest data-question exemplars
    docs_similarity: float = 0.0  # the same for document questions
    schema_terms: tuple[str, ...] = ()  # the schema's words the question names
    values: tuple[str, ...] = ()  # values of the data it names ("Đà Nẵng", "quá hạn")
    cues: tuple[str, ...] = ()  # what it asks for: "tổng", "how many", ...
    terse: bool = False  # a short follow-up (the user's own words)
    previous: str = ""  # the road of the turn before: "sql", "docs" or "" (first turn)
    asks_change: bool = False  # asks to change data or to drop the instructions (refused on the data road)
    asked: bool = False  # phrased as a question ("Quy trình cập nhật địa chỉ thế nào?"), not an order


@dataclass(frozen=True)
class RoadRule:
    """``margin``: how far the data exemplars must lead when the question asks for no aggregate;
    ``cue_slack``: how far they may trail when it does; ``followup_slack``: the same for a terse
    follow-up of a data turn. Cosines of one embedder: set with e5-small on the SQL set's dev split
    (data/eval/sql/dev; docs/sql.md), where document questions naming a table led by at most 0.015."""

    margin: float = 0.02
    cue_slack: float = 0.03
    followup_slack: float = 0.05


@dataclass(frozen=True)
class RoadDecision:
    road: str
    reason: str
    signals: RoadSignals = field(default_factory=RoadSignals)

    def to_dict(self) -> dict[str, Any]:
        return {"road": self.road, "reason": self.reason, **asdict(self.signals)}


def decide_road(s: RoadSignals, rule: RoadRule = RoadRule()) -> tuple[str, str]:
    """(road, reason): the data for a request to change it (an order, or naming the schema: refused
    there), for a question that names the schema and reads like a data question, for a terse follow-up of a
    data turn that the documents do not clearly claim (twice the slack when it names a value of the data:
    "Còn Đà Nẵng?" stays; "Còn quy định nghỉ phép thì sao?" goes to the documents), and for an aggregate asked
    right after a data turn that reads more like a data question ("Chiếm bao nhiêu phần trăm tổng số đơn năm đó?")."""
    lead = s.sql_similarity - s.docs_similarity
    if s.asks_change and (s.schema_terms or not s.asked):  # an order: no other road may answer "done" to it
        return SQL, "asks to change the data (refused there, plainly)"
    if s.terse and s.previous == SQL and (lead > -rule.followup_slack
                                          or (s.values and lead > -2 * rule.followup_slack)):
        return SQL, "a short follow-up of a data question"
    if s.cues and s.previous == SQL and lead > 0:
        return SQL, f"asks for {s.cues[0]!r} after a data question"
    if not s.schema_terms:
        return DOCS, "names nothing in the schema"
    if s.cues and lead > -rule.cue_slack:
        return SQL, f"names the schema and asks for {s.cues[0]!r}"
    if lead >= rule.margin and lead > 0:
        return SQL, "names the schema and reads like a data question"
    return DOCS, "names the schema but reads like a document question"


def find_terms(question: str, terms: Collection[str]) -> tuple[str, ...]:
    """The terms ``question`` names as whole words, longest first (case and Unicode form ignored)."""
    text = normalize(question).lower()
    found = [t for t in sorted(terms, key=len, reverse=True) if re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text)]
    return tuple(found)


def find_cues(question: str, terms: Collection[str]) -> tuple[str, ...]:
    """What the question asks for: an aggregate or ranking word, "bao nhiêu" before a term, or one record
    of a term by its number or code."""
    shown = normalize(question)
    text = shown.lower()
    cues = [m.group(0) for m in _CUES.finditer(text)]
    for term in terms:
        for match in re.finditer(rf"(?<!\w){re.escape(term)}(?!\w)", text):
            lead = _COUNT_LEAD.search(text[: match.start()])
            if lead:
                cues.append(lead.group(0).strip() + " " + term)
            record = _RECORD.match(shown[match.end():])
            if record:
                cues.append(term + " " + record.group(0).strip())
    return tuple(dict.fromkeys(cues))


def swap_value(previous: str, follow_up: str, columns_of: Mapping[str, frozenset[str]]) -> str | None:
    """The previous data question with the value it named replaced by the one the follow-up names,
    when both are values of one column ("... ở Hà Nội?" + "Còn ở Đà Nẵng thì sao?" -> "... ở Đà Nẵng?");
    None when there is no such pair. The condense step's own swap chooses by how well the documents
    support each rewrite, which says nothing about a question on the data."""
    new_values = [v for v in find_terms(follow_up, columns_of) if not find_terms(previous, [v])]
    for old in find_terms(previous, columns_of):
        for new in new_values:
            if columns_of[old] & columns_of[new]:
                shown = re.search(rf"(?<!\w){re.escape(new)}(?!\w)", normalize(follow_up), re.I)
                pattern = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)", re.I)
                return pattern.sub(shown.group(0) if shown else new, normalize(previous), count=1)
    return None


def is_terse(question: str) -> bool:
    return len(re.findall(r"\w+", question)) <= TERSE_WORDS


class RoadRouter:
    """The signals for a question from the embedder, the exemplars and the schema's terms."""

    def __init__(self, embed_model: Any, terms: Collection[str], *, values: Collection[str] = (),
                 rule: RoadRule = RoadRule(),
                 sql_exemplars: Sequence[str] = SQL_EXEMPLARS,
                 docs_exemplars: Sequence[str] = DEFAULT_EXAMPLES[DOCS], top_n: int = 2) -> None:
        self._embed_model = embed_model
        self.terms = frozenset(terms)
        self.values = frozenset(values)
        self.rule = rule
        self._exemplars = {SQL: tuple(sql_exemplars), DOCS: tuple(docs_exemplars)}
        self._top_n = top_n
        self._matrices: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()  # shared by every session of a pipeline

    def _vectors(self) -> dict[str, np.ndarray]:
        """The exemplars embedded on first use (as queries: questions are compared with questions)."""
        with self._lock:
            if self._matrices is None:
                matrices = {}
                for road, texts in self._exemplars.items():
                    vectors = np.asarray([self._embed_model.get_query_embedding(t) for t in texts], dtype=np.float32)
                    matrices[road] = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
                self._matrices = matrices
            return self._matrices

    def similarities(self, query: str) -> dict[str, float]:
        vector = np.asarray(self._embed_model.get_query_embedding(query), dtype=np.float32)
        vector /= np.linalg.norm(vector) or 1.0
        return {road: round(float(np.sort(m @ vector)[::-1][: self._top_n].mean()), 4)
                for road, m in self._vectors().items()}

    def decide(self, query: str, *, question: str = "", previous: str = "") -> RoadDecision:
        """``query``: the standalone question; ``question``: the user's own words (terse or not);
        ``previous``: the road of the turn before."""
        sims = self.similarities(query)
        signals = RoadSignals(sql_similarity=sims[SQL], docs_similarity=sims[DOCS],
                              schema_terms=find_terms(query, self.terms), cues=find_cues(query, self.terms),
                              values=find_terms(f"{query}\n{question}", self.values),
                              terse=is_terse(question or query), previous=previous,
                              asks_change=any(request_problem(t) for t in {query, question} if t),
                              asked=is_question(question or query))
        road, reason = decide_road(signals, self.rule)
        return RoadDecision(road, reason, signals)

    def previous_road(self, earlier: Sequence[tuple[str, str]], depth: int = 2) -> str:
        """The road of the latest of ``earlier`` (question, standalone query) pairs, newest first,
        judged as it was: with the road of the one before it, ``depth`` turns back at most."""
        if not earlier:
            return ""
        question, query = earlier[0]
        before = self.previous_road(earlier[1:], depth - 1) if depth > 1 else ""
        return self.decide(query or question, question=question, previous=before).road

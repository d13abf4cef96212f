"""Clause choice with a reader: the clause it believes answers leads the quote; weight 0 changes nothing."""

from collections.abc import Sequence

from llama_index.core.schema import NodeWithScore, TextNode

from engines.models.fakes import HashEmbedding
from engines.steps.answer import QuoteAnswer
from engines.steps.base import TurnState

PASSAGE = ("Phòng đơn có giá 900.000 đồng/đêm vào ngày thường. Phòng đôi có giá 1.400.000 đồng/đêm vào ngày thường. "
           "Phòng gia đình có giá 2.100.000 đồng/đêm vào ngày thường.")


class FavourReader:
    reads_conversation = True

    def __init__(self, word: str) -> None:
        self.word, self.calls = word, []

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls.append(query)
        return [0.95 if self.word in p else 0.05 for p in passages]


def _state(question: str) -> TurnState:
    node = NodeWithScore(node=TextNode(id_="n1", text=PASSAGE, metadata={"title": "Bảng giá phòng", "doc_id": "d"}),
                         score=1.0)
    return TurnState(question=question, language="vi", query=question, nodes=(node,))


def test_the_clause_the_reader_believes_leads_the_quote():
    question = "Phòng gia đình giá bao nhiêu?"
    reader = FavourReader("2.100.000")
    quoted = QuoteAnswer(HashEmbedding(), reader=reader, reader_weight=1.0).run(_state(question))
    assert "2.100.000" in quoted.chosen[0][0].text
    assert reader.calls and question in reader.calls[0]


def test_weight_zero_leaves_the_quote_as_it_was():
    question = "Phòng gia đình giá bao nhiêu?"
    plain = QuoteAnswer(HashEmbedding()).run(_state(question))
    off = QuoteAnswer(HashEmbedding(), reader=FavourReader("900.000"), reader_weight=0.0).run(_state(question))
    assert [c.text for c, _ in plain.chosen] == [c.text for c, _ in off.chosen]
    favoured = QuoteAnswer(HashEmbedding(), reader=FavourReader("900.000"), reader_weight=1.0).run(_state(question))
    assert "900.000" in favoured.chosen[0][0].text  # the reader moved it: the switch is live

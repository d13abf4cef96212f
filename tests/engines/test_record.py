"""A source names where in its document the answer was read: PDF pages, sections."""

from llama_index.core.schema import NodeWithScore, TextNode

from app.chat import where
from app.service.turns import source_payload
from engines.record import sources_of


def node(doc_id, **meta):
    return NodeWithScore(node=TextNode(text="x", metadata={"doc_id": doc_id, "title": doc_id.upper(), **meta}), score=1.0)


def test_sources_gather_pages_and_sections_of_all_their_chunks_in_order():
    pdf, docx, md = sources_of([node("pdf", page=2, section="Điều 3"), node("docx", section="Điều 2. Lãi suất"),
                                node("pdf", page=1, section="Điều 1"), node("pdf", page=2), node("md")])
    assert (pdf.doc_id, pdf.pages, pdf.sections) == ("pdf", (2, 1), ("Điều 3", "Điều 1"))
    assert docx.pages == () and docx.sections == ("Điều 2. Lãi suất",)
    assert md.pages == () and md.sections == ()
    assert [where(s, "tr.") for s in (pdf, docx, md)] == [" (tr. 2, 1)", " (Điều 2. Lãi suất)", ""]
    assert source_payload(pdf) == {"doc_id": "pdf", "title": "PDF", "pages": [2, 1], "sections": ["Điều 3", "Điều 1"]}
    assert source_payload(md) == {"doc_id": "md", "title": "MD"}  # as before for Markdown documents

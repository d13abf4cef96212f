"""Whole-document replacements read from the documents' own words, and what retrieval does with them.

The documents here are invented for the tests (a water company, a clinic, an IT department); no
eval document or sentence is copied."""

from __future__ import annotations

import pytest

from app.compose import build_models, ingest_path, open_pipeline
from app.config import load_settings
from engines.corpus.replacements import DocumentText, find_replacements, names_in, own_identifiers, replaced_documents
from engines.corpus.store import Manifest
from engines.models.fakes import HashEmbedding, ScriptedLLM
from tests.conftest import engine_over, write_doc

OLD_TARIFF = DocumentText("tariff-2022", "Biểu phí lắp đặt đồng hồ nước năm 2022",
                          "Ban hành kèm theo Quyết định số 14/2022/QĐ-CNS ngày 02/03/2022.\n"
                          "Điều 1. Phí lắp đặt đồng hồ nước là 900.000 đồng/bộ.", "2022-03-02")


def _new(text: str, title: str = "Biểu phí lắp đặt đồng hồ nước năm 2024", doc_id: str = "tariff-2024",
         date: str = "2024-05-01") -> DocumentText:
    return DocumentText(doc_id, title, text, date)


def _pairs(*docs: DocumentText) -> set[tuple[str, str]]:
    return {(r.old, r.new) for r in find_replacements(docs)}


def test_a_document_knows_its_own_number_not_the_ones_it_cites() -> None:
    new = _new("Ban hành kèm theo Quyết định số 31/2024/QĐ-CNS, thay thế Quyết định số 14/2022/QĐ-CNS.")
    assert own_identifiers(OLD_TARIFF) == {"14/2022/QĐ-CNS"}
    assert own_identifiers(new) == {"31/2024/QĐ-CNS"}
    assert own_identifiers(_new("Căn cứ Quyết định số 14/2022/QĐ-CNS về giá nước, Công ty thông báo ...")) == set()


@pytest.mark.parametrize("sentence", [
    "Ban hành kèm theo Quyết định số 31/2024/QĐ-CNS; thay thế Quyết định số 14/2022/QĐ-CNS ngày 02/03/2022.",
    "Quyết định này thay thế Quy định ban hành kèm theo Quyết định số 14/2022/QĐ-CNS.",
    "Kể từ ngày Quyết định này có hiệu lực, Quyết định số 14/2022/QĐ-CNS hết hiệu lực.",
    "Biểu phí này thay thế Biểu phí lắp đặt đồng hồ nước năm 2022.",
    # a date and an issuer between the number and the cue say which document, not what happens to it
    "Quyết định số 14/2022/QĐ-CNS ngày 02 tháng 03 năm 2022 của Giám đốc Công ty Cấp nước Sông Nhuệ hết hiệu lực.",
    # what is replaced is described at length, then named by the decision it was issued with
    "Quyết định này thay thế Biểu phí lắp đặt, di dời và kiểm tra đồng hồ nước sinh hoạt cho hộ gia đình "
    "ban hành kèm theo Quyết định số 14/2022/QĐ-CNS.",
])
def test_a_whole_replacement_in_words_names_the_older_document(sentence: str) -> None:
    rep, = find_replacements([OLD_TARIFF, _new(sentence)])
    assert (rep.old, rep.new, rep.basis) == ("tariff-2022", "tariff-2024", "text")
    assert "14/2022" in rep.evidence or "2022" in rep.evidence


@pytest.mark.parametrize("sentence", [
    "Sửa đổi, bổ sung Điều 1 của Quyết định số 14/2022/QĐ-CNS như sau.",  # an amendment
    "Bãi bỏ khoản 2 Điều 1 Quyết định số 14/2022/QĐ-CNS.",  # one clause
    "Điều 1 Quyết định số 14/2022/QĐ-CNS được bãi bỏ.",  # one article, the other way round
    "Căn cứ Quyết định số 14/2022/QĐ-CNS, phí kiểm định được thu riêng.",  # a citation
    "Đồng hồ thay thế được cấp theo Quyết định số 14/2022/QĐ-CNS.",  # "thay thế" as an adjective
    "Quyết định này thay thế Quyết định số 99/2021/QĐ-CNS.",  # a document outside the corpus
    "Năm 2025, Công ty dự kiến thay thế Quyết định số 14/2022/QĐ-CNS bằng một biểu phí mới.",  # a plan
    "Quyết định số 14/2022/QĐ-CNS sẽ hết hiệu lực khi biểu phí mới được phê duyệt.",  # not yet
    "Phụ lục 3 ban hành kèm theo Quyết định số 14/2022/QĐ-CNS hết hiệu lực.",  # an annex of it
    "Biểu mẫu đăng ký, Phụ lục 1 kèm theo Quyết định số 14/2022/QĐ-CNS, được bãi bỏ.",  # the same, with commas
])
def test_what_is_not_a_whole_replacement(sentence: str) -> None:
    assert _pairs(OLD_TARIFF, _new(sentence)) == set()


def test_an_older_document_never_replaces_a_newer_one() -> None:
    older = _new("Quyết định này thay thế Quyết định số 14/2022/QĐ-CNS.", date="2021-01-01")
    assert _pairs(OLD_TARIFF, older) == set()


def test_a_document_of_the_same_day_is_never_the_one_replaced() -> None:
    """"Ban hành kèm theo Quyết định số 31/2024 ngày 01/05/2024; thay thế Quyết định số 14/2022": the date is
    the new document's own, so a companion document issued that day is not what it replaces."""
    companion = DocumentText("meter-guide-en", "Meter Installation Guide", "How to book an installation.", "2024-05-01")
    new = _new("Ban hành kèm theo Quyết định số 31/2024/QĐ-CNS ngày 01/05/2024; thay thế Quyết định số 14/2022/QĐ-CNS.")
    assert _pairs(OLD_TARIFF, companion, new) == {("tariff-2022", "tariff-2024")}


def test_english_supersedes_by_code_and_versions_in_titles() -> None:
    old = DocumentText("vpn-v1", "Remote Access Standard (version 1.3)", "Standard NET-RA-01. Use the VPN.", "2023-01-01")
    new = DocumentText("vpn-v2", "Remote Access Standard (version 2.0)", "Use the zero-trust client.", "2024-01-01")
    policy_old = DocumentText("pol-old", "Clinic Visitor Policy", "Policy CL-VIS-02 sets visiting hours.", "2022-01-01")
    policy_new = DocumentText("pol-new", "Clinic Visitors and Escorts Policy",
                              "Policy CL-VIS-05. This policy supersedes CL-VIS-02 in full.", "2024-06-01")
    reps = {(r.old, r.new): r.basis for r in find_replacements([old, new, policy_old, policy_new])}
    assert reps == {("vpn-v1", "vpn-v2"): "version", ("pol-old", "pol-new"): "text"}


def test_front_matter_counts_only_for_documents_in_the_corpus() -> None:
    new = DocumentText("tariff-2024", "Biểu phí 2024", "Phí mới.", "2024-01-01", declared=("tariff-2022", "gone"))
    assert _pairs(OLD_TARIFF, new) == {("tariff-2022", "tariff-2024")}
    assert replaced_documents(find_replacements([OLD_TARIFF, new])) == {"tariff-2022"}


def test_ingest_records_replacements_and_retrieval_leaves_the_old_document_out(tmp_path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write_doc(corpus, "meter-fee-2022", "Biểu phí lắp đặt đồng hồ nước năm 2022", "2022-03-02",
              "Ban hành kèm theo Quyết định số 14/2022/QĐ-CNS.\n\nPhí lắp đặt đồng hồ nước là 900.000 đồng/bộ.")
    write_doc(corpus, "meter-fee-2024", "Biểu phí lắp đặt đồng hồ nước năm 2024", "2024-05-01",
              "Ban hành kèm theo Quyết định số 31/2024/QĐ-CNS, thay thế Quyết định số 14/2022/QĐ-CNS.\n\n"
              "Phí lắp đặt đồng hồ nước là 1.100.000 đồng/bộ.")
    write_doc(corpus, "meter-check", "Kiểm định đồng hồ nước", "2023-01-01", "Phí kiểm định đồng hồ nước là 200.000 đồng/lần.")
    settings = load_settings(index_dir=tmp_path / "index", embedding="fake", llm="fake", log_dir=None,
                             refusal_min_vector=-1.0, top_k=5, candidate_k=10, conflicts=False,
                             leave_out_replaced=True)
    ingest_path(settings, corpus, embed_model=HashEmbedding())
    manifest = Manifest.load(tmp_path / "index")
    assert [(r["old"], r["new"], r["basis"]) for r in manifest.replacements] == [("meter-fee-2022", "meter-fee-2024", "text")]

    def docs(**overrides):
        s = settings.model_copy(update=overrides)
        pipeline = open_pipeline(s, build_models(s, llm=ScriptedLLM(), embed_model=HashEmbedding()))
        return {n.node.metadata["doc_id"] for n in pipeline.retriever().retrieve("phí lắp đặt đồng hồ nước")}

    assert docs() == {"meter-fee-2024", "meter-check"}
    assert "meter-fee-2022" in docs(include_inactive=True)
    assert "meter-fee-2022" in docs(leave_out_replaced=False)  # the default: recorded, not left out
    # a turn that names the old document (its year, its number) gets it back; others do not
    pipeline = open_pipeline(settings, build_models(settings, llm=ScriptedLLM(), embed_model=HashEmbedding()))
    session = engine_over(pipeline).session
    named = session.run_until("retrieve", "Phí lắp đặt đồng hồ nước năm 2022 là bao nhiêu?", chat_history=[])
    plain = session.run_until("retrieve", "Phí lắp đặt đồng hồ nước là bao nhiêu?", chat_history=[])
    assert "meter-fee-2022" in {c.doc_id for c in named.candidates}
    assert "meter-fee-2022" not in {c.doc_id for c in plain.candidates}
    # and the turn says what it left out, naming both documents and the sentence that replaced it
    said = session.run_until("assemble", "Phí lắp đặt đồng hồ nước là bao nhiêu?", chat_history=[]).conflicts
    assert said["replaced"][0]["old"] == "meter-fee-2022"
    assert "[meter-fee-2022]" in said["summary"] and "[meter-fee-2024]" in said["summary"] and "14/2022" in said["summary"]

    # an index whose replacements an older reading found is read again on the next ingest
    manifest = Manifest.load(tmp_path / "index")
    manifest.replacements, manifest.replacements_reading = [], 0
    manifest.save(tmp_path / "index")
    ingest_path(settings, corpus, embed_model=HashEmbedding())
    assert [r["old"] for r in Manifest.load(tmp_path / "index").replacements] == ["meter-fee-2022"]

    # the replacing document removed: the old one is current again
    (corpus / "meter-fee-2024.md").unlink()
    ingest_path(settings, corpus, prune=True, embed_model=HashEmbedding())
    assert Manifest.load(tmp_path / "index").replacements == []
    assert "meter-fee-2022" in docs()


def test_a_question_that_names_the_old_version_gets_it() -> None:
    old = DocumentText("rates-v1", "Card Rates Guide v1.4", "Guide FIN-CR-01.", "2022-01-01")
    new = DocumentText("rates-v2", "Card Rates Guide v2.0", "Guide FIN-CR-07.", "2024-01-01")
    rep, = find_replacements([old, new])
    assert set(rep.names) >= {"v1.4", "1.4", "fin-cr-01"}
    assert names_in("what about v1.4?", rep.names) and names_in("Theo FIN-CR-01 thì sao?", rep.names)
    assert not names_in("What are the card rates?", rep.names) and not names_in("clause 21.4 applies", rep.names)


def test_a_draft_for_comments_replaces_nothing_yet() -> None:
    draft = _new("Dự thảo này thay thế Quyết định số 14/2022/QĐ-CNS.",
                 title="Dự thảo Biểu phí lắp đặt đồng hồ nước năm 2024 (lấy ý kiến)")
    assert _pairs(OLD_TARIFF, draft) == set()
    consultation = DocumentText("consult", "Consultation: Visitor Policy", "This proposal supersedes CL-VIS-02.",
                                "2024-01-01")
    policy = DocumentText("pol-old", "Clinic Visitor Policy", "Policy CL-VIS-02 sets visiting hours.", "2022-01-01")
    assert _pairs(policy, consultation) == set()


def test_a_code_shared_by_two_versions_is_named_with_its_version() -> None:
    """"LAB-SAF-03 version 1.0 is withdrawn": the code alone names both versions; with the version, one."""
    v1 = DocumentText("lab-v1", "Laboratory Safety Rules (version 1.0)", "Rules LAB-SAF-03. Wear goggles.", "2021-01-01")
    v2 = DocumentText("lab-v2", "Laboratory Safety Rules (version 2.0)", "Rules LAB-SAF-03. Wear goggles and gloves.",
                      "2023-01-01")
    v3 = DocumentText("lab-v3", "Laboratory and Workshop Safety Rules",
                      "Rules LAB-SAF-04. LAB-SAF-03 version 2.0 is withdrawn and replaced by these rules.", "2025-01-01")
    assert _pairs(v1, v2, v3) == {("lab-v1", "lab-v2"), ("lab-v2", "lab-v3")}


# A clinic's documents whose own text never states their number: other documents name them by date and title.
CLINIC_HOURS = DocumentText("hours-2021", "Quyết định ban hành Quy định khám bệnh ngoài giờ",
                            "Điều 1. Phòng khám nhận bệnh nhân ngoài giờ từ 17h00 đến 20h00.", "2021-01-05")
CLINIC_PRICES = DocumentText("prices-2022", "Quyết định ban hành Bảng giá dịch vụ xét nghiệm",
                             "Điều 2. Bảng giá dịch vụ xét nghiệm áp dụng từ ngày 01/7/2022.", "2022-06-20")


def _clinic(text: str, title: str = "Quyết định ban hành Quy định khám bệnh", date: str = "2024-03-01") -> DocumentText:
    return DocumentText("clinic-new", title, text, date)


@pytest.mark.parametrize("sentence, old", [
    # a number the old document never states, and its date
    ("Quyết định này thay thế Quyết định số 7/QĐ-PKHB ngày 05/01/2021.", "hours-2021"),
    # passive, with the issuer and the old title between the date and the cue
    ("Quyết định số 7/QĐ-PKHB ngày 05 tháng 01 năm 2021 của Giám đốc Phòng khám đa khoa Hòa Bình ban hành "
     "Quy định khám bệnh ngoài giờ hết hiệu lực kể từ ngày Quyết định này có hiệu lực.", "hours-2021"),
    # by its title, as cited (without "Quyết định ban hành"), with who issued it and the year
    ("Kể từ ngày này, Quy định khám bệnh ngoài giờ do Giám đốc ban hành năm 2021 không còn hiệu lực.", "hours-2021"),
    # by the day it took effect
    ("Bảng giá dịch vụ xét nghiệm áp dụng từ ngày 01/7/2022 chấm dứt áp dụng kể từ ngày 01/3/2024.", "prices-2022"),
])
def test_a_document_named_by_its_date_or_its_cited_title(sentence: str, old: str) -> None:
    assert _pairs(CLINIC_HOURS, CLINIC_PRICES, _clinic(sentence)) == {(old, "clinic-new")}


def test_one_cue_for_two_documents_in_a_list() -> None:
    sentence = ("Bãi bỏ Quyết định số 7/QĐ-PKHB ngày 05/01/2021 ban hành Quy định khám bệnh ngoài giờ và "
                "Quyết định số 31/QĐ-PKHB ngày 20/6/2022 ban hành Bảng giá dịch vụ xét nghiệm.")
    assert _pairs(CLINIC_HOURS, CLINIC_PRICES, _clinic(sentence)) == {("hours-2021", "clinic-new"),
                                                                      ("prices-2022", "clinic-new")}


@pytest.mark.parametrize("sentence", [
    # the date is when something ends, not which document: "hết hiệu lực" takes no object
    "Quy định tạm thời về khám bệnh hết hiệu lực kể từ ngày 05/01/2021.",
    # a number the old document's own text contradicts
    "Quyết định này thay thế Quyết định số 45/2022/QĐ-CNS ngày 02/03/2022.",
    # a form with its code, belonging to a procedure, is replaced; the procedure stays
    "Về việc thay thế biểu mẫu KB-02 thuộc Quy định khám bệnh ngoài giờ.",
])
def test_dates_and_forms_that_name_no_whole_document(sentence: str) -> None:
    assert _pairs(CLINIC_HOURS, OLD_TARIFF, _clinic(sentence)) == set()


@pytest.mark.parametrize("old_title, new_title", [
    ("Procedure WH-03 Rev. B – Goods Receipt", "Procedure WH-03 Rev. C – Goods Receipt"),
    ("Quy trình nhập kho QT-NK-01 (lần ban hành thứ 1)", "Quy trình nhập kho QT-NK-01 (lần ban hành thứ 2)"),
    ("Goods Receipt Procedure, Issue 3", "Goods Receipt Procedure, Issue 4"),
])
def test_revisions_in_titles(old_title: str, new_title: str) -> None:
    old = DocumentText("gr-old", old_title, "Receive goods at dock 2.", "2022-01-01")
    new = DocumentText("gr-new", new_title, "Receive goods at dock 3.", "2024-01-01")
    assert {(r.old, r.new, r.basis) for r in find_replacements([old, new])} == {("gr-old", "gr-new", "version")}

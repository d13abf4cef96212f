from app import settings_docs
from app.config import Settings


def test_configuration_page_is_the_one_the_settings_object_renders():
    committed = settings_docs.PAGE.read_text(encoding="utf-8")
    assert committed == settings_docs.render(), (
        "docs/configuration.md differs from app/config.py: run `python -m app.settings_docs --write`")


def test_every_setting_says_what_it_means():
    undocumented = [name for name, field in Settings.model_fields.items() if not field.description]
    assert not undocumented, f"settings with no description (shown in docs/configuration.md): {undocumented}"


def test_page_names_every_setting_once_with_its_default():
    page = settings_docs.render()
    for name in Settings.model_fields:
        assert page.count(f"| `TURNRAG_{name.upper()}` |") == 1
    assert "| `TURNRAG_TOP_K` | `5` |" in page
    assert "| `TURNRAG_STEPS` | `route,condense,sql,retrieve,gate,rerank,assemble,answer,check` |" in page

"""Mining the reader's pools: the product's own retriever on a training set, labelled, mined once."""

import io

from rich.console import Console

from app.mine_reader_pools import mine_pools, set_hash
from engines.reader.examples import load_training_set
from engines.reader.pools import ANSWERS, read_pools
from tests.engines.reader.test_pairs import training_set  # noqa: F401  (fixture)


def test_each_turn_gets_its_fused_pool_labelled_and_is_mined_again_only_when_the_set_changes(
        training_set, tmp_path):  # noqa: F811
    ts = load_training_set(training_set)
    console = Console(file=io.StringIO())
    work = tmp_path / "pools"
    paths = mine_pools([ts], training_set.parent, work, console, pool=5, quiet=True)
    pools = read_pools(paths["zz"])
    assert set(pools) == {("zz-c1", 1), ("zz-c1", 2)}
    first = pools[("zz-c1", 1)]
    assert any(p.label == ANSWERS and "900.000" in p.passage for p in first.passages)
    assert all(p.label != ANSWERS for p in pools[("zz-c1", 2)].passages)  # unanswerable
    assert "answer in pool for 1/1" in console.file.getvalue()

    before = paths["zz"].stat().st_mtime_ns
    assert mine_pools([ts], training_set.parent, work, console, pool=5, quiet=True) == paths
    assert paths["zz"].stat().st_mtime_ns == before  # same files: not mined again
    old_hash = set_hash(training_set)
    (training_set / "corpus" / "zz-rates-2024.md").write_text(
        (training_set / "corpus" / "zz-rates-2024.md").read_text(encoding="utf-8") + "\nGhi chú.\n", encoding="utf-8")
    assert set_hash(training_set) != old_hash

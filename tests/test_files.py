"""Atomic writing: all or nothing, for a file and for a run's output directory; usual permissions."""
import json
import os
import stat

import pytest

from parlai_acute.files import atomic_write, output_dir, write_json, write_jsonl


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "log.jsonl"
    write_jsonl(target, [{"a": 1}])
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write('{"half": ')
            raise RuntimeError("interrupted")
    assert target.read_text() == '{"a": 1}\n'
    assert os.listdir(tmp_path) == ["log.jsonl"]


def test_written_file_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "x.json", {"k": [1, 2]})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "x.json").st_mode) == 0o644
    assert '"k"' in (tmp_path / "x.json").read_text()


def _tree(root):
    """Every file under ``root`` with its content, and every directory."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("existing", [False, True])
def test_a_failed_run_leaves_its_output_directory_as_it_was(tmp_path, existing):
    out = tmp_path / "out"
    if existing:
        write_json(out / "results.json", {"old": 1})
        write_json(out / "mine.json", {"kept": True})
    before = _tree(tmp_path)
    with pytest.raises(RuntimeError):
        with output_dir(out) as staged:
            write_json(staged / "results.json", {"new": 2})
            write_json(staged / "figures" / "a.json", {"new": 3})
            assert (out / "results.json").exists() == existing  # nothing new in place yet
            raise RuntimeError("the report writer failed")
    assert _tree(tmp_path) == before


def test_a_successful_run_replaces_the_files_it_writes_and_leaves_the_others(tmp_path):
    out = tmp_path / "deep" / "out"
    write_json(out / "results.json", {"old": 1})
    write_json(out / "mine.json", {"kept": True})
    with output_dir(out) as staged:
        write_json(staged / "results.json", {"new": 2})
        with output_dir(staged / "analysis") as inner:  # joins the outer run: nothing in place yet
            write_json(inner / "run.json", {"inner": True})
        assert not (out / "analysis").exists() or not (out / "analysis" / "run.json").exists()
        write_json(staged / "results.json", {"new": 3})  # written twice: the last one counts
    assert json.loads((out / "results.json").read_text()) == {"new": 3}
    assert json.loads((out / "mine.json").read_text()) == {"kept": True}
    assert json.loads((out / "analysis" / "run.json").read_text()) == {"inner": True}
    assert sorted(p.name for p in out.rglob("*")) == ["analysis", "mine.json", "results.json", "run.json"]


def test_a_failed_inner_block_fails_the_whole_run(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyError):
        with output_dir(out) as staged:
            write_json(staged / "results.json", {"new": 1})
            with output_dir(staged / "analysis") as inner:
                write_json(inner / "run.json", {})
                raise KeyError("question")
    assert list(tmp_path.iterdir()) == []
